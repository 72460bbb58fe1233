"""sysstat `iostat` output (text of any version and layout, or `-o JSON`): text in, frozen records out.

Columns are mapped by header name, never by position or version, because every sysstat release
moved them: `Device:` (<= 11.x) vs `Device`; `await` vs `r_await`/`w_await`; `avgqu-sz` vs `aqu-sz`;
`avgrq-sz` (sectors) vs `rareq-sz`/`wareq-sz` (kB); `svctm` (gone in 12.x); `rkB/s` (-k, default)
vs `rMB/s` (-m) vs `rsec/s`; `kB_read/s`/`MB_read/s`/`GB_read/s`/`Blk_read/s` in the plain report;
d/s, f/s (discard, flush: 12.x); `--pretty` puts the device name last; `--human` prints `222.1k`,
`1.5G`, `0.9%`; other locales print `0,52`.

`IostatReport` = one interval: `ts` (naive datetime as printed with `-t`, else None), `cpu`
(`avg-cpu` block, None with `-d`), `devices`. Each `IostatDevice` keeps every printed column in
`raw` (column -> text) and the normalised values below, None where not printed. Rates are per
second; sizes are KiB (converted from MB, GB or 512-byte sectors); times in ms.
Group rows (`-g NAME`, printed with a leading space) have `is_group=True`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

from collectors.parsers import ParseError

__all__ = ["IostatCpu", "IostatDevice", "IostatReport", "ParseError", "parse_iostat"]


@dataclass(frozen=True, slots=True)
class IostatCpu:
    user_pct: float
    nice_pct: float
    system_pct: float
    iowait_pct: float
    steal_pct: float
    idle_pct: float


@dataclass(frozen=True, slots=True)
class IostatDevice:
    device: str
    is_group: bool = False
    tps: float | None = None
    r_s: float | None = None
    w_s: float | None = None
    d_s: float | None = None
    f_s: float | None = None
    rkb_s: float | None = None
    wkb_s: float | None = None
    dkb_s: float | None = None
    kb_s: float | None = None  # -s: read + write + discard
    rrqm_s: float | None = None
    wrqm_s: float | None = None
    drqm_s: float | None = None
    rqm_s: float | None = None
    rrqm_pct: float | None = None
    wrqm_pct: float | None = None
    drqm_pct: float | None = None
    r_await_ms: float | None = None
    w_await_ms: float | None = None
    d_await_ms: float | None = None
    f_await_ms: float | None = None
    await_ms: float | None = None
    rareq_sz_kb: float | None = None
    wareq_sz_kb: float | None = None
    dareq_sz_kb: float | None = None
    areq_sz_kb: float | None = None
    avgrq_sz_sectors: float | None = None
    aqu_sz: float | None = None
    util_pct: float | None = None
    svctm_ms: float | None = None
    read_kb: float | None = None
    written_kb: float | None = None
    discarded_kb: float | None = None
    raw: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class IostatReport:
    ts: datetime | None
    cpu: IostatCpu | None
    devices: tuple[IostatDevice, ...]
    warnings: tuple[str, ...] = ()


_KB = 1.0
_MB = 1024.0
_GB = 1024.0 * 1024.0
_SECTOR = 0.5  # 512-byte sectors / blocks, in KiB

# header name -> (attribute, factor to our unit)
_COLUMNS: dict[str, tuple[str, float]] = {
    "tps": ("tps", 1.0),
    "r/s": ("r_s", 1.0), "w/s": ("w_s", 1.0), "d/s": ("d_s", 1.0), "f/s": ("f_s", 1.0),
    "rrqm/s": ("rrqm_s", 1.0), "wrqm/s": ("wrqm_s", 1.0), "drqm/s": ("drqm_s", 1.0), "rqm/s": ("rqm_s", 1.0),
    "%rrqm": ("rrqm_pct", 1.0), "%wrqm": ("wrqm_pct", 1.0), "%drqm": ("drqm_pct", 1.0),
    "r_await": ("r_await_ms", 1.0), "w_await": ("w_await_ms", 1.0), "d_await": ("d_await_ms", 1.0),
    "f_await": ("f_await_ms", 1.0), "await": ("await_ms", 1.0),
    "rareq-sz": ("rareq_sz_kb", 1.0), "wareq-sz": ("wareq_sz_kb", 1.0), "dareq-sz": ("dareq_sz_kb", 1.0),
    "areq-sz": ("areq_sz_kb", 1.0), "avgrq-sz": ("avgrq_sz_sectors", 1.0),
    "avgqu-sz": ("aqu_sz", 1.0), "aqu-sz": ("aqu_sz", 1.0),
    "%util": ("util_pct", 1.0), "svctm": ("svctm_ms", 1.0),
    "kB/s": ("kb_s", _KB), "MB/s": ("kb_s", _MB),
}  # fmt: skip
for _prefix, _factor in (("k", _KB), ("M", _MB), ("sec", _SECTOR)):
    for _dir in "rwd":
        _unit = "sec" if _prefix == "sec" else f"{_prefix}B"
        _COLUMNS[f"{_dir}{_unit}/s"] = (f"{_dir}kb_s", _factor)
for _unit, _factor in (("kB", _KB), ("MB", _MB), ("GB", _GB), ("Blk", _SECTOR)):
    for _word, _rate, _total in (("read", "rkb_s", "read_kb"), ("wrtn", "wkb_s", "written_kb"), ("dscd", "dkb_s", "discarded_kb")):
        _COLUMNS[f"{_unit}_{_word}/s"] = (_rate, _factor)
        _COLUMNS[f"{_unit}_{_word}"] = (_total, _factor)

# sysstat's JSON names some columns without the % of the text header.
_JSON_KEYS = {"rrqm": "%rrqm", "wrqm": "%wrqm", "drqm": "%drqm", "util": "%util"}
_HUMAN_SUFFIX = {"k": 1.0, "M": _MB, "G": _GB, "T": _GB * 1024, "P": _GB * _MB}
_TIMESTAMP = re.compile(r"^\s*(\d{2,4}[/-]\d{2}[/-]\d{2,4})[ T](\d{2}:\d{2}:\d{2})(?:\s*([AP]M))?\S*\s*$")
_BANNER = re.compile(r"^\S+ \S+ \(.*\)\s+\S+\s+_\S+_\s+\(\d+ CPU\)")


def parse_iostat(text: str) -> list[IostatReport]:
    """All reports of one iostat run (the first is the since-boot report unless `-y`)."""
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    reports = _TextReader().read(text)
    if reports is None:
        raise ParseError("not iostat output: no banner, avg-cpu block or Device header")
    return reports


def _number(text: str) -> float:
    """A printed value: `12.34`, `12,34` (locale), `1.5G` / `0.9%` (--human)."""
    value = text.rstrip("%")
    factor = 1.0
    if value and value[-1] in _HUMAN_SUFFIX:
        value, factor = value[:-1], _HUMAN_SUFFIX[value[-1]]
    return float(value.replace(",", ".")) * factor


def _is_number(text: str) -> bool:
    try:
        _number(text)
    except ValueError:
        return False
    return True


def _device(name: str, raw: dict[str, str], is_group: bool) -> IostatDevice:
    values: dict[str, float] = {}
    for column, text in raw.items():
        mapped = _COLUMNS.get(column)
        if mapped is not None:
            values[mapped[0]] = _number(text) * mapped[1]
    return IostatDevice(device=name, is_group=is_group, raw=raw, **values)  # type: ignore[arg-type]


def _cpu(names: list[str], values: list[str]) -> IostatCpu:
    by_name = {n.lstrip("%").lower(): _number(v) for n, v in zip(names, values, strict=False)}
    keys = ("user", "nice", "system", "iowait", "steal", "idle")
    return IostatCpu(*(by_name.get(k, 0.0) for k in keys))


def _timestamp(match: re.Match[str]) -> datetime | None:
    date, clock, ampm = match.groups()
    text = f"{date} {clock}" + (f" {ampm}" if ampm else "")
    for fmt in ("%m/%d/%y %H:%M:%S", "%m/%d/%Y %H:%M:%S", "%m/%d/%y %I:%M:%S %p", "%m/%d/%Y %I:%M:%S %p",
                "%Y-%m-%d %H:%M:%S", "%d/%m/%y %H:%M:%S", "%d.%m.%y %H:%M:%S"):  # fmt: skip
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


class _Report:
    """A report being read: devices merged by name (--pretty splits columns over blocks)."""

    def __init__(self, ts: datetime | None = None) -> None:
        self.ts = ts
        self.cpu: IostatCpu | None = None
        self.raw: dict[tuple[str, bool], dict[str, str]] = {}
        self.columns: set[str] = set()
        self.warnings: list[str] = []

    def empty(self) -> bool:
        return self.cpu is None and not self.raw and not self.columns

    def freeze(self) -> IostatReport:
        devices = tuple(_device(name, raw, group) for (name, group), raw in self.raw.items())
        return IostatReport(self.ts, self.cpu, devices, tuple(self.warnings))


class _TextReader:
    def __init__(self) -> None:
        self.reports: list[_Report] = []
        self.current = _Report()
        self.header: list[str] | None = None
        self.device_last = False
        self.pending_name: str | None = None
        self.recognised = False

    def read(self, text: str) -> list[IostatReport] | None:
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            i = self._line(lines, i)
        self._close()
        if not self.recognised:
            return None
        return [r.freeze() for r in self.reports or [self.current]]

    def _close(self) -> None:
        if not self.current.empty():
            self.reports.append(self.current)
        self.current = _Report()

    def _line(self, lines: list[str], i: int) -> int:
        line = lines[i]
        stamp = _TIMESTAMP.match(line)
        if not line.strip():
            self.header, self.pending_name = None, None
        elif _BANNER.match(line):
            self.recognised = True
        elif stamp:
            self._close()
            self.current.ts = _timestamp(stamp)
        elif line.startswith("avg-cpu:"):
            self.recognised = True
            if self.current.cpu is not None or self.current.raw:
                self._close()
            values = lines[i + 1].split() if i + 1 < len(lines) else []
            if all(_is_number(v) for v in values):
                self.current.cpu = _cpu(line.split()[1:], values)
            else:  # a garbled or truncated capture: keep the devices, lose the CPU line
                self.current.warnings.append(f"line {i + 2}: avg-cpu values are not numbers")
            return i + 2
        elif re.search(r"(^|\s)Device:?(\s|$)", line):
            self._header(line.split())
        elif self.header is not None:
            self._row(line, i + 1)
        else:
            self.current.warnings.append(f"line {i + 1}: unrecognised: {line.strip()[:80]!r}")
        return i + 1

    def _header(self, names: list[str]) -> None:
        self.recognised = True
        self.device_last = names[-1].startswith("Device")
        columns = names[:-1] if self.device_last else names[1:]
        if self.current.columns & set(columns):  # the same columns again: the next interval
            self._close()
        self.current.columns |= set(columns)
        self.header = columns

    def _row(self, line: str, lineno: int) -> None:
        assert self.header is not None
        tokens = line.split()
        if self.device_last:
            name, values = " ".join(tokens[len(self.header) :]), tokens[: len(self.header)]
        elif self.pending_name is not None:
            name, values, self.pending_name = self.pending_name, tokens, None
        elif len(tokens) == 1:  # old sysstat prints a long device name alone on its line
            self.pending_name = tokens[0]
            return
        else:
            name, values = tokens[0], tokens[1:]
        if len(values) != len(self.header) or not name:
            self.current.warnings.append(f"line {lineno}: {len(values)} values for {len(self.header)} columns")
            return
        if not all(_is_number(v) for v in values):
            self.current.warnings.append(f"line {lineno}: a value of {name!r} is not a number")
            return
        key = (name, line.startswith(" ") and not self.device_last)
        self.current.raw.setdefault(key, {}).update(zip(self.header, values, strict=True))


def _parse_json(text: str) -> list[IostatReport]:
    try:
        document = json.loads(text)
        statistics = document["sysstat"]["hosts"][0]["statistics"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ParseError(f"not iostat -o JSON output: {exc}") from exc
    return [_json_report(entry) for entry in statistics]


def _json_report(entry: dict[str, object]) -> IostatReport:
    cpu_block = entry.get("avg-cpu")
    cpu = None
    if isinstance(cpu_block, dict):
        cpu = _cpu(list(cpu_block), [str(v) for v in cpu_block.values()])
    devices = []
    for disk in entry.get("disk", []) or []:  # type: ignore[union-attr]
        name = str(disk.get("disk_device", ""))
        raw = {_JSON_KEYS.get(k, k): str(v) for k, v in disk.items() if k != "disk_device"}
        devices.append(_device(name.strip(), raw, name.startswith(" ")))
    stamp = entry.get("timestamp")
    match = _TIMESTAMP.match(str(stamp)) if stamp else None
    return IostatReport(_timestamp(match) if match else None, cpu, tuple(devices))
