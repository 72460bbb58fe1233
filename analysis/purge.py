"""Who holds purge back: the transactions whose read views are the oldest, from the TRANSACTIONS
section of SHOW ENGINE INNODB STATUS (or INFORMATION_SCHEMA.INNODB_TRX rows shaped the same way).

Purge may remove undo records only below the oldest read view still open, so the history list
grows behind the oldest snapshot. Every version prints, per transaction, "ACTIVE N sec", the
session line ("MySQL thread id 8, OS thread handle …, query id 13 localhost app updating" — MariaDB
says "MariaDB thread id"; the client part is host, user, then the thread's state) and, when the
transaction holds a read view, "Trx read view will not see trx with id >= …". The holder of the
oldest view is the one with a read view that has been open longest; a transaction open for a long
time without a read view (say, idle after a write) does not hold purge back and is not named.

INFORMATION_SCHEMA.INNODB_TRX joined with PROCESSLIST (where the account has PROCESS) completes
what the text leaves out: rows locked and modified, user@host and the statement; and when the text
cut its transaction list ("... truncated...") or printed none, it names the oldest transactions
the text could not. INNODB_TRX does not say which transactions hold a read view, so those are the
oldest open transactions (in REPEATABLE READ, one holds a view from its first read on).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
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
    source: str = "status"  # "status": named by the status text; "innodb_trx": by INNODB_TRX alone


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
    rows_locked: int | None = None  # as last seen
    rows_modified: int | None = None


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
                                      max(current.max_age_s or 0, h.age_s or 0), current.statement or h.statement,
                                      h.rows_locked, h.rows_modified)
            continue
        if current is not None:
            done.append(current)
        open_[key] = HoldInterval(h.thread_id, h.user, h.host, h.trx_id, ts, ts, h.age_s, h.statement,
                                  h.rows_locked, h.rows_modified)
    done += open_.values()
    return sorted(done, key=lambda i: -i.last_seen)


def _int(value: Any) -> int | None:
    try:
        return None if value is None or value == "" else int(value)
    except (TypeError, ValueError):
        return None


def _host_only(host: str | None) -> str | None:
    """PROCESSLIST's "10.0.0.5:41234" as the status text prints it ("10.0.0.5"); IPv6 and socket
    hosts are left as they are."""
    if host and host.count(":") == 1 and host.rsplit(":", 1)[1].isdigit():
        return host.rsplit(":", 1)[0]
    return host or None


def trx_age_s(row: dict, server_time: dt.datetime | None = None) -> int | None:
    """A transaction's age: the server's own TIMESTAMPDIFF when the row has it, else trx_started
    against `server_time` (the status text's header, the same clock and zone as trx_started)."""
    if row.get("trx_age_s") is not None:
        return _int(row["trx_age_s"])
    try:
        started = dt.datetime.fromisoformat(str(row.get("trx_started")))
    except ValueError:
        return None
    if server_time is None:
        return None
    return max(0, int((server_time - started.replace(tzinfo=None)).total_seconds()))


def holder_from_trx_row(row: dict, age_s: int | None) -> ViewHolder:
    statement = (row.get("trx_query") or row.get("info") or "").strip()[:STATEMENT_CHARS] or None
    trx_id = row.get("trx_id")
    return ViewHolder(_int(row.get("trx_mysql_thread_id")), row.get("user") or None, _host_only(row.get("host")),
                      None if trx_id is None else str(trx_id), age_s, row.get("trx_state") or None, statement,
                      _int(row.get("trx_rows_locked")), _int(row.get("trx_rows_modified")), "innodb_trx")


def holders_with_trx(from_status: list[ViewHolder], rows: list[dict] | None, *, text_lists_all: bool,
                     server_time: dt.datetime | None = None, top: int = 3,
                     min_age_s: int = HOLDER_MIN_AGE_S) -> list[ViewHolder]:
    """The status text's holders completed from INNODB_TRX rows of the same thread; when the text
    does not list every transaction (`text_lists_all` False: cut, or no list printed), INNODB_TRX's
    oldest transactions it could not show are added. Oldest first, at most `top`."""
    if not rows:
        return from_status
    by_thread = {}
    for row in rows:
        by_thread.setdefault(_int(row.get("trx_mysql_thread_id")), row)
    merged = []
    for holder in from_status:
        row = by_thread.pop(holder.thread_id, None) if holder.thread_id is not None else None
        if row is None:
            merged.append(holder)
            continue
        extra = holder_from_trx_row(row, None)
        merged.append(replace(holder, user=holder.user or extra.user, host=holder.host or extra.host,
                              statement=holder.statement or extra.statement,
                              rows_locked=extra.rows_locked if extra.rows_locked is not None else holder.rows_locked,
                              rows_modified=extra.rows_modified if extra.rows_modified is not None
                              else holder.rows_modified))
    if not text_lists_all:
        for row in by_thread.values():
            age = trx_age_s(row, server_time)
            if age is not None and age >= min_age_s:
                merged.append(holder_from_trx_row(row, age))
    merged.sort(key=lambda h: -(h.age_s or 0))
    return merged[:top]


def text_lists_all(transactions: Any) -> bool:
    """Whether the status text listed every transaction: a TRANSACTIONS section, with its list
    printed and not cut."""
    if transactions is None:
        return False
    return not transactions.list_truncated and (transactions.count > 0 or transactions.transactions != ())


def holders_not_shown(transactions: Any) -> str | None:
    """Why this status text cannot name every holder of an old read view, or None when it can (its
    per-session list is whole, so a holder is named or nobody holds a view)."""
    if transactions is None:
        return "oldest read view's holder not shown by this version: no TRANSACTIONS section in the status text"
    if transactions.list_truncated:
        return ("oldest read view's holder partly shown: the server cut the transaction list "
                "('... truncated...'); INNODB_TRX (PROCESS privilege) names the rest")
    return None
