"""Annotations API and command: auth, validation, scopes and filters."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import ApiToken
from annotations.models import Annotation
from servers.models import Server

URL = "/api/v1/annotations"


def bearer(key: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


def post(client, body, key):
    return client.post(URL, data=json.dumps(body), content_type="application/json", **bearer(key))


@pytest.fixture
def replica(db):
    return Server.objects.create(name="replica-1", host="10.0.0.2", tags=["replica", "eu"])


def test_anonymous_requests_get_401(client, db):
    assert client.get(URL).status_code == 401
    assert client.post(URL, data="{}", content_type="application/json").status_code == 401


def test_deploy_tool_posts_with_a_bearer_token_and_is_the_author(client, api_token, local_server):
    response = post(client, {"time": "2026-11-22T10:00:00Z", "text": "deploy v42", "tags": ["deploy"],
                             "server": "local-mariadb", "kind": "deploy"}, api_token)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["server"] == local_server.pk and body["author"] == "admin" and body["kind"] == "deploy"
    saved = Annotation.objects.get(pk=body["id"])
    assert saved.text == "deploy v42" and saved.tags == ["deploy"]


def test_a_revoked_token_gets_401(client, admin_user):
    token, key = ApiToken.issue(admin_user, "old")
    token.revoked_at = timezone.now()
    token.save()
    assert post(client, {"time": "2026-11-22T10:00:00Z", "text": "x"}, key).status_code == 401
    assert not Annotation.objects.exists()


def test_session_writes_still_need_the_csrf_token(admin_user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(URL, data=json.dumps({"time": "2026-11-22T10:00:00Z", "text": "x"}),
                           content_type="application/json")
    assert response.status_code == 403


@pytest.mark.parametrize(
    "body, message",
    [
        ({"text": "no time"}, "time is required"),
        ({"time": "yesterday", "text": "x"}, "not an ISO 8601"),
        ({"time": "2026-11-22T10:00:00Z"}, "text is required"),
        ({"time": "2026-11-22T10:00:00Z", "text": "   "}, "text is required"),
        ({"time": "2026-11-22T10:00:00Z", "text": "x", "server": "nope"}, "does not exist"),
        ({"time": "2026-11-22T10:00:00Z", "text": "x", "tags": [1, 2]}, "tags must be"),
        ({"time": "2026-11-22T10:00:00Z", "time_end": "2026-11-22T09:00:00Z", "text": "x"}, "time_end"),
        ({"time": "2026-11-22T10:00:00Z", "text": "x", "kind": "party"}, "kind must be"),
        ({"time": "2026-11-22T10:00:00Z", "text": "x", "colour": "red"}, "unknown field"),
        ([1, 2], "JSON object"),
    ],
)
def test_invalid_bodies_are_400_with_a_message(client, api_token, local_server, body, message):
    response = post(client, body, api_token)
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_malformed_json_is_400(client, api_token):
    response = client.post(URL, data="{not json", content_type="application/json", **bearer(api_token))
    assert response.status_code == 400 and "JSON" in response.json()["error"]


def test_patch_edits_and_delete_removes(client, api_token, local_server, replica):
    created = post(client, {"time": "2026-11-22T10:00:00Z", "text": "first", "server": local_server.pk},
                   api_token).json()
    url = f"{URL}/{created['id']}"
    response = client.patch(url, data=json.dumps({"text": "second", "server": "replica-1",
                                                  "time_end": "2026-11-22T11:00:00Z"}),
                            content_type="application/json", **bearer(api_token))
    assert response.status_code == 200, response.content
    assert response.json()["text"] == "second" and response.json()["server"] == replica.pk
    assert response.json()["time_end"].startswith("2026-11-22T11:00:00")
    bad = client.patch(url, data=json.dumps({"text": ""}), content_type="application/json", **bearer(api_token))
    assert bad.status_code == 400 and Annotation.objects.get(pk=created["id"]).text == "second"
    assert client.delete(url, **bearer(api_token)).status_code == 200
    assert client.get(url, **bearer(api_token)).status_code == 404


def _ids(client, key, **params):
    response = client.get(URL, params, **bearer(key))
    assert response.status_code == 200, response.content
    return sorted(a["text"] for a in response.json())


def test_server_filter_includes_tag_scoped_and_global_annotations(client, api_token, local_server, replica):
    t = "2026-11-22T10:00:00Z"
    for body in ({"text": "local only", "server": local_server.pk}, {"text": "replica only", "server": replica.pk},
                 {"text": "all replicas", "scope_tag": "replica"}, {"text": "everywhere"}):
        assert post(client, {"time": t, **body}, api_token).status_code == 201
    assert _ids(client, api_token, server="replica-1") == ["all replicas", "everywhere", "replica only"]
    assert _ids(client, api_token, server=str(local_server.pk)) == ["everywhere", "local only"]
    assert client.get(URL, {"server": "ghost"}, **bearer(api_token)).status_code == 400


def test_tag_and_range_filters(client, api_token, local_server):
    rows = [("2026-11-22T08:00:00Z", None, "early", ["deploy"]),
            ("2026-11-22T09:00:00Z", "2026-11-22T12:00:00Z", "long maintenance", ["ops"]),
            ("2026-11-22T11:00:00Z", None, "late", ["deploy", "app"])]
    for time, end, text, tags in rows:
        assert post(client, {"time": time, "time_end": end, "text": text, "tags": tags}, api_token).status_code == 201
    assert _ids(client, api_token, tags="deploy") == ["early", "late"]
    assert _ids(client, api_token, tags="app,ops") == ["late", "long maintenance"]
    # A range overlapping the maintenance window finds it even though it started before.
    assert _ids(client, api_token, start="2026-11-22T10:00:00Z", end="2026-11-22T10:30:00Z") == ["long maintenance"]
    assert _ids(client, api_token, start="2026-11-22T10:30:00Z") == ["late", "long maintenance"]
    assert client.get(URL, {"start": "soon"}, **bearer(api_token)).status_code == 400


def test_annotate_command_creates_a_server_annotation(local_server):
    call_command("annotate", "raised io_capacity", server="local-mariadb", tags="tuning,io", kind="deploy")
    a = Annotation.objects.get()
    assert (a.server, a.text, a.tags, a.kind, a.author) == (local_server, "raised io_capacity",
                                                            ["tuning", "io"], "deploy", None)


def test_a_grafana_annotation_with_epoch_milliseconds_is_accepted(client, api_token, local_server):
    body = {"time": 1763805600000, "timeEnd": 1763805660000, "text": "deploy v43", "tags": ["deploy"],
            "dashboardUID": "abc", "panelId": 4, "server": local_server.name}
    response = post(client, body, api_token)
    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["time"], data["time_end"]) == ("2025-11-22T10:00:00+00:00", "2025-11-22T10:01:00+00:00")


def test_grafana_reads_annotations_in_its_own_shape(client, api_token, local_server):
    post(client, {"time": "2026-11-22T10:00:00Z", "text": "innodb_io_capacity: 200 → 400", "server": local_server.pk,
                  "kind": "variable_change", "tags": ["variable_change"]}, api_token)
    response = client.get("/api/v1/annotations/grafana", {"server": local_server.name, "kind": "variable_change",
                                                          "from": "2026-11-22T00:00:00Z", "to": "2026-11-23T00:00:00Z"},
                          **bearer(api_token))
    assert response.status_code == 200, response.content
    assert response.json() == [{"time": 1795341600000, "timeEnd": 1795341600000, "title": "variable change",
                                "text": "innodb_io_capacity: 200 → 400", "tags": ["variable_change"],
                                "server": local_server.name}]
