"""Each user's request rate is limited (INNOWATCH_API_RATE); a limited caller gets a 429 it can read."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture
def low_rate(settings):
    settings.INNOWATCH_API_RATE = "3/min"
    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db
def test_a_user_past_the_rate_gets_429_with_a_message(client, admin_user, low_rate):
    client.force_login(admin_user)
    codes = [client.get("/api/v1/servers").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = client.get("/api/v1/servers")
    assert "throttled" in response.json()["error"].lower() and "Retry-After" in response.headers


@pytest.mark.django_db
def test_the_rate_is_per_user(client, admin_user, django_user_model, low_rate):
    client.force_login(admin_user)
    for _ in range(3):
        client.get("/api/v1/servers")
    other = django_user_model.objects.create_user("viewer-2", password="x")
    client.force_login(other)
    assert client.get("/api/v1/servers").status_code == 200


@pytest.mark.django_db
def test_an_empty_rate_means_no_limit(client, admin_user, settings):
    settings.INNOWATCH_API_RATE = ""
    client.force_login(admin_user)
    assert {client.get("/api/v1/servers").status_code for _ in range(10)} == {200}
