"""Alert pages and API: login required, operators silence and acknowledge, viewers only read."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from tests.alerting.alert_scenario import make_server, only_rules, store, tick

pytestmark = pytest.mark.django_db


@pytest.fixture
def firing(db):
    server = make_server()
    only_rules({"name": "hll", "metric": "history_list_length", "threshold": 10, "description": "<b>purge</b>"})
    store(server, [(0, {"history_list_length": 100})])
    tick(1)
    return server


def user_with_role(django_user_model, name, role=None):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(name, "", "pw-" + name)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def test_api_lists_firing_pending_and_history_for_a_token(client, api_token, firing):
    body = client.get("/api/v1/alerts", HTTP_AUTHORIZATION=f"Bearer {api_token}").json()
    assert [(a["rule"], a["server"], a["value"]) for a in body["firing"]] == [("hll", "alert-db", 100.0)]
    assert body["pending"] == []
    assert [e["state"] for e in body["history"]] == ["firing"]
    assert client.get("/api/v1/alerts?server=nope", HTTP_AUTHORIZATION=f"Bearer {api_token}").json()["firing"] == []


def test_api_refuses_anonymous_callers(client):
    assert client.get("/api/v1/alerts").status_code == 401


@pytest.mark.parametrize("url", ["/alerts/", "/alerts/rules/", "/alerts/history/", "/alerts/silences/"])
def test_alert_pages_render_for_a_viewer(client, django_user_model, firing, url):
    client.force_login(user_with_role(django_user_model, "viewer1"))
    response = client.get(url)
    assert response.status_code == 200
    assert b"<b>purge</b>" not in response.content  # rule text is escaped


def test_firing_page_shows_the_alert(client, admin_user, firing):
    client.force_login(admin_user)
    page = client.get("/alerts/").content.decode()
    assert "alert-db" in page and "hll" in page and "Acknowledge" in page


def test_an_operator_creates_a_silence_and_a_viewer_cannot(client, django_user_model, firing):
    from alerting.models import Silence

    start = timezone.now()
    form = {"server": firing.pk, "starts_at": start.strftime("%Y-%m-%d %H:%M:%S"),
            "ends_at": (start + dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S"), "comment": "reindex"}
    client.force_login(user_with_role(django_user_model, "viewer2"))
    assert client.post("/alerts/silences/", form).status_code == 403
    operator = user_with_role(django_user_model, "op1", "operator")
    client.force_login(operator)
    assert client.post("/alerts/silences/", form).status_code == 302
    silence = Silence.objects.get()
    assert (silence.author, silence.server, silence.comment) == (operator, firing, "reindex")
    client.post(f"/alerts/silences/{silence.pk}/expire")
    silence.refresh_from_db()
    assert silence.ends_at <= timezone.now()


def test_an_operator_acknowledges_with_a_note_and_a_viewer_cannot(client, django_user_model, firing):
    from alerting.models import AlertState

    state = AlertState.objects.get(rule__name="hll")
    client.force_login(user_with_role(django_user_model, "viewer3"))
    assert client.post(f"/alerts/{state.pk}/ack", {"note": "x"}).status_code == 403
    client.force_login(user_with_role(django_user_model, "op2", "operator"))
    assert client.post(f"/alerts/{state.pk}/ack", {"note": "on it"}).status_code == 302
    state.refresh_from_db()
    assert state.ack_note == "on it" and state.acknowledged_at is not None
