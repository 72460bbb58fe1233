"""The admin site as a whole: only the admin role may use it. Each app registers its own models."""

from django.contrib import admin

from accounts.roles import can_admin


def _admin_role_only(request) -> bool:
    # Servers, alert rules and users are edited here: that is the admin role, not mere staff.
    return request.user.is_active and can_admin(request.user)


admin.site.has_permission = _admin_role_only
