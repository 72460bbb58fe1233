"""Through what a tuning variable acts, and the evidence that it engaged (DESIGN §4).

A metric can move after a change for reasons that have nothing to do with it. A careful DBA asks
two questions before crediting the change: did the change's own mechanism run at all, and is this
metric one it acts on? This table answers both for the variables innowatch knows; an unknown
variable gets the generic analysis and ``engaged = None`` ("mechanism unknown").

Each evidence function sees the before and after windows (metric name → [(epoch s, value)]), the
old and new values, and the context (async point, io_capacity, ...), and returns
``(engaged: True | False | None, evidence in words)``. None means the evidence is not available.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from analysis.trend import slope_per_s

Series = Sequence[tuple[float, float | None]]
Windows = Mapping[str, Series]
Evidence = Callable[[Windows, Windows, "str | None", "str | None", Mapping[str, float]], tuple["bool | None", str]]

# A rate this low is a counter standing still (rounding of sub-page flushes, one stray page).
IDLE_PAGES_PER_S = 0.5
# Purge is behind when the history list grows at least this fast (and by 10 % of its level an hour).
LAGGING_HLL_PER_H = 1000.0


def _mean(series: Series | None) -> float | None:
    values = [v for _, v in series or () if v is not None]
    return sum(values) / len(values) if values else None


def _slope_per_h(series: Series | None) -> float | None:
    points = [(t, v) for t, v in series or () if v is not None]
    slope = slope_per_s(points) if len(points) >= 3 else None
    return None if slope is None else 3600.0 * slope


def _on(value: str | None) -> bool:
    return (value or "").strip().upper() in ("ON", "1", "TRUE", "YES")


def adaptive_flushing(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """The adaptive path's own counter (INNODB_METRICS buffer_flush_adaptive_total_pages) must move
    in the window where adaptive flushing is ON; at the async point or below the low-water marks
    the page cleaner never takes that path, whatever the setting."""
    on_window, label = (after, "after") if _on(new) else (before, "before")
    off_window = before if on_window is after else after
    rate = _mean(on_window.get("flush_adaptive_pages_per_s"))
    other = _mean(off_window.get("flush_adaptive_pages_per_s"))
    if rate is None:
        return _adaptive_stand_in(on_window, off_window, label, context)
    if rate <= IDLE_PAGES_PER_S:
        return False, (f"the adaptive flush path did not run: buffer_flush_adaptive_total_pages moved "
                       f"{rate:.1f} pages/s in the {label} window, where adaptive flushing was ON "
                       f"(checkpoint age at the async point, or below the low-water marks)")
    return True, (f"the adaptive flush path ran: {rate:,.0f} pages/s in the {label} window"
                  + (f" ({other:,.0f} pages/s in the other)" if other is not None else ""))


def _adaptive_stand_in(on_window: Windows, off_window: Windows, label: str, context) -> tuple[bool | None, str]:
    """Without the adaptive counter: at the async point the page cleaner flushes furiously whatever
    the setting, so the adaptive path cannot be what decides; below it, flushing past the
    background budget (innodb_io_capacity) is the adaptive path's doing."""
    missing = "INNODB_METRICS buffer_flush_adaptive_total_pages is not enabled (innodb_monitor_enable)"
    age, async_point = _mean(on_window.get("checkpoint_age_bytes")), context.get("async_point_bytes")
    flushed, off_flushed = _mean(on_window.get("pages_flushed_per_s")), _mean(off_window.get("pages_flushed_per_s"))
    budget = context.get("io_capacity")
    if age is None or not async_point or flushed is None:
        return None, missing + "; no checkpoint age or flush rate to stand in for it"
    share = 100.0 * age / async_point
    if share >= 90:
        return False, (f"{missing}; in the {label} window, where adaptive flushing was ON, the checkpoint age "
                       f"sat at {share:.0f} % of the async point, where InnoDB flushes furiously whatever the "
                       f"setting: the adaptive path did not decide")
    if budget and flushed > 1.2 * budget and (off_flushed is None or flushed > 1.2 * off_flushed):
        return True, (f"{missing}; standing in: below the async point ({share:.0f} %) the page cleaner "
                      f"flushed {flushed:,.0f} pages/s, past the background budget of {budget:,.0f} "
                      f"(innodb_io_capacity)" + (f", against {off_flushed:,.0f} with it OFF" if off_flushed else ""))
    return None, missing + f"; flushing ({flushed:,.0f} pages/s) did not exceed the background budget"


def _lagging(window: Windows) -> tuple[bool | None, float | None]:
    slope = _slope_per_h(window.get("history_list_length"))
    level = _mean(window.get("history_list_length"))
    if slope is None or level is None:
        return None, slope
    return slope >= max(LAGGING_HLL_PER_H, 0.1 * level), slope


def purge(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """Purge threads and batch size matter only while purge is behind: the history list growing.
    When purge keeps up before and after, a purge setting has nothing to act on."""
    lag_before, slope_before = _lagging(before)
    lag_after, slope_after = _lagging(after)
    if lag_before is None or lag_after is None:
        return None, "no history list length in one of the windows"
    purged = [_mean(w.get("purge_undo_log_pages_per_s")) for w in (before, after)]
    throughput = ("; purge throughput " + " → ".join(f"{p:,.0f}" for p in purged) + " undo pages/s"
                  if None not in purged else "")
    words = f"history list {slope_before:+,.0f}/h before, {slope_after:+,.0f}/h after{throughput}"
    if (lag_before or lag_after) and None not in purged and max(purged) <= IDLE_PAGES_PER_S:
        return False, (f"purge was blocked, not short of threads ({words}): nothing was purged while the "
                       f"history grew, so an old read view held it back")
    if not (lag_before or lag_after):
        return False, f"purge kept up before and after ({words}): a purge setting had nothing to act on"
    return True, f"purge was behind ({words})"


def io_capacity(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """innodb_io_capacity sets the background and adaptive flush budget: it binds only when the page
    cleaner flushes at a rate of that order."""
    try:
        low = min(float(old), float(new))
    except (TypeError, ValueError):
        return None, "the old or new value is not a number"
    rates = [r for r in (_mean(before.get("pages_flushed_per_s")), _mean(after.get("pages_flushed_per_s")))
             if r is not None]
    if not rates:
        return None, "no flush rate in the windows"
    if max(rates) < 0.5 * low:
        return False, (f"flushing ran at {max(rates):,.0f} pages/s at most, below half of either capacity "
                       f"({old} → {new}): the budget did not bind")
    return True, f"flushing ran at {', '.join(f'{r:,.0f}' for r in rates)} pages/s, of the order of the budget"


def redo_log_size(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """A bigger or smaller redo log moves InnoDB's async and sync points, which govern flushing as
    soon as the checkpoint age comes near them."""
    age = _mean(before.get("checkpoint_age_bytes"))
    async_point = context.get("async_point_bytes")
    if age is None or not async_point:
        return None, "no checkpoint age or async point to compare"
    share = 100.0 * age / async_point
    if share < 25:
        return False, (f"the checkpoint age stayed at {share:.0f} % of the async point before the change: "
                       f"the thresholds were not what governed flushing")
    return True, f"the checkpoint age ran at {share:.0f} % of the async point before the change"


def _longest_hll(before: Windows, after: Windows) -> float | None:
    return max((v for w in (before, after) for _, v in w.get("history_list_length", ()) if v is not None),
               default=None)


# InnoDB delays each DML row operation by (history / innodb_max_purge_lag - 0.5) x 10 ms while the
# history is longer than the limit, and (5.6+, MariaDB) clamps that to innodb_max_purge_lag_delay
# (trx_purge_dml_delay: `if (delay > srv_max_purge_lag_delay) delay = srv_max_purge_lag_delay`), so at
# its default of 0 no DML is delayed whatever the limit.
def max_purge_lag(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """innodb_max_purge_lag delays DML only while the history list is longer than it (0 = never),
    and only by as much as innodb_max_purge_lag_delay allows."""
    try:
        limits = [float(v) for v in (old, new) if float(v) > 0]
    except (TypeError, ValueError):
        return None, "the old or new value is not a number"
    longest = _longest_hll(before, after)
    if longest is None:
        return None, "no history list length in the windows"
    if not limits or longest <= min(limits):
        return False, f"the history list (at most {longest:,.0f}) never reached the limit: no DML was delayed"
    if context.get("max_purge_lag_delay_us") == 0:
        return False, (f"the history list reached {longest:,.0f}, past the limit {min(limits):,.0f}, but "
                       "innodb_max_purge_lag_delay is 0: InnoDB caps the delay at 0 µs, so no DML was delayed")
    return True, f"the history list reached {longest:,.0f}, past the limit {min(limits):,.0f}"


def max_purge_lag_delay(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    """The cap on the DML delay matters only while innodb_max_purge_lag is set and exceeded."""
    limit = context.get("max_purge_lag")
    if limit is None:
        return None, "innodb_max_purge_lag in force is not known"
    if limit <= 0:
        return False, "innodb_max_purge_lag is 0: no DML delay to cap"
    longest = _longest_hll(before, after)
    if longest is None:
        return None, "no history list length in the windows"
    if longest <= limit:
        return False, f"the history list (at most {longest:,.0f}) never passed innodb_max_purge_lag {limit:,.0f}"
    return True, f"the history list reached {longest:,.0f}, past innodb_max_purge_lag {limit:,.0f}: DML was delayed"


def dirty_pages_limits(before: Windows, after: Windows, old, new, context) -> tuple[bool | None, str]:
    return None, "engagement of the dirty-page limits is not measured; judged on dirty pages and flushing"


@dataclass(frozen=True)
class Mechanism:
    acts_on: tuple[str, ...]
    evidence: Evidence


FLUSHING = ("checkpoint_age_bytes", "modified_age_bytes", "pages_dirty", "pages_flushed_per_s",
            "pages_flushed_per_redo_mb", "flush_adaptive_pages_per_s", "flush_background_pages_per_s")
PURGE = ("history_list_length", "purge_undo_log_pages_per_s", "purge_del_mark_records_per_s",
         "purge_upd_exist_or_extern_records_per_s")

MECHANISMS: dict[str, Mechanism] = {
    "innodb_adaptive_flushing": Mechanism(FLUSHING, adaptive_flushing),
    "innodb_adaptive_flushing_lwm": Mechanism(FLUSHING, adaptive_flushing),
    "innodb_purge_threads": Mechanism(PURGE, purge),
    "innodb_purge_batch_size": Mechanism(PURGE, purge),
    "innodb_io_capacity": Mechanism(FLUSHING, io_capacity),
    "innodb_io_capacity_max": Mechanism(FLUSHING, io_capacity),
    "innodb_log_file_size": Mechanism(FLUSHING, redo_log_size),
    "innodb_log_files_in_group": Mechanism(FLUSHING, redo_log_size),
    "innodb_redo_log_capacity": Mechanism(FLUSHING, redo_log_size),
    "innodb_max_purge_lag": Mechanism(PURGE, max_purge_lag),
    "innodb_max_purge_lag_delay": Mechanism(PURGE, max_purge_lag_delay),
    "innodb_max_dirty_pages_pct": Mechanism(FLUSHING, dirty_pages_limits),
    "innodb_max_dirty_pages_pct_lwm": Mechanism(FLUSHING, dirty_pages_limits),
}


def acts_on(variables) -> set[str] | None:
    """The metrics any of `variables` acts through; None when one of them is unknown."""
    metrics: set[str] = set()
    for name in variables:
        mechanism = MECHANISMS.get(name)
        if mechanism is None:
            return None
        metrics |= set(mechanism.acts_on)
    return metrics
