"""/proc/diskstats and pt-diskstats sample files parse into typed rows, whatever the kernel."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from collectors.parsers import ParseError
from collectors.parsers.diskstats import (
    parse_diskstats_line,
    parse_proc_diskstats,
    parse_pt_diskstats_samples,
    read_proc_diskstats,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "diskstats"
ALL_FILES = sorted(FIXTURES.glob("*.txt"))
PT_SAMPLE_FILES = sorted(FIXTURES.glob("percona-toolkit__pt-diskstats-*.txt"))

LINE_14 = "   8       0 sda 49601 2822 3195498 623970 12180 9784 821088 117109 0 32862 714408"
LINE_18 = LINE_14 + " 8638 547 362610 123000"
LINE_20 = LINE_18 + " 17 42"


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.stem)
def test_every_corpus_diskstats_file_parses_into_snapshots_with_rows(path):
    snapshots = parse_pt_diskstats_samples(path.read_text())
    assert snapshots and all(s.rows for s in snapshots)


@pytest.mark.parametrize("path", PT_SAMPLE_FILES, ids=lambda p: p.stem)
def test_pt_diskstats_files_yield_one_timestamped_snapshot_per_ts_line(path):
    text = path.read_text()
    snapshots = parse_pt_diskstats_samples(text)
    assert len(snapshots) == text.count("TS ")
    assert all(s.ts is not None for s in snapshots)
    assert [s.ts for s in snapshots] == sorted(s.ts for s in snapshots)


def test_14_18_and_20_field_lines_all_parse_with_their_field_count():
    # pt-diskstats' line regex wants exactly 14 fields, so it reads nothing on kernels >= 4.18.
    rows = [parse_diskstats_line(line) for line in (LINE_14, LINE_18, LINE_20)]
    assert [r.field_count for r in rows] == [14, 18, 20]
    assert {(r.reads, r.sectors_written, r.weighted_io_ms) for r in rows} == {(49601, 821088, 714408)}
    assert (rows[0].discards, rows[0].flushes) == (None, None)
    assert (rows[1].discards, rows[1].sectors_discarded, rows[1].flushes) == (8638, 362610, None)
    assert (rows[2].discard_ms, rows[2].flushes, rows[2].flush_ms) == (123000, 17, 42)


def test_sysstat_fixtures_mix_14_18_and_20_field_lines_and_skip_the_17_field_one_with_a_warning():
    snapshot = read_proc_diskstats((FIXTURES / "sysstat__tests-root1-proc-diskstats.txt").read_text())
    assert {r.field_count for r in snapshot.rows} == {18}
    assert "sds" not in {r.device for r in snapshot.rows}
    assert len(snapshot.warnings) == 1 and "17 fields" in snapshot.warnings[0]
    counts = set()
    for path in FIXTURES.glob("sysstat__*.txt"):
        counts |= {r.field_count for r in parse_proc_diskstats(path.read_text())}
    assert counts == {14, 18, 20}


def test_jc_20_field_snapshot_matches_jc_parsed_values():
    rows = parse_proc_diskstats((FIXTURES / "jc__linux-proc-diskstats.txt").read_text())
    expected = json.loads((FIXTURES / "expected" / "jc__linux-proc-diskstats.json").read_text())
    jc_names = {
        "maj": "major", "min": "minor", "device": "device", "reads_completed": "reads",
        "reads_merged": "reads_merged", "sectors_read": "sectors_read", "read_time_ms": "read_ms",
        "writes_completed": "writes", "writes_merged": "writes_merged", "sectors_written": "sectors_written",
        "write_time_ms": "write_ms", "io_in_progress": "in_progress", "io_time_ms": "io_ms",
        "weighted_io_time_ms": "weighted_io_ms", "discards_completed_successfully": "discards",
        "discards_merged": "discards_merged", "sectors_discarded": "sectors_discarded",
        "discarding_time_ms": "discard_ms", "flush_requests_completed_successfully": "flushes",
        "flushing_time_ms": "flush_ms",
    }  # fmt: skip
    ours = [{jc: asdict(row)[name] for jc, name in jc_names.items()} for row in rows]
    assert ours == expected


@pytest.mark.parametrize(
    ("name", "device", "values"),
    [
        ("001", "hda1", (12043, 387, 300113, 6472, 12737, 21340, 272616, 22360, 12368, 28832)),
        ("002", "sda4", (30566, 3341, 586664, 370308, 150943, 163833, 2518672, 12081496, 347416, 12451664)),
        # a 2.6.0-2.6.24 partition line: only reads, sectors read, writes, sectors written
        ("003", "sda2", (15425346, 0, 385290786, 0, 472909074, 0, 3783272616, 0, 0, 0)),
    ],
)
def test_cacti_samples_give_the_counters_percona_cacti_scripts_assert(name, device, values):
    text = (FIXTURES / f"percona-monitoring-plugins__cacti-diskstats-{name}.txt").read_text()
    row = next(r for r in parse_proc_diskstats(text) if r.device == device)
    fields = ("reads", "reads_merged", "sectors_read", "read_ms", "writes", "writes_merged",
              "sectors_written", "write_ms", "io_ms", "weighted_io_ms")  # fmt: skip
    assert tuple(getattr(row, f) for f in fields) == values


def test_percona_inline_line_parses_to_the_values_diskstats_t_asserts():
    line = (FIXTURES / "percona-toolkit__Diskstats.t-inline-lines.txt").read_text().splitlines()[0]
    row = parse_diskstats_line(line)
    assert (row.major, row.minor, row.device) == (104, 0, "cciss/c0d0")
    assert (row.reads, row.reads_merged, row.sectors_read, row.read_ms) == (2139885, 162788, 37361471, 8034486)
    assert (row.writes, row.writes_merged, row.sectors_written, row.write_ms) == (
        17999682, 83425310, 811400340, 12711047)  # fmt: skip
    assert (row.in_progress, row.io_ms, row.weighted_io_ms) == (0, 6869437, 20744582)


@pytest.mark.parametrize("line", ["", "8 0 sda 1 2 3", "8 0 sda " + "1 " * 12, "x y sda " + "1 " * 11,
                                  "8 0 sda " + "1 " * 10 + "²"])  # "²".isdigit() is True; int() refuses it
def test_lines_with_a_wrong_field_count_or_non_numbers_are_not_rows(line):
    assert parse_diskstats_line(line) is None


def test_a_bad_line_is_skipped_with_a_warning_not_a_crash():
    text = f"TS 100\n{LINE_14}\ngarbage here\nTS 101\n{LINE_20}\n"
    first, second = parse_pt_diskstats_samples(text)
    assert len(first.rows) == 1 and "line 3" in first.warnings[0]
    assert second.rows[0].field_count == 20 and second.warnings == ()


def test_repeated_proc_diskstats_snapshots_split_where_a_device_repeats():
    text = "\n".join([LINE_14, LINE_14.replace(" sda ", " sdb "), LINE_18, LINE_18.replace(" sda ", " sdb ")])
    snapshots = parse_pt_diskstats_samples(text)
    assert [len(s.rows) for s in snapshots] == [2, 2]
    assert all(s.ts is None for s in snapshots)


def test_pt_stalk_ts_lines_with_an_iso_time_are_read():
    snapshots = parse_pt_diskstats_samples((FIXTURES / "percona-toolkit__pt-diskstats-small.txt").read_text())
    assert snapshots[0].ts == pytest.approx(1327510177.628)


@pytest.mark.parametrize("text", ["", "hello world\n", "Log sequence number 123\nLast checkpoint at 12\n"])
def test_text_that_is_not_diskstats_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_pt_diskstats_samples(text)
    with pytest.raises(ParseError):
        parse_proc_diskstats(text)
    assert issubclass(ParseError, ValueError)
