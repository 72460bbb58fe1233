"""Query parameters every API endpoint shares: times and time ranges, with the messages users get."""

from __future__ import annotations

import datetime as dt

from django.http import JsonResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

MAX_RANGE = dt.timedelta(days=400)
# Times outside this window are typing errors, and near year 1 or 9999 date arithmetic overflows.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)


class BadRequest(Exception):
    pass


def bad_request(message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=400)


def parse_time(value: str | None, name: str, default: dt.datetime) -> dt.datetime:
    if value is None or value == "":
        return default
    try:
        # ISO 8601 is ASCII; Python's \d would otherwise accept other scripts' digits.
        parsed = parse_datetime(value) if value.isascii() and value.isprintable() else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise BadRequest(f"{name}={value!r} is not an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z)")
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt.UTC)
    if not EARLIEST <= parsed <= LATEST:
        raise BadRequest(f"{name} must be between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}")
    return parsed


def parse_range(params, default_span: dt.timedelta = dt.timedelta(hours=1)) -> tuple[dt.datetime, dt.datetime]:
    now = timezone.now()
    end = parse_time(params.get("end"), "end", now)
    start = parse_time(params.get("start"), "start", end - default_span)
    if start >= end:
        raise BadRequest("start must be before end")
    if end - start > MAX_RANGE:
        raise BadRequest(f"range too long: at most {MAX_RANGE.days} days")
    return start, end
