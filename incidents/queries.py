"""What the incident page shows of a burst: the worst second and what was waiting at it."""

from __future__ import annotations

from incidents.export import second_lines
from incidents.models import Burst, BurstSecond

# Which figure makes a second "worst", by what started the burst.
WORST_BY = {
    "checkpoint_age_pct_of_async": "checkpoint_age_bytes",
    "runway_minutes": "checkpoint_age_bytes",
    "semaphore_wait_s": "semaphore_longest_wait_s",
    "threads_running": "threads_running",
    "hll_growth_per_h": "history_list_length",
}
TOP_ROWS = 10


def worst_second(burst: Burst) -> BurstSecond | None:
    """The second with the highest figure of the burst's trigger (manual: the longest latch wait,
    else the most threads running, else the highest checkpoint age)."""
    seconds = BurstSecond.objects.filter(burst=burst).defer("lines_gz")
    keys = [WORST_BY[burst.trigger]] if burst.trigger in WORST_BY else \
        ["semaphore_longest_wait_s", "threads_running", "checkpoint_age_bytes"]
    for key in keys:
        best = seconds.filter(**{f"{key}__isnull": False}).order_by(f"-{key}", "seq").first()
        if best is not None and (getattr(best, key) or len(keys) == 1):
            return best
    return seconds.order_by("seq").first()


def second_detail(second: BurstSecond) -> dict:
    """One second's readings, for stepping through: texts and rows as the server gave them."""
    by_kind = {line["kind"]: line for line in second_lines(second)}
    status = dict(by_kind.get("global_status", {}).get("rows", []))
    return {
        "seq": second.seq,
        "ts": second.ts.isoformat(),
        "innodb_status": by_kind.get("innodb_status", {}).get("text", ""),
        "threads_running": second.threads_running,
        "checkpoint_age_bytes": second.checkpoint_age_bytes,
        "global_status": status,
        "processlist": by_kind.get("processlist", {}).get("rows", []),
        "innodb_trx": by_kind.get("innodb_trx", {}).get("rows") or [],
        "diskstats": by_kind.get("diskstats", {}).get("text", ""),
    }


def longest_waiting_threads(detail: dict) -> list[dict]:
    """Sessions at that second, longest in their state first (sleeping ones left out)."""
    rows = [r for r in detail["processlist"] if str(r.get("command", "")).lower() not in ("sleep", "daemon")]
    return sorted(rows, key=lambda r: -(r.get("time") or 0))[:TOP_ROWS]


def oldest_transactions(detail: dict) -> list[dict]:
    return sorted(detail["innodb_trx"], key=lambda r: str(r.get("trx_started") or ""))[:TOP_ROWS]
