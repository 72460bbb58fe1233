"""Three roles, as Django groups: viewer (read), operator (annotations, silences,
acknowledgements), admin (servers, rules, users). Superusers hold every role."""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"
_RANK = {VIEWER: 0, OPERATOR: 1, ADMIN: 2}


def role_of(user) -> str | None:
    if not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return ADMIN
    names = set(user.groups.values_list("name", flat=True))
    for role in (ADMIN, OPERATOR, VIEWER):
        if role in names:
            return role
    # A logged-in user without a group can read: the deployment decides who logs in at all.
    return VIEWER


def has_role(user, role: str) -> bool:
    current = role_of(user)
    return current is not None and _RANK[current] >= _RANK[role]


def can_operate(user) -> bool:
    return has_role(user, OPERATOR)


def can_admin(user) -> bool:
    return has_role(user, ADMIN)


def require_role(role: str, *, api: bool = False):
    """403 unless the (already authenticated) user holds at least `role`."""

    def decorator(view):
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, role):
                message = f"this needs the {role} role"
                if api:
                    return JsonResponse({"error": message}, status=403)
                from django.core.exceptions import PermissionDenied

                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return wrapped if api else login_required(wrapped)

    return decorator
