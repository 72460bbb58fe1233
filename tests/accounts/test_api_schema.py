"""The OpenAPI 3 schema of the JSON API: valid, complete, behind the login, with an offline docs page."""

from __future__ import annotations

import re

import pytest
import yaml
from openapi_spec_validator import validate

# Every endpoint the README documents, as the schema names its path.
DOCUMENTED = {
    "/api/v1/servers": {"get"},
    "/api/v1/servers/{id}/series": {"get"},
    "/api/v1/servers/{id}/thresholds": {"get"},
    "/api/v1/servers/{id}/raw": {"get"},
    "/api/v1/servers/{id}/latches": {"get"},
    "/api/v1/servers/{id}/variables": {"get"},
    "/api/v1/servers/{id}/variable-changes": {"get"},
    "/api/v1/servers/{id}/effect": {"get"},
    "/api/v1/servers/{id}/what-if": {"post"},
    "/api/v1/servers/{id}/redo-sizing": {"get"},
    "/api/v1/annotations": {"get", "post"},
    "/api/v1/annotations/{id}": {"get", "patch", "delete"},
    "/api/v1/annotations/{id}/effect": {"get"},
    "/api/v1/alerts": {"get"},
}


@pytest.fixture
def schema(client, admin_user):
    client.force_login(admin_user)
    response = client.get("/api/v1/schema")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


@pytest.mark.django_db
def test_the_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate(schema)  # raises with the first problem


@pytest.mark.django_db
def test_the_schema_lists_every_documented_endpoint_and_method(schema):
    listed = {path: set(ops) - {"parameters"} for path, ops in schema["paths"].items()}
    for path, methods in DOCUMENTED.items():
        assert path in listed, path
        assert methods <= listed[path], (path, listed[path])


@pytest.mark.django_db
def test_the_series_endpoint_documents_its_parameters_and_the_token(schema):
    operation = schema["paths"]["/api/v1/servers/{id}/series"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"metrics", "start", "end", "points"} <= names
    assert {"bearerToken": []} in operation["security"]
    assert schema["components"]["securitySchemes"]["bearerToken"]["scheme"] == "bearer"


@pytest.mark.django_db
def test_the_schema_needs_a_login(client):
    assert client.get("/api/v1/schema").status_code == 401


@pytest.mark.django_db
def test_the_docs_page_loads_nothing_from_another_host(client, admin_user):
    client.force_login(admin_user)
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    page = response.content.decode()
    assert "swagger-ui" in page
    assert not re.findall(r"""(?:src|href)=["']https?://""", page), "the docs page must work offline"
