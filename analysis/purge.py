"""Who holds purge back: the transactions whose read views are the oldest, from the TRANSACTIONS
section of SHOW ENGINE INNODB STATUS (or INFORMATION_SCHEMA.INNODB_TRX rows shaped the same way).

Purge may remove undo records only below the oldest read view still open, so the history list
grows behind the oldest snapshot. Every version prints, per transaction, "ACTIVE N sec", the
session line ("MySQL thread id 8, OS thread handle …, query id 13 localhost app updating" — MariaDB
says "MariaDB thread id"; the client part is host, user, then the thread's state) and, when the
transaction holds a read view, "Trx read view will not see trx with id >= …". The holder of the
oldest view is the one with a read view that has been open longest; a transaction open for a long
time without a read view (say, idle after a write) does not hold purge back and is not named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# A view younger than this is a statement's, not a blocker: storing it would only add rows.
HOLDER_MIN_AGE_S = 10
STATEMENT_CHARS = 500
_ADDRESS = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]+)$")


@dataclass(frozen=True, slots=True)
class ViewHolder:
    """One transaction holding a read view; fields a version does not print are None."""

    thread_id: int | None
    user: str | None
    host: str | None
    trx_id: str | None
    age_s: int | None
    state: str | None
    statement: str | None
    rows_locked: int | None = None
    rows_modified: int | None = None


def _is_address(word: str) -> bool:
    return bool(_ADDRESS.match(word))


def split_client(client: str | None) -> tuple[str | None, str | None]:
    """(host, user) from the session line's tail, as thd_security_context prints it: the host name,
    then the client address when it differs (MySQL 5.0/5.1 print both: "upload 10.0.16.1 admin"),
    then the user, then the thread's state ("localhost root updating", "127.0.0.1 reporting")."""
    words = (client or "").split()
    if not words:
        return None, None
    if len(words) > 2 and not _is_address(words[0]) and _is_address(words[1]):
        return words[0], words[2]
    return words[0], (words[1] if len(words) > 1 else None)


def holders_from_status(transactions: Any, top: int = 3, min_age_s: int = HOLDER_MIN_AGE_S) -> list[ViewHolder]:
    """The `top` oldest read-view holders among the parsed status's transactions, oldest first.
    `transactions` is the parser's TRANSACTIONS record (its `transactions` list)."""
    found = []
    for trx in getattr(transactions, "transactions", None) or ():
        if not trx.read_view or trx.active_s is None or trx.active_s < min_age_s:
            continue
        host, user = split_client(trx.client)
        statement = (trx.query or "").strip()[:STATEMENT_CHARS] or None
        found.append(ViewHolder(trx.thread_id, user, host, trx.id, trx.active_s, trx.operation or trx.state,
                                statement, trx.row_locks, trx.undo_log_entries))
    found.sort(key=lambda h: -(h.age_s or 0))
    return found[:top]


@dataclass(frozen=True, slots=True)
class HoldInterval:
    """One holder over a range of polls: from when it was first seen to when it was last seen."""

    thread_id: int | None
    user: str | None
    host: str | None
    trx_id: str | None
    first_seen: float
    last_seen: float
    max_age_s: int | None
    statement: str | None


def hold_intervals(sightings: list[tuple[float, ViewHolder]], gap_s: float) -> list[HoldInterval]:
    """Consecutive sightings of the same transaction (thread and trx id) joined into intervals;
    a sighting more than `gap_s` after the last starts a new one. Newest first."""
    open_: dict[tuple, HoldInterval] = {}
    done: list[HoldInterval] = []
    for ts, h in sorted(sightings, key=lambda s: s[0]):
        key = (h.thread_id, h.trx_id)
        current = open_.get(key)
        if current is not None and ts - current.last_seen <= gap_s:
            open_[key] = HoldInterval(current.thread_id, current.user or h.user, current.host or h.host,
                                      current.trx_id, current.first_seen, ts,
                                      max(current.max_age_s or 0, h.age_s or 0), current.statement or h.statement)
            continue
        if current is not None:
            done.append(current)
        open_[key] = HoldInterval(h.thread_id, h.user, h.host, h.trx_id, ts, ts, h.age_s, h.statement)
    done += open_.values()
    return sorted(done, key=lambda i: -i.last_seen)
