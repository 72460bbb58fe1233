"""Stored status texts: written with zstd, and the zlib ones written before still read, re-parsed
and spooled alike."""

from __future__ import annotations

import base64
import datetime as dt
import json
import zlib
from pathlib import Path

import pytest

from collectors import spool
from collectors.parsers.innodb_status import parse_innodb_status
from collectors.reparse import reparse
from timeseries.compression import DecompressError, compress_text, decompress_text
from timeseries.models import InnodbSample, RawStatus

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "innodb_status"
T0 = dt.datetime(2026, 11, 25, 6, 0, tzinfo=dt.UTC)


def _largest_fixture() -> str:
    return max((p.read_text(errors="replace") for p in FIXTURES.glob("*.txt")), key=len)


def test_a_status_round_trips_and_is_no_larger_than_zlib_made_it():
    text = _largest_fixture()
    blob = compress_text(text)
    assert decompress_text(blob) == text
    assert len(blob) <= len(zlib.compress(text.encode(), 6)) * 1.05


def test_a_zlib_text_written_before_still_reads_and_damage_is_an_error():
    text = _largest_fixture()
    assert decompress_text(zlib.compress(text.encode(), 6)) == text
    with pytest.raises(DecompressError):
        decompress_text(compress_text(text)[:-20])
    with pytest.raises(DecompressError):
        decompress_text(b"\x78\x9c not zlib")


@pytest.mark.django_db
def test_reparse_reads_old_zlib_rows_and_new_zstd_rows_alike(local_server):
    text = _largest_fixture()
    expected = parse_innodb_status(text)
    for n, blob in enumerate((zlib.compress(text.encode(), 6), compress_text(text))):
        ts = T0 + dt.timedelta(seconds=10 * n)
        InnodbSample.objects.create(server=local_server, ts=ts, pages_dirty=-1)
        RawStatus.objects.create(server=local_server, ts=ts, parser_version="0", text_zlib=blob)
    assert reparse(local_server, T0 - dt.timedelta(minutes=1)) == (2, 0)
    assert set(InnodbSample.objects.filter(server=local_server).values_list("pages_dirty", flat=True)) == {
        expected.buffer_pool.pages_dirty}


def test_a_reading_spooled_with_zlib_before_decodes():
    text = _largest_fixture()
    old = json.dumps({"v": 1, "server_id": 7, "captured_at": T0.isoformat(),
                      "innodb_status_zlib": base64.b64encode(zlib.compress(text.encode(), 6)).decode(),
                      "global_status": {}, "innodb_metrics": {}})
    assert spool.decode(old)["innodb_status"] == text
