"""Roles: viewers read, operators also annotate (and silence, acknowledge), admins also administer."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group

from accounts.models import ApiToken


@pytest.fixture
def user_with_role(db, django_user_model):
    def make(role: str | None):
        user = django_user_model.objects.create_user(f"user-{role}", password="pw-for-tests-123")
        if role:
            user.groups.add(Group.objects.get(name=role))
        _, key = ApiToken.issue(user)
        return user, {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    return make


def post_annotation(client, auth):
    body = {"time": "2026-11-22T10:00:00Z", "text": "deploy v42", "kind": "deploy"}
    return client.post("/api/v1/annotations", json.dumps(body), content_type="application/json", **auth)


@pytest.mark.parametrize("role,status", [("viewer", 403), (None, 403), ("operator", 201), ("admin", 201)])
def test_writing_annotations_needs_the_operator_role(client, user_with_role, role, status):
    _, auth = user_with_role(role)
    assert post_annotation(client, auth).status_code == status


def test_a_viewer_can_read_annotations_but_not_delete_them(client, user_with_role):
    _, operator_auth = user_with_role("operator")
    created = post_annotation(client, operator_auth).json()
    _, viewer_auth = user_with_role("viewer")
    assert client.get("/api/v1/annotations", **viewer_auth).status_code == 200
    assert client.delete(f"/api/v1/annotations/{created['id']}", **viewer_auth).status_code == 403
    assert client.delete(f"/api/v1/annotations/{created['id']}", **operator_auth).status_code == 200


@pytest.mark.parametrize("role,can_enter", [("viewer", False), ("operator", False), ("admin", True)])
def test_only_admins_enter_the_admin_where_servers_rules_and_users_are_edited(
    client, user_with_role, role, can_enter
):
    user, _ = user_with_role(role)
    client.force_login(user)
    response = client.get("/admin/servers/server/")
    if can_enter:
        assert response.status_code == 200
    else:
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_staff_flag_alone_does_not_open_the_admin(client, django_user_model):
    staff = django_user_model.objects.create_user("staff-only", password="pw-for-tests-123", is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/").status_code == 302
