"""What the parser's speed-ups must not change: records stay ordinary frozen records, and
repeated blocks parsed once still give every thread its own values."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _corpus import CASES, read_fixture  # noqa: E402

from collectors.parsers.innodb_status import parse_innodb_status  # noqa: E402


def _records(value: Any) -> Iterator[Any]:
    if isinstance(value, tuple):
        for item in value:
            yield from _records(item)
    elif dataclasses.is_dataclass(value):
        yield value
        for field in dataclasses.fields(value):
            yield from _records(getattr(value, field.name))


# Every fixture: a fifth of them, picked by position, changed with every fixture added, and
# picked a deadlock-only text (two records) the day one was.
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_parsed_records_equal_records_built_by_their_own_init_and_stay_frozen(path):
    records = list(_records(parse_innodb_status(read_fixture(path))))
    assert len(records) >= 2  # the status and at least one section's record
    for record in records:
        rebuilt = type(record)(**{f.name: getattr(record, f.name) for f in dataclasses.fields(record)})
        assert rebuilt == record and hash(rebuilt) == hash(record)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, dataclasses.fields(record)[0].name, None)


WAIT_BODY = (
    "X-lock on RW-latch at 0x7f01 created in file dict0dict.cc line 622\n"
    "a writer (thread id 908093) has reserved it in mode  wait exclusive\n"
    "a line no rule knows\n"
    "Last time write locked in file ha_innodb.cc line 7156\n"
)


def test_identical_semaphore_wait_blocks_keep_each_threads_id_and_seconds_and_each_unknown_line():
    text = (
        "=====================================\n2024-10-23 17:51:16 0x7f INNODB MONITOR OUTPUT\n"
        "=====================================\n----------\nSEMAPHORES\n----------\n"
        "OS WAIT ARRAY INFO: reservation count 5\n"
        f"--Thread 11 has waited at a.cc line 1 for 2.00 seconds the semaphore:\n{WAIT_BODY}"
        f"--Thread 12 has waited at b.cc line 3 for 4.50 seconds the semaphore:\n{WAIT_BODY}"
        "----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n"
    )
    status = parse_innodb_status(text)
    first, second = status.semaphores.waits
    assert (first.thread_id, first.file, first.line, first.seconds) == (11, "a.cc", 1, 2.0)
    assert (second.thread_id, second.file, second.line, second.seconds) == (12, "b.cc", 3, 4.5)
    assert first.holder_thread_id == second.holder_thread_id == 908093
    assert first.last_write_line == second.last_write_line == 7156
    assert status.unparsed_lines.count("a line no rule knows") == 2


def test_identical_transaction_bodies_keep_each_transactions_header_and_each_unknown_line():
    body = "0 lock struct(s), heap size 1128, 0 row lock(s)\nmysterious line\n"
    text = (
        "=====================================\n2024-10-23 17:51:16 0x7f INNODB MONITOR OUTPUT\n"
        "=====================================\n------------\nTRANSACTIONS\n------------\n"
        "Trx id counter 100\nLIST OF TRANSACTIONS FOR EACH SESSION:\n"
        f"---TRANSACTION 421, not started\n{body}"
        f"---TRANSACTION 422, ACTIVE 7 sec, process no 9, OS thread id 77\n{body}"
        "----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n"
    )
    status = parse_innodb_status(text)
    idle, active = status.transactions.transactions
    assert (idle.id, idle.state, idle.active_s, idle.os_thread_id) == ("421", "not started", None, None)
    assert (active.id, active.state, active.active_s, active.os_thread_id) == ("422", "ACTIVE", 7, "77")
    assert idle.heap_size == active.heap_size == 1128 and idle.row_locks == active.row_locks == 0
    assert status.unparsed_lines.count("mysterious line") == 2
