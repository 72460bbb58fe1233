"""Helpers for the parser tests: fixtures, expected values, and the sums some sources assert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collectors.parsers.innodb_status import InnodbStatus, parse_innodb_status, status_to_dict

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "innodb_status"
CASES = sorted(FIXTURES.glob("*.txt"))


def read_fixture(path: Path) -> str:
    # newline="" keeps CRLF: the parser must cope with what the server/client produced
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def load_expected(path: Path) -> dict[str, Any]:
    json_path = path.with_suffix(".json")
    return json.loads(json_path.read_text()) if json_path.exists() else {"assertions": []}


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def derived(record: InnodbStatus, name: str) -> Any:
    """Values some sources assert that are sums or counts of our fields."""
    s, t, log, ib = record.semaphores, record.transactions, record.log, record.insert_buffer
    if name == "spin_waits":  # cacti/mackerel: mutex + every RW-latch kind
        return s and _sum(s.mutex_spin_waits, s.rw_shared_spins, s.rw_excl_spins, s.rw_sx_spins)
    if name == "spin_rounds":  # cacti/mackerel take rounds from the Mutex line only
        return s and (s.mutex_spin_rounds or 0)
    if name == "os_waits":
        return s and _sum(s.mutex_os_waits, s.rw_shared_os_waits, s.rw_excl_os_waits, s.rw_sx_os_waits)
    if name == "semaphore_waits":
        return len(s.waits) if s else 0
    if name == "semaphore_wait_time_ms":
        return int(sum(w.seconds for w in s.waits) * 1000) if s else 0
    if name == "semaphore_wait_sites":
        return sorted([w.created_file, w.created_line] for w in {(w.created_file, w.created_line): w
                                                                  for w in s.waits}.values()) if s else []
    if name == "unpurged_txns":
        return t and t.trx_id_counter is not None and t.purge_trx_id is not None and t.trx_id_counter - t.purge_trx_id
    if name == "lock_wait_secs":
        return t and sum(x.lock_wait_s or 0 for x in t.transactions)
    if name == "unflushed_log":
        return log and log.lsn is not None and log.flushed_lsn is not None and log.lsn - log.flushed_lsn
    if name == "ibuf_merged":
        return ib and _sum(ib.merged_inserts, ib.merged_delete_marks, ib.merged_deletes)
    if name == "has_buffer_pool":
        return record.buffer_pool is not None
    if name == "transaction_ids":
        return [x.id for x in t.transactions] if t else []
    if name == "pending_buffer_pool_writes":
        bp = record.buffer_pool
        return bp and _sum(bp.pending_writes_lru, bp.pending_writes_flush_list, bp.pending_writes_single_page)
    if name == "transaction_states":  # pt-mysql-summary: "1xACTIVE, 70xnot started", most frequent first
        counts: dict[str, int] = {}
        for x in t.transactions if t else ():
            counts[x.state] = counts.get(x.state, 0) + 1
        return ", ".join(f"{n}x{state}" for state, n in sorted(counts.items()))
    if name == "checkpoint_age_pt_shorten":
        return log and log.checkpoint_age_bytes is not None and pt_shorten(log.checkpoint_age_bytes)
    if name == "foreign_key_error_text":  # pt-fk-error-logger drops the leading timestamp
        fk = record.foreign_key_error
        return fk and fk.text[len(fk.time or ""):].lstrip(" ")
    if name == "server_time_iso":  # innotop rewrites "100904 10:24:51" as "2010-09-04 10:24:51"
        st = record.server_time
        if st and "-" not in st:
            return f"20{st[:2]}-{st[2:4]}-{st[4:6]} {st[7:].rjust(8, '0')}"
        return st
    if name == "deadlock_transaction_count":
        return len(record.deadlock.transactions) if record.deadlock else 0
    if name == "oldest_active_thread_id":
        active = [x for x in t.transactions if x.active_s is not None] if t else []
        return max(active, key=lambda x: x.active_s).thread_id if active else None
    if name == "deadlock_queries":  # the line after "MySQL thread id" in each deadlock transaction
        queries = []
        for block in record.deadlock.transactions if record.deadlock else ():
            lines = block.split("\n")
            queries += [lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln.startswith("MySQL thread id")]
        return queries
    raise KeyError(name)


def pt_shorten(n: int) -> str:
    """pt-mysql-summary's shorten(): 1024-based units, no decimals."""
    units = ["", "k", "M", "G", "T"]
    i = 0
    value = float(n)
    while value >= 1024 and i < len(units) - 1:
        value /= 1024
        i += 1
    return f"{value:.0f}{units[i]}"


def actual_value(record: InnodbStatus, as_dict: dict[str, Any], path: str) -> Any:
    if path.startswith("derived."):
        return derived(record, path[8:])
    node: Any = as_dict
    for part in path.split("."):
        if node is None:
            return None
        node = node[part]
    return node


def compare(path: Path) -> list[tuple[str, str, Any, Any]]:
    """(assertion test file, field path, expected, actual) for every disagreement."""
    record = parse_innodb_status(read_fixture(path))
    as_dict = status_to_dict(record)
    diffs = []
    for assertion in load_expected(path)["assertions"]:
        for field, expected in assertion["expected"].items():
            actual = actual_value(record, as_dict, field)
            if actual != expected:
                diffs.append((assertion["test_file"], field, expected, actual))
    return diffs
