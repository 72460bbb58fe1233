"""SHOW ENGINE INNODB STATUS parser against real outputs and what their sources' tests assert."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _corpus import CASES, FIXTURES, compare, load_expected, read_fixture  # noqa: E402

from collectors.parsers.innodb_status import ParseError, parse_innodb_status, status_to_dict  # noqa: E402

HASH_PARTITION_FIELDS = {"insert_buffer.hash_table_size", "insert_buffer.hash_node_heap_buffers",
                         "insert_buffer.hash_used_cells"}

# Expected values the text itself contradicts: (fixture stem, field) -> why the source is wrong.
SOURCE_IS_WRONG = {
    ("unknown--cacti-innodb-016", "transactions.trx_id_counter"):
        "5.1/5.5 (old YYMMDD header, one-word ids) print trx ids in hex; '500' is 0x500, cacti read it as decimal",
    ("unknown--cacti-innodb-016", "derived.unpurged_txns"): "same hex id read as decimal (0x500 - 0x10)",
    ("unknown--mackerel-parselockedtransactions-stub", "transactions.trx_id_counter"):
        "old header, one-word id: '507' is hex 0x507; mackerel read it as decimal",
    ("mysql-5.6--datadog-mysql-56", "transactions.tables_in_use"):
        "datadog also counts 'mysql tables in use' lines of the LATEST DETECTED DEADLOCK section",
    ("mysql-5.6--datadog-mysql-56", "transactions.tables_locked"): "same: counts the deadlock section",
    ("mysql-5.7--datadog-mysql-57", "transactions.tables_in_use"): "same: counts the deadlock section",
    ("mysql-5.7--datadog-mysql-57", "transactions.tables_locked"): "same: counts the deadlock section",
    ("mysql-8.4--datadog-mysql-84", "transactions.tables_in_use"): "same: counts the deadlock section",
    ("mysql-8.4--datadog-mysql-84", "transactions.tables_locked"): "same: counts the deadlock section",
    ("unknown--innotop-innodb-status-007", "insert_buffer.merges"):
        "the Ibuf line says '7081514 merges'; innotop's regex misses the 5.5+ 'N merges' ending",
    ("mysql-5.7.7--innotop-innodb-status-009", "insert_buffer.merges"): "same innotop 5.5+ Ibuf regex miss",
    ("mysql-5.5--innotop-innodb-status-002", "insert_buffer.merges"): "same innotop 5.5+ Ibuf regex miss",
    ("mariadb-10.11--datadog-mariadb-1011", "transactions.tables_in_use"): "datadog counts the deadlock section",
    ("mariadb-10.11--datadog-mariadb-1011", "transactions.tables_locked"): "datadog counts the deadlock section",
}


def explain(stem: str, field: str, expected: object, actual: object, text: str) -> str | None:
    """Why a disagreement is not our bug, or None when it is."""
    if (stem, field) in SOURCE_IS_WRONG:
        return SOURCE_IS_WRONG[(stem, field)]
    if expected in (0, None) and actual is None:
        return "the source fills 0/null for a line this text does not print; we say None (not printed)"
    if expected is None:
        return "the source has no value (it does not read this line's format); we do"
    if field in HASH_PARTITION_FIELDS and text.count("Hash table size") > 1:
        return "5.7+ print one line per adaptive hash index partition: the source reads one, we sum them"
    return None


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_parsed_values_equal_what_the_source_tests_assert(path):
    text = read_fixture(path)
    unexplained = [d for d in compare(path) if explain(path.stem, d[1], d[2], d[3], text) is None]
    assert unexplained == []


@pytest.mark.parametrize("key", sorted(SOURCE_IS_WRONG), ids=lambda k: f"{k[0]}:{k[1]}")
def test_source_expected_value_is_wrong_and_the_text_says_so(key):
    stem, field = key
    path = next(p for p in CASES if p.stem == stem)
    diffs = {d[1]: d for d in compare(path)}
    assert field in diffs, f"{stem} {field} now agrees with the source; drop it from SOURCE_IS_WRONG"


def test_cacti_016_expected_trx_id_counter_is_wrong_because_old_servers_print_hex_ids():
    record = parse_innodb_status(read_fixture(next(p for p in CASES if p.stem == "unknown--cacti-innodb-016")))
    assert record.transactions.trx_id_format == "hex"
    assert record.transactions.trx_id_counter == 0x500


# Lines that are not data: wrapped fragments of the reference manual's example text.
UNPARSED_ALLOWED = {
    "mysql-5.7--datadog-mysql-57": {"0.00 RW-sx", "0 / 1000", "ahead 0.00/s"},
}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_line_of_every_fixture_is_recognised(path):
    record = parse_innodb_status(read_fixture(path))
    assert set(record.unparsed_lines) - UNPARSED_ALLOWED.get(path.stem, set()) == set()


def test_every_fixture_has_provenance_and_a_licence():
    provenance = (CASES[0].parent / "PROVENANCE.md").read_text()
    for path in CASES:
        assert path.name in provenance
    assert any((CASES[0].parent.parent / "LICENSES").iterdir())


def test_two_word_lsn_is_high_times_two_to_the_32_plus_low():
    record = parse_innodb_status(read_fixture(next(p for p in CASES if p.stem == "unknown--cacti-innodb-007")))
    assert record.log.lsn == 17 * 2**32 + 3726916467
    assert record.log.checkpoint_age_bytes == 3726916467 - 3717618537
    assert record.log.pages_flushed_lsn is None and record.log.modified_age_bytes is None


@pytest.mark.parametrize("garbled", ["Trx id counter EF2369392 12", "Trx id counter " + "A" * 5000])
def test_a_trx_id_that_is_neither_two_decimal_words_nor_one_64_bit_word_is_an_unparsed_line(garbled):
    # found by comparing mutated fixtures: a hex high word sent "EF2369392 12" to int() and the
    # parse raised ValueError; 5,000 hex digits made a 20,000-bit "trx id"
    text = read_fixture(next(p for p in CASES if p.stem == "mysql-5.0--mackerel-parseprocstat50-stub"))
    assert "Trx id counter 0 2369392" in text
    record = parse_innodb_status(text.replace("Trx id counter 0 2369392", garbled))
    assert record.transactions.trx_id_counter is None
    assert record.unparsed_lines == (garbled,)
    assert record.transactions.purge_trx_id == 2368227


def test_percona_prints_max_checkpoint_age_and_target():
    path = next(p for p in CASES if p.stem.startswith("percona-5.1.61"))
    log = parse_innodb_status(read_fixture(path)).log
    assert (log.max_checkpoint_age_bytes, log.checkpoint_age_target_bytes) == (7782360, 7539162)


def test_mysql_8_0_30_log_lines_and_split_os_wait_array_lines():
    record = parse_innodb_status(read_fixture(next(p for p in CASES if "innodb-status-012" in p.stem)))
    assert (record.log.min_file_id, record.log.max_file_id) == (5, 6)
    assert record.log.checkpoint_lsn == 20024923 and record.log.modified_age_bytes == 21228847 - 20024923
    assert (record.semaphores.reservation_count, record.semaphores.signal_count) == (23, 23)
    assert record.semaphores.rw_sx_spins == 0 and record.averages_window_s == 0


def test_semaphore_waits_keep_thread_site_latch_and_creation_site():
    record = parse_innodb_status(read_fixture(next(p for p in CASES if p.stem == "unknown--cacti-innodb-007")))
    wait = record.semaphores.waits[0]
    assert (wait.thread_id, wait.file, wait.line, wait.seconds) == (1194400096, "./../include/buf0buf.ic", 621, 0.0)
    assert (wait.latch, wait.created_file, wait.created_line) == ("mutex", "buf0buf.c", 538)


def test_individual_buffer_pool_blocks_are_kept_apart_from_the_totals():
    record = parse_innodb_status(read_fixture(next(p for p in CASES if p.stem == "mysql-5.6--datadog-mysql-56")))
    pool = record.buffer_pool
    assert pool.pages_total == 131071 and len(pool.instances) == 2
    assert sum(i.pages_total for i in pool.instances) == pool.pages_total


def test_status_to_dict_is_plain_json():
    import json

    record = parse_innodb_status(read_fixture(CASES[0]))
    as_dict = json.loads(json.dumps(status_to_dict(record)))
    assert as_dict == status_to_dict(record)
    assert {"lsn", "checkpoint_age_bytes", "modified_age_bytes"} <= set(as_dict["log"])


@pytest.mark.parametrize("text", ["", "hello world", "Variable_name\tValue\nUptime\t5\n", "-----\nNOPE\n-----"])
def test_text_that_is_not_innodb_status_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_innodb_status(text)


def test_expected_json_exists_for_every_fixture_with_source_assertions():
    with_values = [p for p in CASES if load_expected(p)["assertions"]]
    assert len(with_values) >= 50


def test_sessions_idle_inside_a_transaction_and_mariadbs_lock_wait_in_microseconds():
    """MariaDB 10.11, captured: a session between statements of its transaction prints a locks
    line and its thread line; a lock wait is printed in microseconds ("2500302 us")."""
    from collectors.parsers.innodb_status import _parse_transactions_lines

    text = read_fixture(FIXTURES / "mariadb-10.11--local-open-transactions.txt")
    status = parse_innodb_status(text)
    waiting, snapshot, idle = status.transactions.transactions[:3]
    assert (waiting.lock_wait, waiting.lock_wait_s) == (True, 2)
    assert waiting.query == "UPDATE innowatch_scratch.trx SET v = v + 1 WHERE id = 1"  # not the wait line
    assert (snapshot.read_view, snapshot.lock_structs, snapshot.row_locks) == (True, 0, 0)
    assert (idle.id, idle.lock_structs, idle.heap_size, idle.row_locks, idle.undo_log_entries) == ("165", 3, 1128, 5, 4)
    assert (idle.thread_id, idle.os_thread_id, idle.query_id, idle.client) == (
        1040, "131574584198848", 2449074, "127.0.0.1 root")
    # the pattern that reads such sessions whole gives what the line-by-line reader gives
    body = text.split("\nTRANSACTIONS\n------------\n", 1)[1].split("\n--------\nFILE I/O", 1)[0]
    assert _parse_transactions_lines(body.split("\n"), []) == status.transactions
