"""What every endpoint of the JSON API shares: errors as `{"error": "<message>"}`, input no query
can use (NUL characters) refused at the door, and a per-user request rate."""

from __future__ import annotations

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.api_params import BadRequest

NOT_AUTHENTICATED = "authentication required: log in or send Authorization: Bearer <token>"


def _first_message(detail) -> str:
    """A serializer's errors hold one list per field; our messages already name the field."""
    if isinstance(detail, dict):
        return _first_message(next(iter(detail.values()))) if detail else "invalid request"
    if isinstance(detail, list):
        return _first_message(detail[0]) if detail else "invalid request"
    return str(detail)


def exception_handler(exc, context):
    if isinstance(exc, BadRequest):
        return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        return Response({"error": "not found"}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, exceptions.NotAuthenticated):
        exc.detail = NOT_AUTHENTICATED
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = {"error": _first_message(exc.detail)}
    return response


def nul_problem(request) -> str | None:
    # PostgreSQL text cannot hold NUL: refuse it at the door rather than fail deep in a query.
    for name, values in request.GET.lists():
        if any("\x00" in value for value in values):
            return f"parameter {name!r} contains a NUL character"
    body = request.body if request.method not in ("GET", "HEAD") else b""
    if b"\x00" in body or b"\\u0000" in body:
        return "the body contains a NUL character"
    return None


class RefuseNul:
    """A view mixin: 400 before anything else reads a parameter or body holding NUL."""

    def initial(self, request, *args, **kwargs):
        problem = nul_problem(request._request)
        if problem:
            raise BadRequest(problem)
        super().initial(request, *args, **kwargs)
