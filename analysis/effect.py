"""What a tuning change did, judged like a careful DBA (DESIGN §4).

Per metric: the before and after windows described (mean, p50, p95, max, stddev, CV), and the
after window compared with what the before window's level and trend predict (an interrupted time
series with autocorrelation-robust errors, ``analysis.its``). Then a verdict per metric:

- ``inconclusive``: fewer than 6 points on either side.
- ``effect``: the after window departs from the prediction by a material amount (the metric's own
  materiality floor, below) and significantly (p < alpha), the change's mechanism engaged or is
  unknown, the metric is one the mechanism acts on, and the workload that drives it did not move.
- ``not_attributable``: it departs like that, but the mechanism did not engage, or the metric is
  not one this variable acts on, or the workload moved and drives it.
- ``trend``: before and after differ materially, but that is what the before trend predicted.
- ``no_effect``: anything else: the after window is what the before window predicted.

The workload is judged from measures that count autocommit work (transactions from the trx id
counter, redo bytes, rows changed, threads running), never from Com_commit, which counts COMMIT
statements only. Summaries are in the metric's units.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from analysis.effect_text import (  # noqa: F401  (format_value, display_value, metric_label: the report's words)
    HLL_METRIC,
    LOAD_DRIVEN,
    NORMALISED_METRIC,
    SPIKY_METRIC,
    WORKLOAD_CHANGE_PCT,
    WORKLOAD_METRICS,
    display_value,
    format_value,
    metric_label,
    summary,
)
from analysis.its import ItsResult, interrupted_time_series
from analysis.mechanisms import MECHANISMS
from analysis.trend import slope_per_s

Series = Sequence[tuple[float, float | None]]

VERDICTS = ("effect", "no_effect", "trend", "not_attributable", "inconclusive")


@dataclass(frozen=True, slots=True)
class Stats:
    """Summary of one window, in the metric's own units; None fields when ``n`` is 0
    (``stddev``/``cv`` also None for n = 1, ``cv`` None when the mean is 0)."""

    mean: float | None
    p50: float | None
    p95: float | None
    max: float | None
    stddev: float | None
    cv: float | None
    n: int


@dataclass(frozen=True, slots=True)
class MetricChange:
    """``change_pct``: (after mean − before mean) / |before mean| × 100. ``expected``: the mean the
    before window predicts for the after window; ``change_vs_expected_pct`` against it;
    ``p_value`` of that departure (HAC); ``reason``: why the verdict, in words."""

    before: Stats
    after: Stats
    change_pct: float | None
    p_value: float | None
    significant: bool
    verdict: str = "inconclusive"
    expected: float | None = None
    change_vs_expected_pct: float | None = None
    reason: str = ""
    trend_per_h: float | None = None
    counterfactual: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    """The report; ``extra`` holds spikiness and HLL slope (before, after); ``mechanism``:
    ``{"engaged": True | False | None, "evidence": "..."}``; ``workload``: change vs expected, %."""

    metrics: dict[str, MetricChange]
    extra: dict[str, dict[str, float | None]] = field(default_factory=dict)
    workload_changed: bool = False
    summary: str = ""
    mechanism: dict = field(default_factory=lambda: {"engaged": None, "evidence": "no variable changed"})
    workload: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------- descriptive statistics


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Percentile ``q`` (0-100) of sorted values by linear interpolation (numpy 'linear')."""
    if not sorted_values:
        raise ValueError("percentile of an empty sequence")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _sample_var(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    m = _mean(values)
    return math.fsum((v - m) ** 2 for v in values) / (len(values) - 1)


def describe(values: Sequence[float | None]) -> Stats:
    """mean, p50, p95, max, sample stddev (n-1), CV = stddev / |mean|; None values ignored."""
    vals = sorted(float(v) for v in values if v is not None and not math.isnan(v))
    if not vals:
        return Stats(None, None, None, None, None, None, 0)
    mean = _mean(vals)
    var = _sample_var(vals)
    sd = math.sqrt(var) if var is not None else None
    cv = sd / abs(mean) if sd is not None and mean != 0 else None
    return Stats(mean, percentile(vals, 50), percentile(vals, 95), vals[-1], sd, cv, len(vals))


def spikiness(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """(coefficient of variation, peak / median); None where undefined (median 0, n < 2)."""
    stats = describe(values)
    if stats.n == 0 or stats.max is None or stats.p50 is None:
        return None, None
    peak_over_median = stats.max / stats.p50 if stats.p50 != 0 else None
    return stats.cv, peak_over_median


def slope_per_hour(ts: Sequence[float], values: Sequence[float | None]) -> float | None:
    """Least-squares slope in units per hour; ``ts`` in epoch seconds; None if undefined."""
    slope = slope_per_s((t, float(v)) for t, v in zip(ts, values) if v is not None)
    return None if slope is None else slope * 3600.0


def _values(series: Series) -> list[float]:
    return [float(v) for _, v in series if v is not None and not math.isnan(v)]


def pages_flushed_per_redo_mb(
    pages_per_s: Series, redo_bytes_per_s: Series
) -> list[tuple[float, float | None]]:
    """Pages flushed per MB (10^6 bytes) of redo, per sample where both series share a
    timestamp and redo was written (> 0 bytes/s); a load-independent flushing figure."""
    redo = {t: v for t, v in redo_bytes_per_s if v is not None}
    out: list[tuple[float, float | None]] = []
    for t, pages in pages_per_s:
        r = redo.get(t)
        if pages is not None and r is not None and r > 0:
            out.append((t, pages / (r / 1e6)))
    return out


def _with_derived(window: Mapping[str, Series]) -> dict[str, Series]:
    series = dict(window)
    if SPIKY_METRIC in series and "redo_bytes_per_s" in series and NORMALISED_METRIC not in series:
        series[NORMALISED_METRIC] = pages_flushed_per_redo_mb(
            series[SPIKY_METRIC], series["redo_bytes_per_s"]
        )
    return series


def _change_pct(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before == 0:
        return None
    return (after - before) / abs(before) * 100.0


def materiality_floor(name: str, level: float, context: Mapping[str, float]) -> float:
    """The smallest move of `name` a DBA would call a change, from its level in the before window.
    Checkpoint age: 5 % of the async point (the scale that matters for a stall), else 10 %.
    History list: 1,000 entries or 10 % (7 → 75 entries is noise to purge). Dirty pages: 5 % and
    1 % of the buffer pool. Flush rates: 10 % and 5 pages/s. The load: 20 %. Anything else: 10 %."""
    level = abs(level)
    if name in ("checkpoint_age_bytes", "modified_age_bytes"):
        async_point = context.get("async_point_bytes")
        return max(0.05 * async_point if async_point else 0.10 * level, 1e6)
    if name == HLL_METRIC:
        return max(1000.0, 0.10 * level)
    if name == "pages_dirty":
        return max(0.05 * level, 0.01 * context.get("buffer_pool_pages", 0.0), 10.0)
    if name.startswith(("pages_flushed", "flush_")) and name.endswith("_per_s"):
        return max(0.10 * level, 5.0)
    if name in WORKLOAD_METRICS:
        return max(WORKLOAD_CHANGE_PCT / 100.0 * level, 1e-9)
    return max(0.10 * level, 1e-9)


def _upper(name: str, context: Mapping[str, float]) -> float | None:
    # InnoDB flushes furiously at the async point: a climb cannot be carried past it.
    if name in ("checkpoint_age_bytes", "modified_age_bytes") and context.get("async_point_bytes"):
        return 1.05 * context["async_point_bytes"]
    return 100.0 if name.endswith("_pct") else None


def _points(series: Series) -> list[tuple[float, float]]:
    return [(float(t), float(v)) for t, v in series if v is not None and not math.isnan(v)]


def _its(name: str, before: Series, after: Series, change_at: float, context, alpha: float) -> ItsResult | None:
    b = _points(before)
    level = sum(v for _, v in b) / len(b) if b else 0.0
    return interrupted_time_series(b, _points(after), change_at, floor=materiality_floor(name, level, context),
                                   upper=_upper(name, context), alpha=alpha)


def _verdict(name: str, fit: ItsResult | None, context, alpha: float, *, engaged, acts_on, load_moved: str,
             variable: str | None) -> tuple[str, str]:
    if fit is None:
        return "inconclusive", "fewer than 6 points in a window"
    floor = materiality_floor(name, fit.before_mean, context)
    departs = abs(fit.departure) >= floor and fit.p_value < alpha
    if departs:
        if engaged is False:
            return "not_attributable", "moved, but the change's mechanism did not engage"
        if acts_on is not None and name not in acts_on and name not in WORKLOAD_METRICS:
            return "not_attributable", f"moved, but {variable} does not act through it"
        if load_moved and name in LOAD_DRIVEN:
            return "not_attributable", f"moved, but the workload changed ({load_moved})"
        return "effect", "departs from what the before window predicted"
    if abs(fit.after_mean - fit.before_mean) >= floor and fit.trend_per_s is not None:
        return "trend", "continues what it did before the change"
    return "no_effect", "what the before window predicted"


def _load_verdict(name: str, fit: ItsResult | None, workload: Mapping[str, float]) -> tuple[str, str]:
    """The load is what the server was asked to do: it is compared with the load just before the
    change (workload_moves), and a move is the load's, not the change's."""
    if fit is None:
        return "inconclusive", "fewer than 6 points in a window"
    if name in workload:
        return "not_attributable", f"the workload moved ({workload[name]:+.0f} %): load, not behaviour"
    if name == "commits_per_s":
        return "no_effect", "COMMIT statements only: autocommit work is counted by transactions/s"
    return "no_effect", "the same load before and after"


def _metric_change(name, before, after, fit, verdict, reason, alpha) -> MetricChange:
    sb, sa = describe([v for _, v in before]), describe([v for _, v in after])
    expected = fit.expected if fit else None
    return MetricChange(
        sb, sa, _change_pct(sb.mean, sa.mean), fit.p_value if fit else None,
        bool(fit and fit.p_value < alpha), verdict, expected,
        _change_pct(expected, sa.mean) if fit else None, reason,
        fit.trend_per_s * 3600.0 if fit and fit.trend_per_s is not None else None,
        fit.counterfactual if fit else ())


def _extra(before: Mapping[str, Series], after: Mapping[str, Series]) -> dict[str, dict[str, float | None]]:
    extra: dict[str, dict[str, float | None]] = {}
    if SPIKY_METRIC in before and SPIKY_METRIC in after:
        (cv_b, pm_b), (cv_a, pm_a) = (spikiness(_values(before[SPIKY_METRIC])),
                                      spikiness(_values(after[SPIKY_METRIC])))
        extra[SPIKY_METRIC] = {"cv_before": cv_b, "cv_after": cv_a,
                               "peak_over_median_before": pm_b, "peak_over_median_after": pm_a}
    if HLL_METRIC in before and HLL_METRIC in after:
        slopes = [slope_per_hour([t for t, _ in s], [v for _, v in s]) for s in (before[HLL_METRIC], after[HLL_METRIC])]
        extra[HLL_METRIC] = {"slope_per_hour_before": slopes[0], "slope_per_hour_after": slopes[1]}
    return extra


def workload_moves(before: Mapping[str, Series], after: Mapping[str, Series]) -> dict[str, float]:
    """How the load changed across the change, in %: the after window against the load in force
    just before the change (the last third of the before window, at least 6 points), not against
    the whole window or its trend: a load that stepped up early in the before window and held is
    the same load after the change. Only moves past WORKLOAD_CHANGE_PCT (and a thread, for
    threads running) count."""
    moves = {}
    for name in WORKLOAD_METRICS:
        b, a = _values(before.get(name, ())), _values(after.get(name, ()))
        if len(b) < 6 or len(a) < 6:
            continue
        recent = b[-max(6, len(b) // 3):]
        level, now = sum(recent) / len(recent), sum(a) / len(a)
        if level == 0 or (name == "threads_running" and abs(now - level) < 1.0):
            continue
        pct = 100.0 * (now - level) / abs(level)
        if abs(pct) > WORKLOAD_CHANGE_PCT:
            moves[name] = pct
    return moves


def judge_change(
    before: Mapping[str, Series],
    after: Mapping[str, Series],
    *,
    change_at: float,
    variable: str | None = None,
    old: str | None = None,
    new: str | None = None,
    context: Mapping[str, float] | None = None,
    alpha: float = 0.05,
) -> Report:
    """The report for one change. ``before``/``after`` map metric names to (epoch s, value) series
    (rates already per second); workload series (``trx_per_s``, ``redo_bytes_per_s``,
    ``rows_changed_per_s``, ``threads_running``) and mechanism evidence (``flush_adaptive_pages_per_s``,
    ``purge_undo_log_pages_per_s``, ...) ride in the same mappings. ``context``: e.g.
    ``async_point_bytes``, ``buffer_pool_pages``."""
    context = context or {}
    b, a = _with_derived(before), _with_derived(after)
    names = [n for n in b if n in a]
    fits = {n: _its(n, b[n], a[n], change_at, context, alpha) for n in names}
    workload = workload_moves(b, a)
    load_moved = ", ".join(f"{metric_label(n)} {pct:+.0f} %" for n, pct in workload.items())
    mechanism = MECHANISMS.get(variable or "")
    if mechanism is None:
        engaged, evidence = None, "mechanism unknown" if variable else "no variable changed"
    else:
        engaged, evidence = mechanism.evidence(b, a, old, new, context)
    acts_on = mechanism.acts_on if mechanism else None
    metrics = {}
    for name in names:
        if name in WORKLOAD_METRICS or name == "commits_per_s":
            verdict, reason = _load_verdict(name, fits[name], workload)
        else:
            verdict, reason = _verdict(name, fits[name], context, alpha, engaged=engaged, acts_on=acts_on,
                                       load_moved=load_moved, variable=variable)
        metrics[name] = _metric_change(name, b[name], a[name], fits[name], verdict, reason, alpha)
    if not workload and NORMALISED_METRIC in metrics and SPIKY_METRIC in metrics:
        # The normalised figure is there to judge flushing when the load moved. Under the same load
        # it says what pages flushed/s says; alone it would credit the change with a wobble of redo.
        m, flushed = metrics[NORMALISED_METRIC], metrics[SPIKY_METRIC]
        metrics[NORMALISED_METRIC] = dataclasses.replace(
            m, verdict=flushed.verdict, reason="follows pages flushed/s: the load did not move")
    extra = _extra(b, a)
    report = Report(metrics, extra, bool(workload), "", {"engaged": engaged, "evidence": evidence}, workload)
    return Report(metrics, extra, bool(workload), summary(report, variable, load_moved),
                  report.mechanism, workload)


def compare_windows(before: Mapping[str, Series], after: Mapping[str, Series], *, alpha: float = 0.05) -> Report:
    """Two windows with no known change between them: the generic analysis (mechanism unknown)."""
    starts = [t for s in after.values() for t, _ in s[:1]]
    return judge_change(before, after, change_at=min(starts) if starts else 0.0, alpha=alpha)
