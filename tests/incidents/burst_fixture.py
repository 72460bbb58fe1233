"""A burst made of real one-second readings: the first seconds of a capture of the local MariaDB
(tests/fixtures/captures/PROVENANCE.md), kept through the same code a live burst uses."""

from __future__ import annotations

import datetime as dt
import gzip
import json

from tests.conftest import FIXTURES

CAPTURE = FIXTURES / "captures" / "mariadb-10.11--adaptive-flushing-pinned-at-async.jsonl.gz"


def capture_seconds(count: int) -> list[list[dict]]:
    """The capture's readings grouped per second: each status text starts one."""
    seconds: list[list[dict]] = []
    with gzip.open(CAPTURE, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["kind"] == "innodb_status":
                if len(seconds) == count:
                    break
                seconds.append([])
            if seconds:
                seconds[-1].append(item)
    return seconds


def make_burst(server, count: int = 12, trigger: str = "checkpoint_age_pct_of_async", extra=None):
    """A finished burst of `count` real seconds; `extra(seq)` may add lines to a second."""
    from annotations.models import Annotation
    from incidents.bursts import keep_second
    from incidents.models import Burst

    seconds = capture_seconds(count)
    first = dt.datetime.fromisoformat(seconds[0][0]["ts"])
    last = dt.datetime.fromisoformat(seconds[-1][0]["ts"])
    variables = next(dict(i["rows"]) for s in seconds for i in s if i["kind"] == "variables")
    server.version, server.flavor, server.variables = variables["version"], "mariadb", variables
    server.save()
    annotation = Annotation.objects.create(server=server, time=first, time_end=last, tags=["burst"],
                                           text="One-second capture: checkpoint age past the trigger")
    burst = Burst.objects.create(server=server, trigger=trigger, reason="checkpoint age 92 % of the async point",
                                 started_at=first, ends_at=last + dt.timedelta(seconds=1), annotation=annotation)
    for seq, lines in enumerate(seconds):
        keep_second(burst, seq, lines + (extra(seq) if extra else []))
    burst.refresh_from_db()
    burst.status, burst.finished_at = Burst.Status.DONE, last
    burst.save()
    return burst
