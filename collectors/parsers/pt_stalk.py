"""pt-stalk capture folders: file names and the two table formats they hold. Pure.

A pt-stalk collection writes files named ``<prefix>-<what>`` where the prefix is the local time
the collection started, ``YYYY_MM_DD_HH_MM_SS``:

    -innodbstatus1 / -innodbstatus2   SHOW ENGINE INNODB STATUS\\G at the start and the end
    -mysqladmin                       ``mysqladmin extended-status -i1``: one SHOW GLOBAL STATUS
                                      table per second, the first at the prefix time
    -variables                        SHOW GLOBAL VARIABLES (mysql table, or tab-separated -ss output)
    -diskstats                        ``TS <epoch>`` lines each followed by /proc/diskstats
    -iostat                           ``iostat -dx 1`` reports

No time zone is written anywhere: the caller says which one the host used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_NAME = re.compile(r"^(?P<prefix>\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d)-(?P<kind>[a-z]+\d?)$")
_TABLE_ROW = re.compile(r"^\|\s*(?P<name>[^|]*?)\s*\|\s*(?P<value>.*?)\s*\|\s*$")
_HEADER_NAMES = {"Variable_name", "Name"}


@dataclass(frozen=True, slots=True)
class PtStalkFile:
    prefix: str
    kind: str  # innodbstatus1, innodbstatus2, mysqladmin, variables, diskstats, iostat, ...
    started: datetime  # naive: the capture host's local time


def parse_file_name(name: str) -> PtStalkFile | None:
    """``2018_03_05_13_24_55-innodbstatus1`` -> PtStalkFile; None for anything else."""
    m = _NAME.match(name)
    if m is None:
        return None
    try:
        started = datetime.strptime(m["prefix"], "%Y_%m_%d_%H_%M_%S")
    except ValueError:
        return None
    return PtStalkFile(m["prefix"], m["kind"], started)


def parse_status_tables(text: str) -> list[dict[str, str]]:
    """Consecutive ``| Variable_name | Value |`` tables (mysqladmin ext -i1) -> one dict each.

    A table starts at its header row; a name seen again also starts a new table, so output
    with the headers stripped still splits correctly."""
    tables: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        m = _TABLE_ROW.match(line.strip())
        if m is None:
            continue
        name, value = m["name"], m["value"]
        if name in _HEADER_NAMES or current is None or name in current:
            current = {}
            tables.append(current)
            if name in _HEADER_NAMES:
                continue
        current[name] = value
    return [t for t in tables if t]


def parse_variables(text: str) -> dict[str, str]:
    """SHOW GLOBAL VARIABLES as a mysql table or tab-separated (``-ss``, optionally with a
    header); ``TS`` lines pt-stalk writes between samples are skipped. The last value wins."""
    tables = parse_status_tables(text)
    if tables:
        merged: dict[str, str] = {}
        for table in tables:
            merged.update(table)
        return merged
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("TS ") or "\t" not in line:
            continue
        name, _, value = line.partition("\t")
        if name not in _HEADER_NAMES:
            values[name.strip()] = value.rstrip("\r")
    return values


def parse_server_time(text: str | None) -> datetime | None:
    """The monitor header time as the status parser keeps it (``180305 13:24:56`` or
    ``2018-03-05 13:24:56``) -> naive datetime in the server's local time."""
    if not text:
        return None
    for fmt in ("%y%m%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(" ".join(text.split()), fmt)
        except ValueError:
            continue
    return None
