"""Who is polled when: interval slots claimed once in Redis (SET NX), and the roster of servers
to poll, saved in Redis so that polling goes on while PostgreSQL is down."""

from __future__ import annotations

import json
import logging

import redis
from django.conf import settings

from collectors import spool
from servers.models import Server

log = logging.getLogger(__name__)
_redis_client: redis.Redis | None = None


def redis_client() -> redis.Redis:
    global _redis_client
    if _redis_client is None:
        _redis_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    return _redis_client


def poll_slot(server: Server, now_s: float) -> int:
    """Polls are aligned on multiples of the interval: slot N covers [N*i, (N+1)*i)."""
    return int(now_s // server.poll_interval_s)


def claim(key: str, ttl_s: int) -> bool:
    """Atomically claim a key once (SET NX): fan-out and redelivered tasks both rely on it."""
    return bool(redis_client().set(key, "1", nx=True, ex=max(ttl_s, 2)))


# What a poll needs of each enabled server, as of the last fan-out that could read PostgreSQL.
# While PostgreSQL is down the fan-out and the polls work from this copy, so readings keep being
# taken and wait in the spool instead of not being taken at all. The password stays encrypted.
ROSTER_KEY = "iw:poll-roster"
ROSTER_FIELDS = ("pk", "name", "host", "port", "user", "password_encrypted", "poll_interval_s", "host_agent")
ROSTER_TTL_S = 7 * 86400


def servers_to_poll() -> list[Server]:
    try:
        servers = list(Server.objects.filter(enabled=True, imported=False).only(*ROSTER_FIELDS))
    except spool.DB_UNAVAILABLE:
        spool.forget_connection_if_broken()
        servers = load_roster()
        log.warning("PostgreSQL unavailable: polling %d servers from the saved roster", len(servers))
        return servers
    save_roster(servers)
    return servers


def save_roster(servers: list[Server]) -> None:
    roster = json.dumps([{field: getattr(s, field) for field in ROSTER_FIELDS} for s in servers])
    try:
        redis_client().set(ROSTER_KEY, roster, ex=ROSTER_TTL_S)
    except redis.RedisError:
        log.warning("poll roster not saved: Redis unavailable")


def load_roster() -> list[Server]:
    """Unsaved Server instances built from the roster (empty if there is none or Redis is down)."""
    try:
        roster = redis_client().get(ROSTER_KEY)
    except redis.RedisError:
        return []
    return [Server(**entry) for entry in json.loads(roster)] if roster else []


def server_for_task(server_id: int, from_roster: bool) -> Server | None:
    """The task's server; None if it was deleted since the fan-out, or PostgreSQL is down and
    the roster may not (or cannot) stand in."""
    try:
        return Server.objects.get(pk=server_id)
    except Server.DoesNotExist:
        return None
    except spool.DB_UNAVAILABLE:
        spool.forget_connection_if_broken()
    server = next((s for s in load_roster() if s.pk == server_id), None) if from_roster else None
    if server is None:
        log.warning("server %s not polled: PostgreSQL unavailable", server_id)
    return server
