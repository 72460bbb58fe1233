"""pt-diskstats' numbers and text, replayed from its own samples and expected outputs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from analysis.diskstats import (
    Delta,
    counter_delta,
    diskstats_metrics,
    format_pt_diskstats,
    metrics_for,
    metrics_to_dicts,
)
from collectors.parsers.diskstats import parse_diskstats_line, parse_pt_diskstats_samples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "diskstats"
EXPECTED = FIXTURES / "expected"
INTERACTIVE_COLUMNS = "cnc|rt|mb|busy|prg"  # pt-diskstats.t: --columns-regex cnc|rt|mb|busy|prg

# (sample, expected output, group_by, options) for every pt-diskstats run whose keyboard input is only 'q'.
# t/lib/Diskstats.t: all columns, header once, inactive shown. pt-diskstats.t (interactive):
# --show-inactive, the column regex, and a header before each sample of --group-by all.
CASES = [
    (f"diskstats-{n}", f"{prefix}{g}_{infix}diskstats-{n}", g, opts)
    for n in ("001", "002", "003", "004", "005")
    for g in ("all", "disk", "sample")
    for prefix, infix, opts in (
        ("", "", {}),
        ("", "int_", {"columns_regex": INTERACTIVE_COLUMNS, "header": "each_sample" if g == "all" else "once"}),
    )
] + [
    ("small", f"{g}_int_small", g, {"columns_regex": "time", "show_inactive": False,
                                     "header": "each_sample" if g == "all" else "once"})
    for g in ("all", "disk", "sample")
]  # fmt: skip

# Runs that press keys mid-stream ('i' toggles inactive devices, '/' sets a device regex, 'S' switches to
# --group-by sample): their expected files replay pt-diskstats' interactive re-reads of the file, not a
# grouping of the samples. The segments we can name are checked in test_interactive_segments_*.
NOT_REPLAYED = {
    "all_int_commands", "disk_int_commands", "sample_int_commands",
    "all_int_switch_to_sample", "disk_int_switch_to_sample", "sample_int_switch_to_sample",
    "all_int_bug-1035311", "disk_int_bug-1035311", "sample_int_bug-1035311",
    "bug-1035311",  # in t/pt-diskstats/expected but used by no test: no command line to replay
}  # fmt: skip


def _samples(name: str):
    return parse_pt_diskstats_samples((FIXTURES / f"percona-toolkit__pt-diskstats-{name}.txt").read_text())


def _render(sample: str, group_by: str, *, columns_regex=".", header="once", **options) -> str:
    rows = diskstats_metrics(_samples(sample), group_by, **options)
    return format_pt_diskstats(rows, group_by, columns_regex=columns_regex, header=header)


def _expected(name: str) -> str:
    return (EXPECTED / f"percona-toolkit__pt-diskstats-expected-{name}.txt").read_text()


def _known_differences(expected: str, ours: str, group_by: str) -> tuple[str, list[str]]:
    """`ours` with the documented differences set to pt-diskstats' value, and the list of them.

    pt-diskstats prints in_prg 0 on every --group-by disk line (it never fills that gauge for a span);
    we print the mean queue depth seen at the samples, as %6d like pt-diskstats.
    """
    header = expected.split("\n", 1)[0]
    if group_by != "disk" or "in_prg" not in header:
        return ours, []
    end = header.index("in_prg") + len("in_prg")  # %6d: right-aligned under the header
    fixed, differences = [], []
    for line in ours.splitlines():
        value = line[end - 6 : end]
        if not line.lstrip().startswith("#ts") and value.strip() != "0":
            differences.append(f"{line.split()[1]}: in_prg {value.strip()} (pt-diskstats: 0)")
            line = line[: end - 6] + "%6d" % 0 + line[end:]
        fixed.append(line)
    return "".join(line + "\n" for line in fixed), differences


@pytest.mark.parametrize(("sample", "name", "group_by", "options"), CASES, ids=[c[1] for c in CASES])
def test_replaying_pt_diskstats_samples_reproduces_its_expected_output(sample, name, group_by, options):
    expected = _expected(name)
    ours, _ = _known_differences(expected, _render(sample, group_by, **options), group_by)
    assert ours.splitlines() == expected.splitlines()
    assert ours == expected


def test_pt_diskstats_expected_files_are_all_replayed_or_listed_with_a_reason():
    replayed = {c[1] for c in CASES}
    names = {p.stem.removeprefix("percona-toolkit__pt-diskstats-expected-") for p in EXPECTED.glob("percona-*")}
    assert names == replayed | NOT_REPLAYED
    assert not replayed & NOT_REPLAYED


def test_the_only_differences_with_pt_diskstats_are_in_prg_of_group_by_disk():
    differences = {}
    for sample, name, group_by, options in CASES:
        _, listed = _known_differences(_expected(name), _render(sample, group_by, **options), group_by)
        if listed:
            differences[name] = listed
    assert differences == {
        "disk_diskstats-001": ["cciss/c0d1: in_prg 12 (pt-diskstats: 0)"],
        "disk_int_diskstats-001": ["cciss/c0d1: in_prg 12 (pt-diskstats: 0)"],
        "disk_diskstats-003": [f"{d}: in_prg 1 (pt-diskstats: 0)" for d in ("sdc", "sdc1", "dm-7")],
        "disk_int_diskstats-003": [f"{d}: in_prg 1 (pt-diskstats: 0)" for d in ("sdc", "sdc1", "dm-7")],
    }


def _segments(text: str) -> list[str]:
    """Parts of an interactive transcript, split at the prompt and at a header after a header-less run."""
    return [part for part in re.split(r"Enter a disk/device pattern: \S+\n", text) if part]


def test_interactive_segments_after_the_device_pattern_equal_a_run_with_that_regex():
    # commands: keys i, /, cciss. After the pattern prompt pt-diskstats re-reads the file with
    # --devices-regex cciss and (its 'i' state having been re-read from the options) inactive shown.
    for group_by, header in (("all", "once"), ("disk", "once"), ("sample", "once")):
        last = _segments(_expected(f"{group_by}_int_commands"))[-1]
        ours = _render("commands", group_by, columns_regex=INTERACTIVE_COLUMNS, header=header, device_regex="cciss")
        ours, _ = _known_differences(last, ours, group_by)
        assert ours == last


def test_metrics_match_the_values_diskstats_t_asserts_for_one_interval():
    lines = (FIXTURES / "percona-toolkit__Diskstats.t-inline-lines.txt").read_text().splitlines()
    delta = counter_delta(parse_diskstats_line(lines[2]), parse_diskstats_line(lines[0]))
    assert delta == Delta(1, 2, 7, 3, 56, 270, 2458, 50, 12, 50, in_progress_change=3, in_progress=3)
    m = metrics_for(delta, elapsed_s=2)
    assert m["rd_s"] == 0.5 and m["rd_avkb"] == 3.5 and m["rd_mb_s"] == 0.001708984375
    assert m["rd_cnc"] == pytest.approx(0.0015) and m["rd_mrg"] == pytest.approx(66.6666666666667)
    assert m["rd_rt"] == 1
    assert m["wr_s"] == 28 and m["wr_avkb"] == pytest.approx(21.9464285714286)
    assert m["wr_mb_s"] == 0.60009765625 and m["wr_cnc"] == pytest.approx(0.025)
    assert m["wr_mrg"] == pytest.approx(82.8220858895706) and m["wr_rt"] == pytest.approx(0.153374233128834)
    assert m["busy"] == pytest.approx(0.6) and m["io_s"] == 28.5
    assert m["qtime"] == pytest.approx(0.114128245504816) and m["stime"] == pytest.approx(0.0364741641337386)


def test_zero_elapsed_time_and_zero_requests_give_zeros_not_division_errors():
    assert set(metrics_for(Delta(), elapsed_s=0).values()) == {0}


@dataclass(frozen=True)
class _Row:
    device: str
    reads: int
    reads_merged: int = 0
    sectors_read: int = 0
    read_ms: int = 0
    writes: int = 0
    writes_merged: int = 0
    sectors_written: int = 0
    write_ms: int = 0
    in_progress: int = 0
    io_ms: int = 0
    weighted_io_ms: int = 0
    field_count: int = 14


@dataclass(frozen=True)
class _Sample:
    ts: float
    rows: tuple[_Row, ...]


def test_a_counter_that_goes_down_skips_that_interval_instead_of_a_negative_rate():
    samples = [_Sample(0, (_Row("sda", 100),)), _Sample(1, (_Row("sda", 150),)),
               _Sample(2, (_Row("sda", 5),)), _Sample(3, (_Row("sda", 25),))]  # fmt: skip
    rows = diskstats_metrics(samples, "all")
    assert [(r.since_first_s, r.rd_s) for r in rows] == [(1, 50), (3, 20)]
    (disk,) = diskstats_metrics(samples, "disk")
    assert (disk.rd_s, disk.elapsed_s) == (35, 2)  # 70 reads over the 2 valid seconds


def test_an_interval_with_no_elapsed_time_is_skipped():
    samples = [_Sample(5, (_Row("sda", 1),)), _Sample(5, (_Row("sda", 2),)), _Sample(6, (_Row("sda", 4),))]
    assert [r.rd_s for r in diskstats_metrics(samples, "all")] == [2]


def test_sample_grouping_sums_devices_and_shares_busy_and_concurrency():
    samples = [_Sample(0, (_Row("a", 0), _Row("b", 0))),
               _Sample(2, (_Row("a", 10, io_ms=2000, read_ms=1000), _Row("b", 30, io_ms=0)))]  # fmt: skip
    (row,) = diskstats_metrics(samples, "sample")
    assert (row.device, row.rd_s, row.busy, row.rd_cnc) == ("{2}", 20, 50, 0.25)


def test_partition_lines_without_time_counters_are_left_out_like_pt_diskstats_does():
    samples = [_Sample(0, (_Row("sda1", 0, field_count=7),)), _Sample(1, (_Row("sda1", 9, field_count=7),))]
    assert diskstats_metrics(samples, "all") == []


def test_json_rows_carry_ts_device_and_the_17_metrics():
    (row, *_) = metrics_to_dicts(diskstats_metrics(_samples("diskstats-005"), "all"))
    assert list(row) == ["ts", "device", "rd_s", "rd_avkb", "rd_mb_s", "rd_mrg", "rd_cnc", "rd_rt", "wr_s",
                         "wr_avkb", "wr_mb_s", "wr_mrg", "wr_cnc", "wr_rt", "busy", "in_prg", "io_s",
                         "qtime", "stime"]  # fmt: skip
    assert row["device"] == "sda3" and row["rd_s"] == pytest.approx(1406.0, abs=0.05)


def test_the_report_function_behind_manage_py_diskstats_prints_pt_diskstats_text_and_json():
    import json

    from collectors.sources_disk import pt_diskstats_report

    text = (FIXTURES / "percona-toolkit__pt-diskstats-diskstats-005.txt").read_text()
    assert pt_diskstats_report(text, "sample") == _expected("sample_diskstats-005")
    rows = json.loads(pt_diskstats_report(text, "all", as_json=True))
    assert len(rows) == 10 and rows[0]["device"] == "sda3" and rows[0]["busy"] == pytest.approx(41, abs=0.5)


def test_repeated_proc_diskstats_snapshots_are_taken_interval_seconds_apart():
    from collectors.sources_disk import pt_diskstats_report

    line = "   8       0 sda {} 0 {} 0 0 0 0 0 0 0 0 0 0 0 0 0 0"  # 20 fields
    text = "\n".join(line.format(r, r * 8) for r in (0, 100, 300)) + "\n"
    rows = json.loads(pt_diskstats_report(text, "all", as_json=True, interval_s=2))
    assert [(r["rd_s"], r["rd_avkb"]) for r in rows] == [(50, 4), (100, 4)]
