"""A burst as files: innowatch's own capture (JSON lines, gzip: what `manage.py import_capture`
reads, exactly as collectors.capture writes it) and a pt-stalk folder (zip).

pt-stalk names every file `<prefix>-<what>`, the prefix being the local time a collection started.
A burst is written as one-second collections (what `pt-stalk --run-time=1 --sleep=0` leaves): per
second `<prefix>-innodbstatus1` (SHOW ENGINE INNODB STATUS\\G), `-mysqladmin` (one SHOW GLOBAL
STATUS table), `-processlist` and `-transactions` (\\G rows after a `TS` line), `-diskstats` (a `TS`
line and /proc/diskstats) where read; `-variables` once, with the first second. The prefix is the
second the status text's own header names (the server's clock and zone), so the importer joins
each status text with its second's counters; no two seconds of a burst share one (ticks start on
whole seconds)."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import zipfile
from collections.abc import Iterator

from collectors.parsers import pt_stalk
from collectors.parsers.innodb_status import ParseError, parse_innodb_status
from incidents.models import Burst, BurstSecond


def second_lines(second: BurstSecond) -> list[dict]:
    out = []
    for line in gzip.decompress(bytes(second.lines_gz)).decode("utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def _seconds(burst: Burst) -> Iterator[BurstSecond]:
    return BurstSecond.objects.filter(burst=burst).order_by("seq").iterator(chunk_size=20)


def capture_jsonl_gz(burst: Burst) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as out:
        for second in _seconds(burst):
            out.write(gzip.decompress(bytes(second.lines_gz)))
    return buffer.getvalue()


def file_stem(burst: Burst) -> str:
    return f"{burst.server.name}-burst-{burst.started_at:%Y%m%dT%H%M%SZ}"


def pt_stalk_zip(burst: Burst) -> bytes:
    buffer, folder, used = io.BytesIO(), file_stem(burst), set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        first = True
        for second in _seconds(burst):
            by_kind = {line["kind"]: line for line in second_lines(second)}
            prefix = _prefix(by_kind, second.ts)
            if prefix in used:
                continue  # a second the server printed twice: pt-stalk cannot tell them apart
            used.add(prefix)
            for suffix, text in _files(by_kind, first):
                zf.writestr(f"{folder}/{prefix}-{suffix}", text)
            first = False
    return buffer.getvalue()


def _prefix(by_kind: dict, ts: dt.datetime) -> str:
    text = by_kind.get("innodb_status", {}).get("text") or ""
    try:
        header = pt_stalk.parse_server_time(parse_innodb_status(text).server_time)
    except ParseError:
        header = None
    return (header or ts.replace(tzinfo=None)).strftime("%Y_%m_%d_%H_%M_%S")


def _files(by_kind: dict, first: bool) -> list[tuple[str, str]]:
    files = []
    if "innodb_status" in by_kind:
        files.append(("innodbstatus1", _status_g(by_kind["innodb_status"]["text"])))
    if "global_status" in by_kind:
        files.append(("mysqladmin", _table(by_kind["global_status"]["rows"])))
    if first and "variables" in by_kind:
        files.append(("variables", _table(by_kind["variables"]["rows"])))
    if "processlist" in by_kind:
        files.append(("processlist", _ts_line(by_kind["processlist"]["ts"]) + _vertical(by_kind["processlist"]["rows"])))
    if "innodb_trx" in by_kind:
        files.append(("transactions", _ts_line(by_kind["innodb_trx"]["ts"]) + _vertical(by_kind["innodb_trx"]["rows"])))
    if "diskstats" in by_kind:
        files.append(("diskstats", _ts_line(by_kind["diskstats"]["ts"]) + by_kind["diskstats"]["text"]))
    return files


def _ts_line(iso: str) -> str:
    moment = dt.datetime.fromisoformat(iso)
    return f"TS {moment.timestamp():.6f} {moment:%Y-%m-%d %H:%M:%S}\n"


def _status_g(text: str) -> str:
    """The mysql client's \\G layout of SHOW ENGINE INNODB STATUS, as pt-stalk saves it."""
    return "*************************** 1. row ***************************\n" \
        f"  Type: InnoDB\n  Name: \nStatus: {text}\n"


def _table(rows: list) -> str:
    """`| Variable_name | Value |` as mysqladmin extended-status prints it."""
    pairs = [(str(n), "" if v is None else str(v).replace("\n", " ")) for n, v in rows]
    wn = max([len("Variable_name")] + [len(n) for n, _ in pairs])
    wv = max([len("Value")] + [len(v) for _, v in pairs])
    rule = f"+{'-' * (wn + 2)}+{'-' * (wv + 2)}+\n"
    body = "".join(f"| {n.ljust(wn)} | {v.ljust(wv)} |\n" for n, v in pairs)
    return rule + f"| {'Variable_name'.ljust(wn)} | {'Value'.ljust(wv)} |\n" + rule + body + rule


def _vertical(rows: list[dict]) -> str:
    """Rows as the mysql client's \\G prints them."""
    out = []
    for i, row in enumerate(rows, 1):
        width = max((len(k) for k in row), default=0)
        out.append(f"*************************** {i}. row ***************************\n")
        out += [f"{k.rjust(width)}: {'NULL' if v is None else v}\n" for k, v in row.items()]
    return "".join(out)
