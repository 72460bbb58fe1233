"""Nothing is served to anyone not logged in: every URL in the URL configuration is tried."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

PUBLIC = {"login/"}  # the login page itself, and nothing else
MACHINE = ("/api/", "/metrics")  # answered to tools: 401, never a redirect to a login form
_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")


def all_routes(resolver=None, prefix=""):
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from all_routes(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def concrete(route: str) -> str:
    route = route.lstrip("^").rstrip("$").replace("\\Z", "").replace("\\/", "/")
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", "1", route)  # admin's regex routes
    return "/" + _CONVERTER.sub(lambda m: "1" if m.group(1) in ("int", None) else "x", route)


ROUTES = sorted({concrete(r) for r in all_routes() if r not in PUBLIC})


def test_the_url_walk_finds_the_api_and_the_pages():
    assert "/api/v1/servers" in ROUTES and "/" in ROUTES


@pytest.mark.django_db
@pytest.mark.parametrize("url", ROUTES)
@pytest.mark.parametrize("method", ["get", "post"])
def test_anonymous_request_is_refused(client, url, method):
    response = getattr(client, method)(url)
    if url.startswith(MACHINE):
        assert response.status_code == 401, (url, response.status_code)
    else:
        # Pages redirect to the login form; a 404/405 for a route that needs an object is also no leak.
        assert response.status_code in (302, 404, 405), (url, response.status_code)
        hops = 0
        while response.status_code == 302 and hops < 5:
            response = client.get(response["Location"])
            hops += 1
        if hops:
            assert response.request["PATH_INFO"] == "/login/", (url, response.request["PATH_INFO"])


@pytest.mark.django_db
def test_revoked_token_is_refused(client, admin_user):
    from django.utils import timezone

    from accounts.models import ApiToken

    token, key = ApiToken.issue(admin_user)
    assert client.get("/api/v1/servers", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    assert client.get("/api/v1/servers", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 401


@pytest.mark.django_db
def test_token_of_a_deactivated_user_is_refused(client, admin_user):
    from accounts.models import ApiToken

    _, key = ApiToken.issue(admin_user)
    admin_user.is_active = False
    admin_user.save()
    assert client.get("/api/v1/servers", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 401


@pytest.mark.django_db
def test_repeated_failed_logins_are_rate_limited(client, django_user_model):
    import uuid

    username = f"victim-{uuid.uuid4().hex[:8]}"
    django_user_model.objects.create_user(username, password="right-password-123")
    for _ in range(5):
        assert client.post("/login/", {"username": username, "password": "wrong"}).status_code == 200
    blocked = client.post("/login/", {"username": username, "password": "right-password-123"})
    assert blocked.status_code == 429
    # Another user from the same address can still log in: an office behind one NAT is not locked out.
    django_user_model.objects.create_user(f"{username}-colleague", password="right-password-123")
    other = client.post("/login/", {"username": f"{username}-colleague", "password": "right-password-123"})
    assert other.status_code == 302


@pytest.mark.django_db
def test_spraying_many_user_names_from_one_address_is_rate_limited(client):
    from accounts.ratelimit import MAX_FAILURES_PER_ADDRESS

    for i in range(MAX_FAILURES_PER_ADDRESS):
        client.post("/login/", {"username": f"guess-{i}", "password": "wrong"})
    assert client.post("/login/", {"username": "guess-new", "password": "wrong"}).status_code == 429


@pytest.mark.django_db
def test_session_writes_to_the_api_need_csrf(admin_user):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user)
    # A GET is fine; an unsafe method without the CSRF token is refused before the view runs.
    assert strict.get("/api/v1/servers").status_code == 200
    assert strict.post("/api/v1/servers").status_code == 403
