"""`manage.py parse_status FILE [--json]` prints the parsed record with the issue's key names."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "innodb_status"
REQUIRED = {
    "log": {"lsn", "flushed_lsn", "pages_flushed_lsn", "checkpoint_lsn", "checkpoint_age_bytes",
            "modified_age_bytes", "max_checkpoint_age_bytes"},
    "buffer_pool": {"pages_total", "pages_free", "pages_data", "pages_dirty", "pages_read", "pages_written"},
    "transactions": {"history_list_length", "active", "oldest_active_s"},
    "row_operations": {"rows_inserted", "rows_updated", "rows_deleted", "rows_read"},
}


def run(*args) -> str:
    out = io.StringIO()
    call_command("parse_status", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_the_documented_keys_as_integers():
    record = json.loads(run(str(FIXTURES / "percona-5.5.28--pt-mysql-summary-temp006-innodb-status.txt"), "--json"))
    assert record["complete"] is True and isinstance(record["averages_window_s"], int)
    for section, keys in REQUIRED.items():
        assert keys <= set(record[section]), section
    log = record["log"]
    assert log["checkpoint_age_bytes"] == log["lsn"] - log["checkpoint_lsn"]
    assert isinstance(log["max_checkpoint_age_bytes"], int)  # Percona prints it
    assert isinstance(record["buffer_pool"]["pages_dirty"], int)


def test_semaphore_waits_carry_the_latch_file_and_line():
    waits = json.loads(run(str(FIXTURES / "unknown-8.1.0--innotop-innodb-status-011.txt"), "--json"))["semaphores"]["waits"]
    assert waits
    assert {"thread_id", "file", "line", "seconds", "latch", "created_file", "created_line"} <= set(waits[0])
    assert isinstance(waits[0]["line"], int)


def test_plain_output_names_checkpoint_age_and_waits():
    text = run(str(FIXTURES / "mariadb-10.11--local-idle.txt"))
    assert "checkpoint_age_bytes=" in text and "semaphore waits:" in text


def test_text_that_is_not_innodb_status_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("hello, this is not a status\n")
    with pytest.raises(CommandError, match="not InnoDB status"):
        run(str(junk))
