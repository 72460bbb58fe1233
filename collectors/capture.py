"""Record a live server to a JSON-lines capture file (read back by collectors.imports).

One object per reading, each with the time its own query ran (`ts`, ISO 8601, UTC, microseconds;
the kinds of one poll are read one after another, milliseconds apart):

    {"ts": "...", "kind": "innodb_status", "text": "<SHOW ENGINE INNODB STATUS Status column>"}
    {"ts": "...", "kind": "global_status", "rows": [[name, value], ...]}
    {"ts": "...", "kind": "variables",     "rows": [[name, value], ...]}   first poll, then only when changed
    {"ts": "...", "kind": "innodb_metrics", "rows": [[name, count], ...]}  flushing by type, purge, where enabled
    {"ts": "...", "kind": "innodb_trx", "rows": [{"trx_id": ..., "user": ..., ...}, ...]}  with_trx only
    {"ts": "...", "kind": "processlist", "rows": [{"id": ..., "user": ..., "time": ..., ...}, ...]}  bursts only
    {"ts": "...", "kind": "diskstats", "text": "<this host's /proc/diskstats>"}   server on this host only
    {"ts": "...", "kind": "iostat", "text": "<iostat -dxk output>"}               same, if iostat exists

`innodb_metrics` is an addition to the kinds a pt-stalk capture holds: without it an imported capture would
lack the flushing-by-type series that polling stores.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TextIO

from collectors import disk_tasks, sources

ReadingHook = Callable[[sources.ServerReading], None]


def reading_lines(reading: sources.ServerReading, last_variables: dict | None) -> list[dict]:
    def ts(kind: str) -> str:
        return reading.read_at.get(kind, reading.captured_at).isoformat()

    lines = [
        {"ts": ts("innodb_status"), "kind": "innodb_status", "text": reading.innodb_status},
        {"ts": ts("global_status"), "kind": "global_status", "rows": sorted(reading.global_status.items())},
    ]
    if reading.variables is not None and reading.variables != last_variables:
        lines.append({"ts": ts("variables"), "kind": "variables", "rows": sorted(reading.variables.items())})
    if reading.innodb_metrics:
        lines.append({"ts": ts("innodb_metrics"), "kind": "innodb_metrics",
                      "rows": sorted(reading.innodb_metrics.items())})
    if reading.innodb_trx is not None:
        lines.append({"ts": ts("innodb_trx"), "kind": "innodb_trx", "rows": reading.innodb_trx})
    return lines


def host_lines() -> list[dict]:
    """This host's /proc/diskstats and (if installed) one `iostat -dxk` report."""
    captured_at, text = disk_tasks.read_diskstats_text()
    lines = [{"ts": captured_at.isoformat(), "kind": "diskstats", "text": text}]
    iostat = disk_tasks.read_iostat_text()
    if iostat is not None:
        lines.append({"ts": iostat[0].isoformat(), "kind": "iostat", "text": iostat[1]})
    return lines


def capture(
    params: sources.ConnectionParams,
    out: TextIO,
    *,
    seconds: float,
    interval_s: float,
    local_host: bool,
    on_reading: ReadingHook | None = None,
    with_trx: bool = False,
) -> int:
    """Read the server every `interval_s` for `seconds` (readings at 0, S, 2S, ... < N) and write
    each reading to `out` as it is taken; `on_reading` sees each reading after it is written.
    Returns the number of readings. A read error stops the capture (what was written stays).
    `with_trx` adds the open transactions (INNODB_TRX with their PROCESSLIST rows) to each reading."""
    count = max(1, int(seconds / interval_s + 0.5)) if interval_s > 0 else 1
    started = time.monotonic()
    last_variables: dict | None = None
    for i in range(count):
        _sleep_until(started + i * interval_s)
        reading = sources.read_server(params, with_variables=True, with_trx=with_trx)
        lines = reading_lines(reading, last_variables) + (host_lines() if local_host else [])
        out.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        out.flush()  # a capture cut short (Ctrl-C, crash) still holds every reading taken
        last_variables = reading.variables
        if on_reading is not None:
            on_reading(reading)
    return count


def _sleep_until(deadline: float) -> None:
    delay = deadline - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def store_as_poll(server) -> ReadingHook:
    """A hook that stores each reading exactly as a poll of `server` would (collectors.tasks)."""
    from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status
    from collectors.poll_state import record_reading
    from timeseries import ingest

    def store(reading: sources.ServerReading) -> None:
        ingest.save_innodb_sample(
            server, reading.captured_at, status=parse_innodb_status(reading.innodb_status),
            raw_text=reading.innodb_status, parser_version=PARSER_VERSION,
            global_status=reading.global_status, innodb_metrics=reading.innodb_metrics,
        )
        record_reading(server, reading)  # identity, variables, detected changes: as live

    return store
