"""Import a capture (our JSON-lines file, or a pt-stalk folder) into the sample tables.

Rows land with the captured timestamps through the same ingest functions a poll uses, so an
incident captured elsewhere is browsed on the same charts. Readings are stored in time order and
each newly stored one goes through timeseries.poll_events.after_poll, so variable changes and restarts
inside the capture are detected as they would be live. Every write is INSERT ... ON CONFLICT DO
NOTHING on the tables' primary keys, and detection runs only for rows actually inserted, so
importing the same capture twice adds nothing.
"""

from __future__ import annotations

import bisect
import datetime as dt
import gzip
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from analysis import purge
from collectors import sources
from collectors.parsers import pt_stalk
from collectors.parsers.diskstats import parse_proc_diskstats, parse_pt_diskstats_samples
from collectors.parsers.innodb_status import PARSER_VERSION, ParseError, parse_innodb_status
from servers import changes
from servers.models import CollectorRun, Server
from timeseries import ingest, poll_events
from timeseries.disk_ingest import save_disk_samples


@dataclass
class Moment:
    """What was read at one instant (any of the parts may be missing)."""

    ts: dt.datetime
    innodb_status: str | None = None
    global_status: dict[str, str] | None = None
    variables: dict[str, str] | None = None
    innodb_metrics: dict[str, int] | None = None
    innodb_trx: list[dict] | None = None  # INNODB_TRX with PROCESSLIST, as the capture read it


@dataclass
class Capture:
    moments: list[Moment] = field(default_factory=list)
    disk: list[tuple[dt.datetime, tuple]] = field(default_factory=list)  # (ts, DiskstatsRow records)
    iostat_reports: int = 0  # read, not stored: there is no iostat table (metrics come from diskstats)
    warnings: list[str] = field(default_factory=list)


@dataclass
class ImportResult:
    server: Server
    created: bool
    samples: int = 0
    disk_rows: int = 0
    annotations: int = 0
    warnings: list[str] = field(default_factory=list)


# ---- reading captures --------------------------------------------------------------------------


def read_capture(path: Path, tz: str = "UTC") -> Capture:
    """A JSON-lines capture file, or a pt-stalk folder (times in zone `tz`)."""
    return read_pt_stalk(path, ZoneInfo(tz)) if path.is_dir() else read_jsonl(path)


# Readings of one poll are one moment. A reader takes the kinds one after another, so each line
# of a capture may carry its own time, milliseconds apart, in any order. The rule: every reading
# within POLL_SPREAD of a SHOW ENGINE INNODB STATUS text joins the nearest such text that does
# not hold a reading of its kind yet, and the moment is stored at the status text's time; readings
# with no status text that near form moments of their own (grouped the same way around their
# earliest reading); a variables reading left alone joins the nearest stored moment, so a change
# seen between two polls is detected on a stored row.
POLL_SPREAD = dt.timedelta(seconds=1)
_MOMENT_KINDS = ("innodb_status", "global_status", "variables", "innodb_metrics", "innodb_trx")


def read_jsonl(path: Path) -> Capture:
    """A JSON-lines capture; a name ending in .gz is read through gzip (committed fixtures are)."""
    capture, readings = Capture(), []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                ts = _aware(dt.datetime.fromisoformat(item["ts"]), dt.UTC)
                kind = item["kind"]
            except (ValueError, KeyError, TypeError) as exc:
                capture.warnings.append(f"line {number}: not a capture reading ({exc})")
                continue
            if kind in _MOMENT_KINDS:
                readings.append((ts, kind, item))
            else:
                _add_host_reading(capture, ts, kind, item)
    capture.moments = _merge_variables(group_readings(readings))
    return capture


def _add_host_reading(capture: Capture, ts: dt.datetime, kind: str, item: dict) -> None:
    if kind == "diskstats":
        capture.disk.append((ts, parse_proc_diskstats(item.get("text", ""))))
    elif kind == "iostat":
        capture.iostat_reports += 1
    elif kind == "processlist":
        pass  # read, not stored: no table holds sessions (bursts keep them raw)
    else:
        capture.warnings.append(f"unknown reading kind {kind!r} at {ts.isoformat()} skipped")


def group_readings(readings: list[tuple[dt.datetime, str, dict]]) -> list[Moment]:
    """Moments from (time, kind, reading) in any order, by the rule above."""
    readings = sorted(readings, key=lambda r: (r[0], r[1] != "innodb_status"))
    moments = [Moment(ts) for ts, kind, _ in readings if kind == "innodb_status"]
    starts = [m.ts for m in moments]
    loose: list[tuple[dt.datetime, str, dict]] = []
    for ts, kind, item in readings:
        if kind == "innodb_status":
            index = bisect.bisect_left(starts, ts)
            while getattr(moments[index], kind) is not None:  # two texts at one instant: the next
                index += 1
            _put(moments[index], kind, item)
            continue
        near = [k for k in _nearest_first(starts, ts) if getattr(moments[k], kind) is None]
        if near:
            _put(moments[near[0]], kind, item)
        else:
            loose.append((ts, kind, item))
    for ts, kind, item in loose:  # no status text near: group around the earliest reading
        moment = moments[-1] if moments and moments[-1].innodb_status is None and \
            getattr(moments[-1], kind) is None and ts - moments[-1].ts <= POLL_SPREAD else None
        if moment is None:
            moment = Moment(ts)
            moments.append(moment)
        _put(moment, kind, item)
    return sorted(moments, key=lambda m: m.ts)


def _nearest_first(starts: list[dt.datetime], ts: dt.datetime) -> list[int]:
    """Indexes of the status texts within POLL_SPREAD of `ts`, nearest first (earlier on a tie)."""
    lo = bisect.bisect_left(starts, ts - POLL_SPREAD)
    hi = bisect.bisect_right(starts, ts + POLL_SPREAD)
    return sorted(range(lo, hi), key=lambda k: (abs((starts[k] - ts).total_seconds()), starts[k] > ts))


def _put(moment: Moment, kind: str, item: dict) -> None:
    if kind == "innodb_status":
        moment.innodb_status = item.get("text", "")
    elif kind == "innodb_metrics":
        moment.innodb_metrics = {str(n): int(v) for n, v in item.get("rows", [])}
    elif kind == "innodb_trx":
        moment.innodb_trx = [row for row in item.get("rows") or [] if isinstance(row, dict)]
    else:
        setattr(moment, kind, {str(n): str(v) for n, v in item.get("rows", [])})


def read_pt_stalk(folder: Path, tz: ZoneInfo) -> Capture:
    capture, moments = Capture(), {}
    files = sorted((f, info) for f in folder.iterdir() if (info := pt_stalk.parse_file_name(f.name)))
    for path, info in files:
        started = info.started.replace(tzinfo=tz).astimezone(dt.UTC)
        text = path.read_text(encoding="utf-8", errors="replace")
        if info.kind.startswith("innodbstatus"):
            _pt_innodb_status(moments, text, started, tz)
        elif info.kind == "mysqladmin":
            for i, table in enumerate(pt_stalk.parse_status_tables(text)):
                ts = started + dt.timedelta(seconds=i)  # -i1: one table a second from the start
                moments.setdefault(ts, Moment(ts)).global_status = table
        elif info.kind == "variables":
            moments.setdefault(started, Moment(started)).variables = pt_stalk.parse_variables(text)
        elif info.kind == "diskstats":
            _pt_diskstats(capture, text, started)
        elif info.kind == "iostat":
            capture.iostat_reports += text.count("Device")
    capture.moments = _merge_variables(sorted(moments.values(), key=lambda m: m.ts))
    return capture


def _pt_innodb_status(moments: dict, text: str, started: dt.datetime, tz: ZoneInfo) -> None:
    try:
        header = pt_stalk.parse_server_time(parse_innodb_status(text).server_time)
    except ParseError:
        header = None
    # The status text's own header time is when it was produced; the file prefix is the fallback.
    ts = header.replace(tzinfo=tz).astimezone(dt.UTC) if header else started
    moments.setdefault(ts, Moment(ts)).innodb_status = text


def _pt_diskstats(capture: Capture, text: str, started: dt.datetime) -> None:
    for i, snapshot in enumerate(parse_pt_diskstats_samples(text)):
        # TS lines carry epoch seconds; without them pt-stalk sampled once a second from the start
        ts = dt.datetime.fromtimestamp(snapshot.ts, dt.UTC) if snapshot.ts is not None else (
            started + dt.timedelta(seconds=i))
        capture.disk.append((ts, snapshot.rows))


def _merge_variables(moments: list[Moment]) -> list[Moment]:
    """A variables-only moment (pt-stalk reads them once) joins the nearest moment that stores a
    sample, so a change between two collections is detected on a stored row."""
    stored = [m for m in moments if m.innodb_status is not None or m.global_status is not None]
    if not stored:
        return moments
    for lone in [m for m in moments if m not in stored]:
        nearest = min(stored, key=lambda m: abs((m.ts - lone.ts).total_seconds()))
        nearest.variables = nearest.variables or lone.variables
    return stored


def _aware(value: dt.datetime, tz) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=tz)


# ---- storing -----------------------------------------------------------------------------------


def import_capture(path: Path, server_name: str, tz: str = "UTC") -> ImportResult:
    capture = read_capture(Path(path), tz)
    server, created = _server_for(server_name, capture)
    result = ImportResult(server, created, warnings=list(capture.warnings))
    started = timezone.now()
    previous_variables = changes.variables_at(server, capture.moments[0].ts) if capture.moments else None
    for moment in capture.moments:
        if _store_moment(server, moment, result):
            made = poll_events.after_poll(server, moment.ts, old_variables=previous_variables or None,
                                      new_variables=moment.variables, global_status=moment.global_status)
            result.annotations += len(made)
        if moment.variables is not None:
            previous_variables = moment.variables
    for ts, rows in capture.disk:
        result.disk_rows += save_disk_samples(server.pk, ts, [r for r in rows if _disk_row_worth(r)], {})
    _finish(server, capture, result, started)
    return result


def _server_for(name: str, capture: Capture) -> tuple[Server, bool]:
    server = Server.objects.filter(name=name).first()
    if server is not None:
        return server, False
    gaps = [(b.ts - a.ts).total_seconds() for a, b in zip(capture.moments, capture.moments[1:])]
    # The imported server's "poll interval" is the capture's: it sets the gap that breaks a rate.
    interval = max(1, round(statistics.median(gaps))) if gaps else 10
    server = Server.objects.create(name=name[:100], imported=True, enabled=False, poll_interval_s=interval)
    return server, True


def _store_moment(server: Server, moment: Moment, result: ImportResult) -> bool:
    """Store one moment as a sample row; True when it was new."""
    status = None
    if moment.innodb_status is not None:
        try:
            status = parse_innodb_status(moment.innodb_status)
        except ParseError as exc:
            result.warnings.append(f"{moment.ts.isoformat()}: status text not parsed ({exc})")
    if status is not None:
        inserted = ingest.save_innodb_sample(
            server, moment.ts, status=status, raw_text=moment.innodb_status, parser_version=PARSER_VERSION,
            global_status=moment.global_status, innodb_metrics=moment.innodb_metrics, notes=result.warnings,
            innodb_trx=_with_ages(moment.innodb_trx, status),
        )
    elif moment.global_status is not None:
        inserted = bool(ingest.save_innodb_samples([_status_only_row(server, moment)]))
    else:
        return False
    result.samples += int(inserted)
    return inserted


def _with_ages(rows: list[dict] | None, status) -> list[dict] | None:
    """Captures made before the poll asked the server for each transaction's age: the age is
    trx_started against the status text's header time (both the server's clock and zone)."""
    if not rows:
        return rows
    header = pt_stalk.parse_server_time(status.server_time)
    return [row if row.get("trx_age_s") is not None else {**row, "trx_age_s": purge.trx_age_s(row, header)}
            for row in rows]


def _status_only_row(server: Server, moment: Moment) -> dict:
    """A sample from SHOW GLOBAL STATUS alone (pt-stalk's mysqladmin seconds between status texts)."""
    fields = ingest.sample_fields_from_global_status(moment.global_status or {})
    ingest.fill_missing_from_global_status(fields, moment.global_status or {})
    fields.update(ingest.sample_fields_from_innodb_metrics(moment.innodb_metrics or {}))
    return ingest.sample_row(server.pk, moment.ts, **fields)


def _disk_row_worth(row) -> bool:
    return row.field_count >= 14 and any((row.reads, row.writes, row.io_ms, row.in_progress))


def _finish(server: Server, capture: Capture, result: ImportResult, started: dt.datetime) -> None:
    """Identity and latest variables from the capture; rollups for its range; an import run."""
    latest = next((m for m in reversed(capture.moments) if m.variables), None)
    fields = []
    if latest is not None and (server.variables_at is None or latest.ts >= server.variables_at):
        server.variables, server.variables_at = latest.variables, latest.ts
        version, comment = latest.variables.get("version", ""), latest.variables.get("version_comment", "")
        server.version, server.version_comment = version[:100], comment[:200]
        server.flavor = sources.flavor_of(version, comment) if version else server.flavor
        fields += ["variables", "variables_at", "version", "version_comment", "flavor"]
    if capture.moments and server.imported:
        last = capture.moments[-1].ts
        if server.last_sample_at is None or last > server.last_sample_at:
            server.last_sample_at = last
            fields.append("last_sample_at")
    if fields:
        server.save(update_fields=fields)
    if capture.moments and result.samples:
        _build_rollups(capture.moments[0].ts, capture.moments[-1].ts)
    with transaction.atomic():
        CollectorRun.objects.create(
            server=server, kind=CollectorRun.Kind.IMPORT, started_at=started, finished_at=timezone.now(),
            status=CollectorRun.Status.WARNING if result.warnings else CollectorRun.Status.OK,
            error="; ".join(result.warnings[:5])[:2000],
        )


def _build_rollups(first: dt.datetime, last: dt.datetime) -> None:
    # Imported rows are older than the rollup task's high-water mark: build their range now.
    from timeseries import rollups

    for resolution in rollups.LEVELS:
        rollups.build_range(resolution, first, last + dt.timedelta(seconds=1))
