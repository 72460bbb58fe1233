"""Every iostat layout in the corpus parses; jc's real captures give jc's values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collectors.parsers import ParseError
from collectors.parsers.iostat import parse_iostat

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "iostat"
ALL_FILES = sorted(FIXTURES.glob("*.txt"))
JC_FILES = sorted(FIXTURES.glob("jc__*.txt"))
# Outputs whose command prints no device: `iostat -d foo` (no such device), `iostat -ct` (CPU only).
NO_DEVICES = {"sysstat__expected.iostat-foo", "sysstat__expected.iostat-ct"}


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.stem)
def test_every_corpus_iostat_output_parses_without_warnings_and_yields_devices(path):
    reports = parse_iostat(path.read_text())
    assert reports
    assert all(r.warnings == () for r in reports)
    if path.stem in NO_DEVICES:
        assert not any(r.devices for r in reports)
    else:
        assert all(r.devices for r in reports)


def _jc_key(column: str) -> str:
    # jc.utils.normalize_key: '%' -> 'percent_', other non-alphanumerics -> '_', lower case
    return re.sub(r"[^a-z0-9]", "_", column.replace("%", "percent_").lower()).strip("_")


@pytest.mark.parametrize("path", JC_FILES, ids=lambda p: p.stem)
def test_jc_captures_give_the_values_jc_parses(path):
    expected = json.loads((FIXTURES / "expected" / f"{path.stem}.json").read_text())
    ours: list[dict[str, object]] = []
    for report in parse_iostat(path.read_text()):
        if report.cpu is not None:
            cpu = {f"percent_{k.removesuffix('_pct')}": v for k, v in vars_of(report.cpu).items()}
            ours.append({**cpu, "type": "cpu"})
        for device in report.devices:
            values = {_jc_key(column): float(text) for column, text in device.raw.items()}
            ours.append({"device": device.device, **values, "type": "device"})
    assert ours == [{k: (float(v) if isinstance(v, int) else v) for k, v in e.items()} for e in expected]


def vars_of(record: object) -> dict[str, object]:
    return {name: getattr(record, name) for name in record.__slots__}  # type: ignore[attr-defined]


def test_old_and_new_layouts_map_to_the_same_attributes():
    old = parse_iostat((FIXTURES / "jc__centos-7.7-iostat-x.txt").read_text())[0].devices[0]
    new = parse_iostat((FIXTURES / "jc__ubuntu-20.10-iostat-x.txt").read_text())[0].devices[0]
    assert (old.await_ms, old.aqu_sz, old.svctm_ms, old.avgrq_sz_sectors) == (0.88, 0.0, 0.52, 52.53)
    assert old.r_await_ms == 0.53 and old.util_pct == 0.01
    assert new.svctm_ms is None and new.await_ms is None and new.f_await_ms is not None
    assert new.aqu_sz is not None and new.rareq_sz_kb is not None


def test_mb_columns_are_converted_to_kib():
    mb = parse_iostat((FIXTURES / "jc__centos-7.7-iostat-mx.txt").read_text())[0].devices[0]
    assert mb.raw["rMB/s"] == "0.01" and mb.rkb_s == pytest.approx(0.01 * 1024)


def test_pretty_layout_merges_column_blocks_into_one_device_each():
    (report,) = parse_iostat((FIXTURES / "sysstat__expected.iostat-x-pretty.txt").read_text())
    sda = report.devices[0]
    assert sda.device == "sda" and (sda.r_s, sda.w_s, sda.d_s, sda.f_s, sda.util_pct) == (6.9, 1.69, 0.0, 0.0, 0.46)


def test_json_output_gives_the_same_values_as_the_text_output():
    text = parse_iostat((FIXTURES / "sysstat__expected.iostat-x-p-ALL.txt").read_text())
    as_json = parse_iostat((FIXTURES / "sysstat__expected.iostat-x-p-ALL-JSON.txt").read_text())
    strip = lambda r: [(d.device, d.r_s, d.w_s, d.rkb_s, d.r_await_ms, d.aqu_sz, d.util_pct) for d in r.devices]  # noqa: E731
    assert [strip(r) for r in text] == [strip(r) for r in as_json]
    assert [r.cpu for r in text] == [r.cpu for r in as_json]


def test_timestamps_groups_and_human_units_are_read():
    ct = parse_iostat((FIXTURES / "sysstat__expected.iostat-ct.txt").read_text())
    assert [str(r.ts) for r in ct] == ["2020-06-01 12:53:20", "2020-06-01 12:53:21"]
    groups = parse_iostat((FIXTURES / "sysstat__expected.iostat-g.txt").read_text())[0]
    assert [d.device for d in groups.devices if d.is_group] == ["disks", "other"]
    human = parse_iostat((FIXTURES / "sysstat__expected.iostat-human.txt").read_text())[0]
    assert human.devices[0].read_kb == 1.5 * 1024 * 1024 and human.cpu.user_pct == 1.5


def test_comma_decimal_separators_are_read():
    text = "Device:  r/s  w/s  %util\nsda  1,50  2,25  3,00\n"
    (report,) = parse_iostat(text)
    assert (report.devices[0].r_s, report.devices[0].w_s, report.devices[0].util_pct) == (1.5, 2.25, 3.0)


@pytest.mark.parametrize("text", ["", "hello\n", "TS 1\n 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n", '{"a": 1}'])
def test_text_that_is_not_iostat_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_iostat(text)
