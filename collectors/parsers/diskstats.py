"""/proc/diskstats and pt-diskstats / pt-stalk sample files: text in, frozen records out.

Schema of one `DiskstatsRow` (cumulative counters since boot, exactly as the kernel prints them;
see Documentation/admin-guide/iostats.rst):

- `major`, `minor`, `device`
- `reads`, `reads_merged`, `sectors_read` (512-byte units), `read_ms`
- `writes`, `writes_merged`, `sectors_written`, `write_ms`
- `in_progress` (a gauge, not a counter), `io_ms`, `weighted_io_ms`
- `discards`, `discards_merged`, `sectors_discarded`, `discard_ms`: Linux 4.18+ (18 and 20 fields), else None
- `flushes`, `flush_ms`: Linux 5.5+ (20 fields), else None
- `field_count`: 14 (2.6.25-4.17), 18 (4.18-5.4), 20 (5.5+) or 7. A 7-field line is the
  partition format of 2.6.0-2.6.24 (`reads sectors_read writes sectors_written` only): the four
  counters are kept and the ones it does not print are 0, as Percona's cacti scripts read it.

A pt-diskstats / pt-stalk sample file is a sequence of `TS <epoch>[.<frac>] [<iso time>]` lines,
each followed by one /proc/diskstats snapshot. Without TS lines, a repeated device starts a new
snapshot (several `cat /proc/diskstats` appended to one file); those snapshots have `ts=None`.

Lines we cannot read are skipped and named in the snapshot's `warnings`; text with no diskstats
line at all raises `ParseError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.parsers import ParseError

__all__ = [
    "DiskstatsRow",
    "DiskstatsSnapshot",
    "ParseError",
    "parse_diskstats_line",
    "parse_proc_diskstats",
    "parse_pt_diskstats_samples",
    "read_proc_diskstats",
]

_TS_LINE = re.compile(r"^TS\s+(\d+(?:\.\d+)?)(?:\s.*)?$")
_FULL_FIELD_COUNTS = (14, 18, 20)
_PARTITION_FIELD_COUNT = 7


@dataclass(frozen=True, slots=True)
class DiskstatsRow:
    major: int
    minor: int
    device: str
    reads: int
    reads_merged: int
    sectors_read: int
    read_ms: int
    writes: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    in_progress: int
    io_ms: int
    weighted_io_ms: int
    discards: int | None
    discards_merged: int | None
    sectors_discarded: int | None
    discard_ms: int | None
    flushes: int | None
    flush_ms: int | None
    field_count: int


@dataclass(frozen=True, slots=True)
class DiskstatsSnapshot:
    ts: float | None  # epoch seconds from the TS line; None for bare /proc/diskstats text
    rows: tuple[DiskstatsRow, ...]
    warnings: tuple[str, ...] = ()


def parse_diskstats_line(line: str) -> DiskstatsRow | None:
    """One /proc/diskstats line, or None if it is not one (wrong field count, non-numeric counter)."""
    fields = line.split()
    n = len(fields)
    if n not in _FULL_FIELD_COUNTS and n != _PARTITION_FIELD_COUNT:
        return None
    # isdigit() alone accepts '²', which int() rejects.
    if not all(f.isascii() and f.isdigit() for f in fields[:2] + fields[3:]):
        return None
    major, minor, device = int(fields[0]), int(fields[1]), fields[2]
    counters = [int(f) for f in fields[3:]]
    if n == _PARTITION_FIELD_COUNT:
        reads, sectors_read, writes, sectors_written = counters
        counters = [reads, 0, sectors_read, 0, writes, 0, sectors_written, 0, 0, 0, 0]
    extra: list[int | None] = [*counters[11:], *([None] * (20 - max(n, 14)))]
    return DiskstatsRow(major, minor, device, *counters[:11], *extra, field_count=n)  # type: ignore[arg-type]


def _parse_lines(lines: list[tuple[int, str]]) -> tuple[list[DiskstatsRow], list[str]]:
    rows: list[DiskstatsRow] = []
    warnings: list[str] = []
    for lineno, line in lines:
        if not line.strip():
            continue
        row = parse_diskstats_line(line)
        if row is None:
            warnings.append(f"line {lineno}: not a diskstats line ({len(line.split())} fields): {line.strip()[:80]!r}")
        else:
            rows.append(row)
    return rows, warnings


def read_proc_diskstats(text: str, ts: float | None = None) -> DiskstatsSnapshot:
    """One /proc/diskstats snapshot with its warnings; `ts` is when the caller read it."""
    rows, warnings = _parse_lines(list(enumerate(text.splitlines(), start=1)))
    if not rows:
        raise ParseError("no /proc/diskstats line found")
    return DiskstatsSnapshot(ts=ts, rows=tuple(rows), warnings=tuple(warnings))


def parse_proc_diskstats(text: str) -> tuple[DiskstatsRow, ...]:
    """The rows of one /proc/diskstats snapshot (bad lines skipped; see `read_proc_diskstats`)."""
    return read_proc_diskstats(text).rows


def parse_pt_diskstats_samples(text: str) -> list[DiskstatsSnapshot]:
    """Snapshots of a pt-diskstats/pt-stalk `TS`-stamped file, or of repeated /proc/diskstats text."""
    numbered = list(enumerate(text.splitlines(), start=1))
    if any(_TS_LINE.match(line) for _, line in numbered):
        snapshots = _split_on_ts_lines(numbered)
    else:
        snapshots = _split_on_repeated_devices(numbered)
    if not any(s.rows for s in snapshots):
        raise ParseError("no diskstats sample found")
    return snapshots


def _split_on_ts_lines(numbered: list[tuple[int, str]]) -> list[DiskstatsSnapshot]:
    snapshots: list[DiskstatsSnapshot] = []
    ts: float | None = None
    block: list[tuple[int, str]] = []
    preamble_warnings: list[str] = []
    for lineno, line in numbered:
        match = _TS_LINE.match(line)
        if not match:
            block.append((lineno, line))
            continue
        if ts is not None:
            snapshots.append(_snapshot(ts, block))
        elif block:  # text before the first TS line belongs to no sample
            preamble_warnings += _parse_lines(block)[1] or [f"lines 1-{lineno - 1}: before the first TS line"]
        ts, block = float(match.group(1)), []
    if ts is not None:
        snapshots.append(_snapshot(ts, block))
    if snapshots and preamble_warnings:
        first = snapshots[0]
        snapshots[0] = DiskstatsSnapshot(first.ts, first.rows, tuple(preamble_warnings) + first.warnings)
    return snapshots


def _snapshot(ts: float | None, block: list[tuple[int, str]]) -> DiskstatsSnapshot:
    rows, warnings = _parse_lines(block)
    return DiskstatsSnapshot(ts=ts, rows=tuple(rows), warnings=tuple(warnings))


def _split_on_repeated_devices(numbered: list[tuple[int, str]]) -> list[DiskstatsSnapshot]:
    # The kernel prints each device once per read, so a device seen again starts the next read.
    blocks: list[list[tuple[int, str]]] = [[]]
    seen: set[tuple[str, ...]] = set()
    for lineno, line in numbered:
        key = tuple(line.split()[:3])
        if len(key) == 3 and key in seen:
            blocks.append([])
            seen.clear()
        if len(key) == 3:
            seen.add(key)
        blocks[-1].append((lineno, line))
    return [_snapshot(None, block) for block in blocks]
