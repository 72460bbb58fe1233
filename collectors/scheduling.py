"""Who is polled when, at a cost per tick that grows with the polls due, not the servers known.

- The roster (what a poll needs of each enabled server) is read from PostgreSQL only when a
  server was saved or deleted (a signal sets `iw:roster:dirty`) or once a minute (a bulk
  `UPDATE` sends no signal), and saved in Redis, so that polling goes on while PostgreSQL is down.
  Each process keeps a copy, reloaded when the roster's version changes.
- When each server is next due is a sorted set (`iw:due`, score = epoch seconds). A tick takes the
  due ones and moves each to its next slot in one Lua script, so two fan-outs never enqueue the
  same slot. Each server is due at its own phase within its interval (from its id), so 10,000
  servers at 10 s are ~1,000 polls a second, not 10,000 every tenth second.
- A poll task claims its slot once more (SET NX) against redelivery."""

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


DUE_KEY = "iw:due"
INTERVALS_KEY = "iw:roster:intervals"
VERSION_KEY = "iw:roster:version"
DIRTY_KEY = "iw:roster:dirty"
SYNCED_KEY = "iw:roster:synced-at"
SYNC_EVERY_S = 60
MAX_DUE_PER_TICK = 20_000

# Takes the servers due at ARGV[1] and moves each to the start of its next slot plus its phase;
# returns id, slot pairs. Phase = a fixed fraction of the interval from the id (Knuth's hash).
_CLAIM_DUE = """
local now = tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  local interval = tonumber(redis.call('HGET', KEYS[2], id))
  if interval then
    local phase = (tonumber(id) * 2654435761 % 1000003) / 1000003 * interval
    local slot = math.floor((now - phase) / interval)
    redis.call('ZADD', KEYS[1], (slot + 1) * interval + phase, id)
    table.insert(out, id)
    table.insert(out, slot)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""
_roster_cache: dict = {"version": None, "entries": {}}


def phase_s(server_id: int, interval_s: int) -> float:
    """Where in its interval a server is due (seconds after the slot starts): _CLAIM_DUE's formula."""
    return (server_id * 2654435761 % 1000003) / 1000003 * interval_s


def mark_roster_dirty() -> None:
    """A server was saved or deleted: the next tick reads the roster from PostgreSQL again."""
    try:
        redis_client().set(DIRTY_KEY, "1")
    except redis.RedisError:
        log.warning("roster change not signalled (Redis unavailable); picked up within %d s", SYNC_EVERY_S)


def current_roster(now_s: float) -> dict[int, dict]:
    """id -> roster entry of every enabled server; synced from PostgreSQL when due."""
    client = redis_client()
    version, dirty, synced = client.mget(VERSION_KEY, DIRTY_KEY, SYNCED_KEY)
    if dirty or synced is None or abs(now_s - float(synced)) >= SYNC_EVERY_S:
        if sync_roster(now_s):
            version = client.get(VERSION_KEY)
    if version != _roster_cache["version"] or not _roster_cache["entries"]:
        entries = {s.pk: {f: getattr(s, f) for f in ROSTER_FIELDS} for s in load_roster()}
        _roster_cache.update(version=version, entries=entries)
    return _roster_cache["entries"]


def sync_roster(now_s: float) -> bool:
    """Read the enabled servers from PostgreSQL into the saved roster and the due set; False
    when PostgreSQL is unavailable (the saved roster stands in)."""
    client = redis_client()
    client.delete(DIRTY_KEY)  # before the read: a change made during it marks it dirty again
    try:
        servers = list(Server.objects.filter(enabled=True, imported=False).only(*ROSTER_FIELDS))
    except spool.DB_UNAVAILABLE:
        spool.forget_connection_if_broken()
        log.warning("PostgreSQL unavailable: polling from the saved roster")
        return False
    save_roster(servers)
    ids = {str(s.pk) for s in servers}
    known = {member.decode() for member in client.zrange(DUE_KEY, 0, -1)}
    pipe = client.pipeline()
    if servers:
        pipe.hset(INTERVALS_KEY, mapping={s.pk: s.poll_interval_s for s in servers})
    if ids - known:  # new servers are due at once
        pipe.zadd(DUE_KEY, dict.fromkeys(ids - known, now_s), nx=True)
    gone = known - ids
    if gone:
        pipe.zrem(DUE_KEY, *gone)
        pipe.hdel(INTERVALS_KEY, *gone)
    pipe.incr(VERSION_KEY)
    pipe.set(SYNCED_KEY, now_s)
    pipe.execute()
    return True


def claim_due(now_s: float) -> list[tuple[int, int]]:
    """The (server id, slot) pairs due at `now_s`, each claimed by this call only."""
    client = redis_client()
    flat = client.register_script(_CLAIM_DUE)(keys=[DUE_KEY, INTERVALS_KEY], args=[now_s, MAX_DUE_PER_TICK])
    return [(int(flat[i]), int(flat[i + 1])) for i in range(0, len(flat), 2)]
