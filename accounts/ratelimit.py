"""Login attempts are limited per client address and per user name (Redis counters)."""

from __future__ import annotations

import redis
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponse

# Per user name from one address: stops guessing one password. Per address: stops spraying many
# user names, but set higher, since many people can share one address (NAT, a proxy).
MAX_FAILURES_PER_USER = 5
MAX_FAILURES_PER_ADDRESS = 30
WINDOW_S = 300


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)


def _keys(request) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "?")
    username = (request.POST.get("username") or "").lower()[:150]
    return [f"iw:login-fail:user:{address}:{username}", f"iw:login-fail:addr:{address}"]


def blocked(request) -> bool:
    try:
        per_user, per_address = _client().mget(_keys(request))
    except redis.RedisError:
        return False  # a Redis outage must not lock everyone out
    return int(per_user or 0) >= MAX_FAILURES_PER_USER or int(per_address or 0) >= MAX_FAILURES_PER_ADDRESS


def record_failure(request) -> None:
    try:
        pipe = _client().pipeline()
        for key in _keys(request):
            pipe.incr(key)
            pipe.expire(key, WINDOW_S)
        pipe.execute()
    except redis.RedisError:
        pass


class RateLimitedLoginView(auth_views.LoginView):
    def post(self, request, *args, **kwargs):
        if blocked(request):
            return HttpResponse(
                "Too many failed logins; try again in a few minutes.", status=429, content_type="text/plain"
            )
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        record_failure(self.request)
        return super().form_invalid(form)
