"""The roles (accounts.roles) as DRF permission classes."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from accounts.roles import OPERATOR, has_role, role_of


class IsViewer(BasePermission):
    """Any active, logged-in user reads (a user in no group is a viewer)."""

    def has_permission(self, request, view) -> bool:
        return role_of(request.user) is not None


class OperatorWrites(BasePermission):
    """Viewers read; writing needs the operator role. The view names what is written
    (`written_things`), so the refusal says what the role is needed for."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return role_of(request.user) is not None
        self.message = f"writing {getattr(view, 'written_things', 'this')} needs the {OPERATOR} role"
        return has_role(request.user, OPERATOR)
