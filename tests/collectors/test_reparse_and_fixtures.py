"""Stored raw text can be re-parsed, and live status can be saved as a fixture."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.core.management import call_command

from collectors.tasks import poll_once
from timeseries.compression import decompress_text


@pytest.mark.django_db
def test_reparse_rewrites_text_columns_from_the_stored_raw_text(local_server):
    from timeseries.models import InnodbSample, RawStatus

    run = poll_once(local_server)
    assert run.status != "failed", run.error
    sample = InnodbSample.objects.get(server=local_server)
    raw = RawStatus.objects.get(server=local_server, ts=sample.ts)
    text = decompress_text(raw.text_zlib)
    # Damage the parsed columns as an old parser bug would have, and mark the raw row as old.
    InnodbSample.objects.filter(server=local_server).update(checkpoint_age_bytes=-1, pages_dirty=-1)
    RawStatus.objects.filter(server=local_server).update(parser_version="0")

    call_command("reparse", server=local_server.name, since=(sample.ts - dt.timedelta(minutes=1)).isoformat())

    sample.refresh_from_db()
    from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status

    expected = parse_innodb_status(text)
    assert sample.checkpoint_age_bytes == expected.log.checkpoint_age_bytes >= 0
    assert sample.pages_dirty == expected.buffer_pool.pages_dirty
    assert RawStatus.objects.get(server=local_server).parser_version == PARSER_VERSION


@pytest.mark.django_db
def test_capture_fixture_saves_the_live_status_with_provenance(local_server, tmp_path):
    call_command("capture_fixture", server=local_server.name, case="Test Case!", dir=str(tmp_path))
    (text_path,) = tmp_path.glob("*.txt")
    assert text_path.name.startswith("mariadb-10.") and text_path.name.endswith("--test-case.txt")
    assert "END OF INNODB MONITOR OUTPUT" in text_path.read_text()
    meta = json.loads(text_path.with_suffix(".json").read_text())
    assert meta["source_repo"] == "local capture"
    assert "Innodb_checkpoint_age" in meta["global_status_at_capture"]
