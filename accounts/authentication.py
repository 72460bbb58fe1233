"""How API callers prove who they are: a hashed Bearer token (tools) or the browser's session.
Nothing is served anonymously."""

from __future__ import annotations

from django.utils import timezone
from rest_framework import authentication
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied

from accounts.models import ApiToken


def user_from_bearer(request):
    """The active user owning the unrevoked token in `Authorization: Bearer <token>`, or None."""
    header = request.headers.get("Authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=ApiToken.hash_key(key.strip()), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """Any Authorization header must carry a valid token: a bad one is a 401 even with a session."""

    def authenticate(self, request):
        if "Authorization" not in request.headers:
            return None
        user = user_from_bearer(request)
        if user is None:
            raise AuthenticationFailed("invalid or revoked API token")
        return user, None

    def authenticate_header(self, request) -> str:
        return "Bearer"


class SessionAuthentication(authentication.SessionAuthentication):
    """The browser's login. Writes keep Django's CSRF protection; only token calls skip it."""

    def enforce_csrf(self, request):
        try:
            super().enforce_csrf(request)
        except PermissionDenied:
            raise PermissionDenied("CSRF check failed") from None
