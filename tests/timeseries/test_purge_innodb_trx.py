"""INNODB_TRX joined with PROCESSLIST beside the status text: rows locked/modified for the holder,
the holder the text cut from its list, and what is missing said in words. On the real held-snapshot
capture (tests/fixtures/captures/PROVENANCE.md) and on the local MariaDB."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import secrets
import time
from contextlib import contextmanager
from pathlib import Path

import MySQLdb
import pytest

from collectors import sources
from collectors.imports import import_capture
from collectors.parsers.innodb_status import parse_innodb_status
from collectors.tasks import poll_once
from servers.models import Server
from tests.conftest import MARIADB
from timeseries import ingest
from timeseries.models import ReadViewHolder

CAPTURE = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / "mariadb-10.11--held-snapshot.jsonl.gz"
AT = "2026-11-24T11:34:01"  # a reading while thread 1539 (reporting@127.0.0.1) held its snapshot
pytestmark = pytest.mark.django_db


def _reading(at: str) -> tuple[str, list[dict]]:
    text = rows = None
    with gzip.open(CAPTURE, "rt") as lines:
        for line in lines:
            item = json.loads(line)
            if item["ts"].startswith(at):
                text = item["text"] if item["kind"] == "innodb_status" else text
                rows = item["rows"] if item["kind"] == "innodb_trx" else rows
    return text, rows


def _cut_list_head(text: str) -> str:
    """What the server prints when the status passes its size cap: the beginning of the transaction
    list is left out for "... truncated..." and the rest kept (innodb_show_status)."""
    head, rest = text.split("LIST OF TRANSACTIONS FOR EACH SESSION:\n", 1)
    tail = rest[re.search(r"---TRANSACTION \(0x[0-9a-f]+\), not started", rest).start():]
    return head + "LIST OF TRANSACTIONS FOR EACH SESSION:\n... truncated...\n" + tail


def test_importing_the_capture_adds_rows_locked_and_modified_from_innodb_trx():
    server = import_capture(CAPTURE, "held-trx").server
    held = ReadViewHolder.objects.filter(server=server, thread_id=1539)
    assert held.count() == pytest.approx(140, abs=6)
    # The status text prints lock counts but no undo entries for a read-only transaction;
    # INNODB_TRX says 0 rows modified. Still named by the text, whose trx id is kept.
    assert set(held.values_list("rows_locked", "rows_modified", "source")) == {(0, 0, "status")}
    assert held.filter(trx_id__startswith="(0x").count() == held.count()


def test_a_holder_cut_from_the_status_text_is_named_from_innodb_trx():
    text, rows = _reading(AT)
    cut = parse_innodb_status(_cut_list_head(text))
    assert cut.transactions.list_truncated and "1539" not in _cut_list_head(text).split("TRANSACTIONS")[1][:600]
    server = Server.objects.create(name="cut", enabled=False)
    ts = dt.datetime.fromisoformat(AT + "+00:00")
    # The capture's rows predate trx_age_s: import computes it against the status header time.
    from collectors.imports import _with_ages
    holders = ingest.view_holder_rows(server, ts, cut, _with_ages(rows, cut))
    assert [(h.thread_id, h.user, h.host, h.age_s, h.source) for h in holders] == [
        (1539, "reporting", "127.0.0.1", 96, "innodb_trx")]
    # Without INNODB_TRX the cut text names nobody: it cannot.
    assert ingest.view_holder_rows(server, ts, cut) == []


def test_a_complete_list_keeps_transactions_without_a_read_view_out():
    text, rows = _reading(AT)
    status = parse_innodb_status(text)
    server = Server.objects.create(name="whole", enabled=False)
    idle_writer = {**rows[0], "trx_mysql_thread_id": 4242, "trx_age_s": 500, "trx_id": 77}
    holders = ingest.view_holder_rows(server, dt.datetime.now(dt.UTC), status, rows + [idle_writer])
    assert [h.thread_id for h in holders] == [1539]  # the text listed all, and 4242 holds no view


@contextmanager
def held_snapshot(seconds: float):
    """A session holding a consistent snapshot (read view) for `seconds`; yields its thread id."""
    holder = MySQLdb.connect(**MARIADB, autocommit=False)
    try:
        cur = holder.cursor()
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute("SELECT COUNT(*) FROM mysql.user")
        cur.execute("SELECT CONNECTION_ID()")
        (thread_id,) = cur.fetchone()
        time.sleep(seconds)
        yield thread_id
    finally:
        holder.rollback()
        holder.close()


def test_the_live_read_gives_age_and_session_and_says_nothing_is_missing(mariadb_root):
    with held_snapshot(1.2) as thread_id:
        reading = sources.read_server(sources.ConnectionParams(MARIADB["host"], MARIADB["port"], MARIADB["user"],
                                                               MARIADB["password"]), with_trx=True, trx_limit=50)
    mine = [r for r in reading.innodb_trx if r["trx_mysql_thread_id"] == thread_id]
    assert mine and mine[0]["trx_age_s"] >= 1 and mine[0]["user"] == MARIADB["user"]
    assert {"trx_rows_locked", "trx_rows_modified"} <= set(mine[0])
    assert reading.innodb_trx_missing is None


def test_an_account_without_process_is_told_what_it_lacks(mariadb_root):
    user, password = f"iw_noproc_{secrets.token_hex(3)}", secrets.token_urlsafe(12)
    cur = mariadb_root.cursor()
    cur.execute("CREATE USER %s@'127.0.0.1' IDENTIFIED BY %s", (user, password))
    try:
        conn = MySQLdb.connect(host="127.0.0.1", port=MARIADB["port"], user=user, password=password)
        rows, missing = sources.read_innodb_trx(conn.cursor(), 5)
        conn.close()
    finally:
        cur.execute("DROP USER %s@'127.0.0.1'", (user,))
    assert rows is None and "needs PROCESS" in missing


def test_a_poll_names_a_held_snapshot_with_rows_from_innodb_trx(local_server):
    with held_snapshot(10.5) as thread_id:  # a view younger than 10 s is a statement's, not a blocker
        run = poll_once(local_server)
    assert run.status in {"ok", "warning"}, run.error
    row = ReadViewHolder.objects.get(server=local_server, thread_id=thread_id)
    assert row.user == MARIADB["user"] and row.age_s >= 10
    assert row.rows_modified == 0 and row.rows_locked is not None


def test_a_text_without_transactions_is_stored_with_a_note_saying_so():
    path = Path(__file__).resolve().parent.parent / "fixtures" / "innodb_status" / "unknown--cacti-innodb-010.txt"
    text = path.read_text(errors="replace")
    server = Server.objects.create(name="no-trx-section", enabled=False)
    notes: list[str] = []
    ingest.save_innodb_sample(server, dt.datetime(2026, 11, 1, tzinfo=dt.UTC), status=parse_innodb_status(text),
                              raw_text=text, parser_version="t", notes=notes)
    assert any("not shown by this version" in n for n in notes)
    assert not ReadViewHolder.objects.filter(server=server).exists()
