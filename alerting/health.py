"""How the alert evaluator itself is doing, for /metrics: when it last ran, for how long, over how
many servers. Kept in Redis (the evaluations run in a worker, /metrics is served by the web)."""

from __future__ import annotations

import json
import logging

import redis
from django.conf import settings

KEY = "iw:alert-evaluation"
log = logging.getLogger(__name__)


def redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)


def record_evaluation(finished_s: float, duration_s: float, servers: int, notices: int) -> None:
    """Best effort: an evaluation that cannot say how it went still evaluated."""
    run = {"finished_s": finished_s, "duration_s": duration_s, "servers": servers, "notices": notices}
    try:
        redis_client().set(KEY, json.dumps(run), ex=3600)
    except redis.RedisError as exc:
        log.warning("alert evaluation health not recorded: %s", exc)


def last_evaluation() -> dict | None:
    """The latest run as record_evaluation stored it; None if none ran in the last hour."""
    try:
        value = redis_client().get(KEY)
    except redis.RedisError:
        return None
    return json.loads(value) if value else None
