"""Polls written to PostgreSQL in batches, without losing one a task has finished.

Each poll's outcome (timeseries.poll_store.poll_entry, JSON) is pushed to a Redis list, the
batch's journal `iw:journal:<uuid>`, before the poll task returns, and kept in memory. The batch
is stored in one transaction when it reaches `max_polls` or is `max_age_s` old (a timer thread
flushes a quiet worker), and its journal is then deleted. So:

- a worker killed (SIGKILL, OOM) with a batch in memory leaves the journal behind; every journal
  is listed in the sorted set `iw:journals` by creation time, and one older than 30 s
  (`spool.ORPHAN_AFTER_S`) is moved into the outage spool by `drain_spool` (beat, every 10 s;
  `spool.recover_orphans`), which stores it;
- a flush that finds PostgreSQL unavailable moves the batch into the spool;
- storing is idempotent (poll_store), so a journal replayed after its batch was stored, or a
  flush racing the orphan sweep, stores nothing twice.

What can be lost: a poll whose journal push failed because Redis was down as well (logged), as
with the spool. The next poll's state (collectors.poll_state) is written in the same pipeline.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid

import orjson
import redis
from django.conf import settings
from django.db import close_old_connections

from collectors import poll_state, spool
from timeseries.poll_store import store_polls

log = logging.getLogger(__name__)

JOURNALS_KEY = spool.JOURNALS_KEY
JOURNAL_PREFIX = "iw:journal:"
JOURNAL_TTL_S = 7 * 86400


class PollWriter:
    def __init__(self, max_polls: int | None = None, max_age_s: float | None = None):
        self.max_polls = max_polls or getattr(settings, "INNOWATCH_BATCH_MAX_POLLS", 500)
        self.max_age_s = max_age_s or getattr(settings, "INNOWATCH_BATCH_MAX_AGE_S", 1.0)
        self._reset_after_fork()
        os.register_at_fork(after_in_child=self._reset_after_fork)

    def _reset_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._entries: list[tuple[bytes | str, dict]] = []
        self._journal: str | None = None
        self._opened = 0.0
        self._timer: threading.Thread | None = None
        self.stored = 0

    def add(self, entry: dict, state_updates: dict[int, dict] | None = None) -> None:
        """Journal one poll (and the servers' next state) in Redis, then keep it for the batch."""
        self.add_many([(entry, state_updates or {})])

    def add_many(self, outcomes: list[tuple[dict, dict[int, dict]]]) -> None:
        """Journal polls and the servers' next state in one Redis round trip, then keep them."""
        if not outcomes:
            return
        texts = [dumps(entry) for entry, _ in outcomes]
        states = {sid: state for _, update in outcomes for sid, state in update.items()}
        with self._lock:
            new_journal = self._journal is None
            if new_journal:
                self._journal, self._opened = JOURNAL_PREFIX + uuid.uuid4().hex, time.monotonic()
            journal = self._journal
            self._entries.extend(zip(texts, (entry for entry, _ in outcomes), strict=True))
            due = len(self._entries) >= self.max_polls
        _journal(journal, texts, new_journal, states)
        if due:
            self.flush()
        else:
            self._ensure_timer()

    def pending(self) -> int:
        return len(self._entries)

    def flush(self) -> int:
        """Store the batch now; returns the polls it held."""
        with self._flush_lock:
            with self._lock:
                entries, journal = self._entries, self._journal
                self._entries, self._journal = [], None
            if not entries:
                return 0
            try:
                self.stored += store_polls([entry for _, entry in entries])
            except spool.DB_UNAVAILABLE as exc:
                spool.forget_connection_if_broken()
                log.warning("PostgreSQL unavailable: %d polls moved to the spool (%s)", len(entries), exc)
                spool.push_entries([text for text, _ in entries])
            except Exception:  # a batch that cannot be stored: the spool stores one by one, sets bad ones aside
                log.exception("batch of %d polls not stored; moved to the spool", len(entries))
                spool.push_entries([text for text, _ in entries])
            _forget_journal(journal)
            return len(entries)

    def _ensure_timer(self) -> None:
        if self._timer is None or not self._timer.is_alive():
            with self._lock:
                if self._timer is None or not self._timer.is_alive():
                    self._timer = threading.Thread(target=self._flush_when_old, name="poll-batch", daemon=True)
                    self._timer.start()

    def _flush_when_old(self) -> None:
        while True:
            time.sleep(min(self.max_age_s / 4, 0.25))
            if self._entries and time.monotonic() - self._opened >= self.max_age_s:
                try:
                    self.flush()
                finally:
                    close_old_connections()


def dumps(value) -> bytes | str:
    """JSON of a poll's outcome or state. orjson takes a tenth of the json module's CPU; an
    integer past 64 bits (a garbled status text's) is beyond it, and goes through json."""
    try:
        return orjson.dumps(value, default=str)
    except orjson.JSONEncodeError:
        return json.dumps(value, default=str)


def _journal(journal: str, texts: list[bytes | str], new_journal: bool, state_updates: dict[int, dict]) -> None:
    try:
        pipe = spool._redis().pipeline(transaction=False)
        if new_journal:
            pipe.zadd(JOURNALS_KEY, {journal: time.time()})
        pipe.rpush(journal, *texts)
        # Every time: a push racing the flush that deleted this journal must not leave it forever.
        pipe.expire(journal, JOURNAL_TTL_S)
        if state_updates:
            pipe.hset(poll_state.STATE_KEY, mapping={sid: dumps(s) for sid, s in state_updates.items()})
        pipe.execute()
    except redis.RedisError as exc:
        log.error("poll not journaled, Redis unavailable (kept in memory only): %s", exc)


def _forget_journal(journal: str | None) -> None:
    if journal is None:
        return
    try:
        spool._redis().pipeline(transaction=False).delete(journal).zrem(JOURNALS_KEY, journal).execute()
    except redis.RedisError:
        log.warning("journal %s not deleted (Redis unavailable): it will be replayed, storing nothing twice", journal)


WRITER: PollWriter | None = None


def writer() -> PollWriter:
    """This process's batch writer."""
    global WRITER
    if WRITER is None:
        WRITER = PollWriter()
    return WRITER
