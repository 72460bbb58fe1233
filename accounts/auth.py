"""Login for pages, session or Bearer token for the API. Nothing is served anonymously."""

from __future__ import annotations

import functools

from django.http import JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from accounts.models import ApiToken


def user_from_bearer(request):
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


def _csrf_failure(request):
    # Session-authenticated writes keep Django's CSRF protection; only token calls skip it.
    reason = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
    return reason


def _nul_problem(request) -> str | None:
    # PostgreSQL text cannot hold NUL: refuse it at the door rather than fail deep in a query.
    for name, values in request.GET.lists():
        if any("\x00" in value for value in values):
            return f"parameter {name!r} contains a NUL character"
    body = request.body if request.method not in ("GET", "HEAD") else b""
    if b"\x00" in body or b"\\u0000" in body:
        return "the body contains a NUL character"
    return None


def api_auth(view):
    """401 JSON unless the request has a logged-in session or a valid, unrevoked Bearer token;
    400 for parameters no query can use (NUL characters)."""

    @csrf_exempt
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if "Authorization" in request.headers:
            user = user_from_bearer(request)
            if user is None:
                return JsonResponse({"error": "invalid or revoked API token"}, status=401)
            request.user = user
        elif request.user.is_authenticated:
            if request.method not in ("GET", "HEAD", "OPTIONS") and _csrf_failure(request) is not None:
                return JsonResponse({"error": "CSRF check failed"}, status=403)
        else:
            return JsonResponse(
                {"error": "authentication required: log in or send Authorization: Bearer <token>"},
                status=401,
            )
        problem = _nul_problem(request)
        if problem:
            return JsonResponse({"error": problem}, status=400)
        return view(request, *args, **kwargs)

    return wrapped
