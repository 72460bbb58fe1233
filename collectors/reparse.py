"""Re-parse stored raw status text with the current parser, and save live status as fixtures."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from django.db import transaction

from collectors import sources
from collectors.parsers.innodb_status import PARSER_VERSION, ParseError, parse_innodb_status
from servers.models import Server
from timeseries import ingest
from timeseries.compression import DecompressError, decompress_text
from timeseries.models import InnodbSample, RawStatus, SemaphoreWaitSample

# Only the columns that come from the status text change; global-status columns stay as read.
_TEXT_COLUMNS = ["complete", "warnings", "averages_window_s", "semaphore_waits", "semaphore_longest_wait_s",
                 *ingest.STATUS_COLUMNS]


def reparse(server: Server, since: dt.datetime, until: dt.datetime | None = None) -> tuple[int, int]:
    """Re-parse the server's raw status text in [since, until). Returns (updated, unparseable)."""
    raws = RawStatus.objects.filter(server=server, ts__gte=since)
    if until is not None:
        raws = raws.filter(ts__lt=until)
    updated = failed = 0
    for raw in raws.order_by("ts").iterator(chunk_size=200):
        try:
            status = parse_innodb_status(decompress_text(raw.text_zlib))
        except (ParseError, *DecompressError):
            failed += 1
            continue
        _store_reparsed(server, raw, status)
        updated += 1
    return updated, failed


def _store_reparsed(server: Server, raw: RawStatus, status) -> None:
    fields = ingest.fit_to_columns([ingest.sample_fields_from_status(status)])[0]
    with transaction.atomic():
        InnodbSample.objects.filter(server=server, ts=raw.ts).update(
            **{k: v for k, v in fields.items() if k in _TEXT_COLUMNS and v is not None}
        )
        SemaphoreWaitSample.objects.filter(server=server, ts=raw.ts).delete()
        SemaphoreWaitSample.objects.bulk_create(ingest.semaphore_rows(server, raw.ts, status))
        RawStatus.objects.filter(server=server, ts=raw.ts).update(parser_version=PARSER_VERSION)


CROSS_CHECK_STATUS = ("Innodb_checkpoint_age", "Innodb_history_list_length", "Innodb_buffer_pool_pages_dirty")


def capture_fixture(server: Server, case: str, directory: Path) -> Path:
    """Save the server's live status text exactly as the collector sees it, named
    `<flavour>-<major.minor>--<case>.txt`, with a .json of provenance and cross-check counters."""
    params = sources.ConnectionParams(server.host, server.port, server.user, server.get_password())
    reading = sources.read_server(params, with_variables=False)
    flavor = sources.flavor_of(reading.version, reading.version_comment)
    major_minor = ".".join(re.findall(r"\d+", reading.version)[:2]) or "unknown"
    stem = f"{flavor}-{major_minor}--{re.sub(r'[^a-z0-9-]+', '-', case.lower()).strip('-') or 'capture'}"
    directory.mkdir(parents=True, exist_ok=True)
    text_path = directory / f"{stem}.txt"
    text_path.write_text(reading.innodb_status, newline="")
    (directory / f"{stem}.json").write_text(json.dumps({
        "source_repo": "local capture",
        "version": reading.version,
        "captured_with": f"manage.py capture_fixture --server {server.name} at {reading.captured_at.isoformat()}",
        "global_status_at_capture": {k: reading.global_status.get(k) for k in CROSS_CHECK_STATUS
                                     if k in reading.global_status},
        "assertions": [],
    }, indent=1) + "\n")
    return text_path
