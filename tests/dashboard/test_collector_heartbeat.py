"""The overview says so when no collector is running: no heartbeat means no polls."""

from __future__ import annotations

import time

import pytest


@pytest.mark.django_db
def test_overview_warns_when_there_is_no_collector_heartbeat(client, admin_user, local_server, redis_client):
    redis_client.delete("iw:heartbeat")
    client.force_login(admin_user)
    assert "Collector stalled" in client.get("/").content.decode()


@pytest.mark.django_db
def test_overview_warns_when_the_heartbeat_is_old(client, admin_user, local_server, redis_client):
    redis_client.set("iw:heartbeat", str(time.time() - 600))
    client.force_login(admin_user)
    body = client.get("/").content.decode()
    assert "Collector stalled" in body and "stalled for 6" in body


@pytest.mark.django_db
def test_overview_is_quiet_after_a_fresh_heartbeat(client, admin_user, local_server, redis_client):
    from collectors.tasks import heartbeat

    heartbeat()
    client.force_login(admin_user)
    assert "Collector stalled" not in client.get("/").content.decode()
