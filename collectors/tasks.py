"""Thin Celery glue: the fan-out, the poll task (batched writes), and a poll stored at once."""

from __future__ import annotations

import json
import logging
import time

import redis
from celery import shared_task
from celery.signals import worker_process_shutdown, worker_shutdown

from collectors import batch, disk_tasks, poll_state, polling, spool
from collectors.scheduling import (  # noqa: F401  (ROSTER_KEY, servers_to_poll: the roster's API)
    ROSTER_KEY,
    claim,
    claim_due,
    current_roster,
    load_roster,
    redis_client,
    server_for_task,
    servers_to_poll,
)
from servers.models import CollectorRun, Server
from servers.signals import sample_polled
from timeseries import poll_store

log = logging.getLogger(__name__)


# A tick's due polls go out in at most ~MESSAGES_PER_TICK messages of up to MAX_POLLS_PER_MESSAGE:
# a message costs the fan-out and the worker about as much CPU as a poll's own writes, so 10,000
# servers are not 1,000 messages a second; a few due polls still go out one per message.
MESSAGES_PER_TICK = 32
MAX_POLLS_PER_MESSAGE = 25


@shared_task(name="collectors.schedule_polls", ignore_result=True)
def schedule_polls(now_s: float | None = None) -> int:
    """Enqueue one poll for each enabled server whose next slot is due (collectors.scheduling)."""
    now_s = time.time() if now_s is None else now_s
    roster = current_roster(now_s)
    due = [(server_id, slot, roster[server_id]) for server_id, slot in claim_due(now_s) if server_id in roster]
    size = min(MAX_POLLS_PER_MESSAGE, max(1, -(-len(due) // MESSAGES_PER_TICK)))
    for start in range(0, len(due), size):
        chunk = due[start:start + size]
        # A poll that starts after its interval has passed is worthless: the next one is due.
        expires = min(entry["poll_interval_s"] for _, _, entry in chunk)
        if len(chunk) == 1:
            poll_server.apply_async(chunk[0], expires=expires)
        else:
            poll_servers.apply_async((chunk,), expires=expires)
    # host.<agent>, here, or nowhere; one message per host and tick
    disk_tasks.enqueue_disk_polls([(polling.server_from_roster(entry), slot) for _, slot, entry in due])
    return len(due)


@shared_task(name="collectors.poll_server", ignore_result=True, soft_time_limit=30)
def poll_server(server_id: int, slot: int | None = None, entry: dict | None = None) -> None:
    """One poll; `entry` is the server's roster entry, so the poll needs no PostgreSQL read."""
    server = polling.server_from_roster(entry) if entry else server_for_task(server_id, from_roster=True)
    if server is not None:
        poll_batched([(server, slot)])


@shared_task(name="collectors.poll_servers", ignore_result=True, soft_time_limit=120)
def poll_servers(polls: list) -> None:
    """Several polls, one after another: [(server id, slot, roster entry), ...]."""
    poll_batched([(polling.server_from_roster(entry), slot) for _, slot, entry in polls])


def poll_batched(servers: list[tuple[Server, int | None]]) -> list[polling.PollRun]:
    """Poll each (server, slot) not polled yet; the outcomes join this process's batch
    (collectors/batch.py), journaled before the task returns."""
    claimed = _claim_slots(servers)
    runs, outcomes = [], []
    try:
        for server, state in claimed:
            run, entry, new_state = polling.poll(server, state)
            runs.append(run)
            outcomes.append((entry, {server.pk: new_state}))
    finally:  # a task stopped midway (time limit, shutdown) still keeps the polls it made
        batch.writer().add_many(outcomes)
    return runs


def _claim_slots(servers: list[tuple[Server, int | None]]) -> list[tuple[Server, dict]]:
    """The servers whose slot this task is first to claim (at-least-once delivery: a redelivered
    task polls nothing twice), each with its poll state; one Redis call for the whole task."""
    keys, args = [poll_state.STATE_KEY], []
    for server, slot in servers:
        keys.append(f"iw:polled:{server.pk}:{slot}" if slot is not None else "")
        args += [server.pk, max(2 * server.poll_interval_s, 2)]
    try:
        answers = iter(_claim(keys, args))
    except redis.RedisError as exc:
        log.warning("slots not claimed, poll state not read: Redis unavailable (%s)", exc)
        answers = iter([1, None] * len(servers))
    claimed = []
    for server, _ in servers:
        first, state = next(answers), next(answers)
        if first:
            claimed.append((server, poll_state.decode(state)))
    return claimed


# KEYS: the poll-state hash, then a claim key per server ("" for a poll outside any slot);
# ARGV: each server's id and its claim's time to live. Replies claimed (1/0), state, per server.
# One script instead of a pipeline of two commands a server: the worker's Redis client spends
# about half the CPU per server.
_CLAIM_LUA = """
local out = {}
for i = 2, #KEYS do
  local first = 1
  if KEYS[i] ~= '' then
    first = redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[2 * i - 2]) and 1 or 0
  end
  out[#out + 1] = first
  out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[2 * i - 3])
end
return out
"""
_claim_script = None


def _claim(keys: list, args: list) -> list:
    global _claim_script
    client = redis_client()
    if _claim_script is None:
        _claim_script = client.register_script(_CLAIM_LUA)
    return _claim_script(keys=keys, args=args, client=client)  # EVALSHA; loaded again after a Redis restart


@worker_process_shutdown.connect
@worker_shutdown.connect
def _flush_polls_on_shutdown(**kwargs) -> None:
    # A warm shutdown stores the batch now; after a kill the journal does (collectors/batch.py).
    if batch.WRITER is not None:
        batch.WRITER.flush()


@shared_task(name="collectors.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Lets the dashboard show "collector stalled" when no worker has run for a while."""
    redis_client().set("iw:heartbeat", str(time.time()), ex=3600)


def last_heartbeat() -> float | None:
    value = redis_client().get("iw:heartbeat")
    return float(value) if value else None


def poll_once(server: Server, *, force_variables: bool = False) -> polling.PollRun:
    """Read, parse and store one sample of `server` now (the poll_once command, the demo, tests);
    the run is recorded whatever happens. Workers batch their writes instead (poll_server)."""
    state = poll_state.decode(_redis_or_none(lambda: redis_client().hget(poll_state.STATE_KEY, server.pk)))
    run, entry, new_state = polling.poll(server, state, force_variables=force_variables)
    stored = False
    try:
        poll_store.store_polls([entry])
        stored = True
    except spool.DB_UNAVAILABLE as exc:
        # PostgreSQL is down but the server was read: keep the poll for drain_spool.
        spool.forget_connection_if_broken()
        saved = spool.push_entries([json.dumps(entry, default=str)])
        if run.status != CollectorRun.Status.FAILED:
            run.status = CollectorRun.Status.WARNING
            run.error = f"PostgreSQL unavailable; reading {'spooled' if saved else 'lost'}: {exc}"[:2000]
    _redis_or_none(lambda: redis_client().hset(poll_state.STATE_KEY, server.pk, json.dumps(new_state)))
    _refresh_poll_state(server, run)
    if stored and run.status != CollectorRun.Status.FAILED:
        # The poll wrote the server's identity and variables with UPDATEs: callers (the demo, the
        # burst triggers) read them from this instance.
        server.refresh_from_db(fields=["flavor", "version", "version_comment", "variables", "variables_at"])
        if run.sample_at is not None:
            sample_polled.send_robust(Server, server=server, ts=run.sample_at)
    return run


def _redis_or_none(call):
    try:
        return call()
    except redis.RedisError as exc:
        log.warning("poll state not read or kept, Redis unavailable: %s", exc)
        return None


def _refresh_poll_state(server: Server, run: polling.PollRun) -> None:
    """The in-memory server as the stored poll left it (callers read it back)."""
    server.last_poll_at = run.finished_at
    if run.status == CollectorRun.Status.FAILED:
        server.last_poll_status, server.last_error = run.error_kind, run.error
    else:
        server.last_poll_status, server.last_error = Server.PollStatus.OK, run.error
        if run.sample_at is not None:
            server.last_sample_at = run.sample_at
