"""Before/after comparison around a tuning change or deploy (DESIGN §4).

Per metric: mean, p50, p95, max, stddev, CV; spikiness of page flushing (CV and
peak/median of pages flushed per second); HLL slope per hour; a Welch t-test per metric;
workload (commits/s, redo bytes/s) checked so a change in load is not read as a change in
behaviour; a normalised figure, pages flushed per MB of redo.

Statistics are standard library only. The t-test's Student t CDF uses the regularized
incomplete beta function by Lentz's continued fraction (Numerical Recipes ``betacf``).

Time series are autocorrelated: ten-second samples of checkpoint age are far from independent,
so a naive t-test treats n samples as n independent observations and its p-value is too
small (optimistic). :func:`welch_t_test` therefore by default shrinks each sample size to an
effective size ``n_eff = n (1 - r1) / (1 + r1)`` from the lag-1 autocorrelation r1 (the AR(1)
approximation; r1 ≤ 0 leaves n unchanged). Treat p-values as a guide, not a proof.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from analysis.trend import slope_per_s

Series = Sequence[tuple[float, float | None]]

WORKLOAD_METRICS = ("commits_per_s", "redo_bytes_per_s")
SPIKY_METRIC = "pages_flushed_per_s"
HLL_METRIC = "history_list_length"
SPIKINESS_MIN_CV_CHANGE = 0.1
LARGE_CHANGE_PCT = 50.0  # named in the summary even when the test cannot confirm it
NORMALISED_METRIC = "pages_flushed_per_redo_mb"


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
    """``change_pct``: (after mean - before mean) / |before mean| × 100."""

    before: Stats
    after: Stats
    change_pct: float | None
    p_value: float | None
    significant: bool


@dataclass(frozen=True, slots=True)
class Report:
    """The before/after report; ``extra`` holds spikiness and HLL slope (before, after)."""

    metrics: dict[str, MetricChange]
    extra: dict[str, dict[str, float | None]] = field(default_factory=dict)
    workload_changed: bool = False
    summary: str = ""


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


def lag1_autocorrelation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation r1 (biased estimator, as in Box-Jenkins); 0 when undefined."""
    n = len(values)
    if n < 3:
        return 0.0
    m = _mean(values)
    den = math.fsum((v - m) ** 2 for v in values)
    if den == 0:
        return 0.0
    return math.fsum((values[i] - m) * (values[i + 1] - m) for i in range(n - 1)) / den


def effective_sample_size(values: Sequence[float]) -> float:
    """n (1 - r1) / (1 + r1), clamped to [min(n, 2), n]; negative r1 leaves n unchanged."""
    n = len(values)
    r1 = max(0.0, min(lag1_autocorrelation(values), 0.999))
    return max(min(float(n), 2.0), n * (1 - r1) / (1 + r1))


# ----------------------------------------------------------- distributions (stdlib only)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (Numerical Recipes betacf)."""
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (Numerical Recipes betai)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln_front) * _betacf(b, a, 1.0 - x) / b


def student_t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)."""
    if df <= 0 or math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def normal_two_sided_p(z: float) -> float:
    """P(|Z| ≥ |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


# ------------------------------------------------------------------------ tests


def welch_t_test(
    a: Sequence[float], b: Sequence[float], *, autocorrelation: bool = False
) -> float | None:
    """Two-sided p-value of Welch's unequal-variance t-test; None with < 2 values per side.

    With ``autocorrelation=True`` each side's n is replaced by its effective sample size
    (see module docstring) in the standard errors and the Welch-Satterthwaite df.
    """
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = _sample_var(a), _sample_var(b)
    assert va is not None and vb is not None
    na = effective_sample_size(a) if autocorrelation else float(len(a))
    nb = effective_sample_size(b) if autocorrelation else float(len(b))
    sa, sb = va / na, vb / nb
    diff = _mean(a) - _mean(b)
    if sa + sb == 0:
        return 1.0 if diff == 0 else 0.0
    t = diff / math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / (sa**2 / max(na - 1, 1e-9) + sb**2 / max(nb - 1, 1e-9))
    return student_t_two_sided_p(t, df)


def _ranks(values: Sequence[float]) -> tuple[list[float], float]:
    """Average ranks (1-based) and the tie term Σ(t³ - t)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties, i = 0.0, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        ties += (j - i + 1) ** 3 - (j - i + 1)
        i = j + 1
    return ranks, ties


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided p of the Mann-Whitney U test, normal approximation with tie and continuity
    corrections (as scipy's ``method='asymptotic'``). None when a side is empty."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return None
    ranks, ties = _ranks(list(a) + list(b))
    u1 = math.fsum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1))) if n > 1 else 0.0
    if var <= 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return min(1.0, normal_two_sided_p(max(z, 0.0)))


# ------------------------------------------------------------------ the report


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


def _metric_change(before: Series, after: Series, alpha: float) -> MetricChange:
    b, a = _values(before), _values(after)
    sb, sa = describe(b), describe(a)
    p = welch_t_test(b, a, autocorrelation=True)
    return MetricChange(sb, sa, _change_pct(sb.mean, sa.mean), p, p is not None and p < alpha)


def _extra(
    before: Mapping[str, Series], after: Mapping[str, Series]
) -> dict[str, dict[str, float | None]]:
    extra: dict[str, dict[str, float | None]] = {}
    if SPIKY_METRIC in before and SPIKY_METRIC in after:
        (cv_b, pm_b), (cv_a, pm_a) = (
            spikiness(_values(before[SPIKY_METRIC])),
            spikiness(_values(after[SPIKY_METRIC])),
        )
        extra[SPIKY_METRIC] = {
            "cv_before": cv_b,
            "cv_after": cv_a,
            "peak_over_median_before": pm_b,
            "peak_over_median_after": pm_a,
        }
    if HLL_METRIC in before and HLL_METRIC in after:
        slopes = [
            slope_per_hour([t for t, _ in s], [v for _, v in s])
            for s in (before[HLL_METRIC], after[HLL_METRIC])
        ]
        extra[HLL_METRIC] = {"slope_per_hour_before": slopes[0], "slope_per_hour_after": slopes[1]}
    return extra


def compare_windows(
    before: Mapping[str, Series],
    after: Mapping[str, Series],
    *,
    alpha: float = 0.05,
    workload_change_pct: float = 20.0,
) -> Report:
    """Compare the same metrics over a window before and a window after a change.

    ``before``/``after`` map metric names (units in the name: ``checkpoint_age_bytes``,
    ``pages_flushed_per_s``, ``commits_per_s``, ``redo_bytes_per_s``,
    ``history_list_length``…) to (epoch seconds, value) series; rates are already per second.
    Only names present in both windows are compared. ``pages_flushed_per_redo_mb`` is
    derived when pages flushed and redo rates are both given. Significance: Welch's t-test
    with the autocorrelation correction, p < ``alpha``. ``workload_changed`` is true when
    commits/s or redo bytes/s moved by more than ``workload_change_pct`` percent.
    """
    b, a = _with_derived(before), _with_derived(after)
    metrics = {name: _metric_change(b[name], a[name], alpha) for name in b if name in a}
    extra = _extra(b, a)
    moved = [
        name
        for name in WORKLOAD_METRICS
        if name in metrics and abs(metrics[name].change_pct or 0.0) > workload_change_pct
    ]
    summary = _summary(metrics, extra, moved)
    return Report(metrics, extra, bool(moved), summary)


# ------------------------------------------------------------------ words


_BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def _is_bytes(name: str) -> bool:
    return name.endswith(("_bytes", "_bytes_per_s"))


def _byte_unit(magnitude: float) -> tuple[str, float]:
    for unit, size in _BYTE_UNITS:
        if abs(magnitude) >= size:
            return unit, size
    return "B", 1.0


def format_value(name: str, value: float | None, *, scale_to: float | None = None) -> str:
    """A value for the summary; ``*_bytes`` in decimal units (1.9 GB), the unit chosen from
    ``scale_to`` when given so that a before → after pair shares one unit."""
    if value is None:
        return "n/a"
    if _is_bytes(name):
        unit, size = _byte_unit(scale_to if scale_to is not None else value)
        suffix = "/s" if name.endswith("_per_s") else ""
        digits = 0 if unit == "B" else 1
        return f"{value / size:.{digits}f} {unit}{suffix}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def _pair(name: str, before: float | None, after: float | None) -> str:
    scale = max(abs(before or 0.0), abs(after or 0.0))
    return (
        f"{format_value(name, before, scale_to=scale)} → "
        f"{format_value(name, after, scale_to=scale)}"
    )


def _direction(delta: float) -> str:
    return "rose" if delta > 0 else "fell"


def _spiky_words(extra: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    spiky = extra.get(SPIKY_METRIC, {})
    cv_b, cv_a = spiky.get("cv_before"), spiky.get("cv_after")
    # Relative and absolute: CV 0.01 → 0.03 is steady flushing either way, not news.
    if cv_b is None or cv_a is None or abs(cv_a - cv_b) < max(0.25 * max(cv_b, cv_a), SPIKINESS_MIN_CV_CHANGE):
        return []
    return [f"{SPIKY_METRIC}: spikiness (CV) {_direction(cv_a - cv_b)} {cv_b:.1f} → {cv_a:.1f}"]


def _hll_words(extra: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    hll = extra.get(HLL_METRIC, {})
    sb, sa = hll.get("slope_per_hour_before"), hll.get("slope_per_hour_after")
    if sb is None or sa is None or abs(sa - sb) < 0.25 * max(abs(sb), abs(sa), 1e-12):
        return []
    return [f"{HLL_METRIC}: trend {sb:+,.0f}/h → {sa:+,.0f}/h"]


def _metric_words(metrics: Mapping[str, MetricChange], limit: int = 3) -> list[str]:
    ranked = sorted(
        (
            (name, m)
            for name, m in metrics.items()
            if m.significant and m.change_pct is not None and name not in WORKLOAD_METRICS
        ),
        key=lambda item: -abs(item[1].change_pct or 0.0),
    )
    return [
        f"{name} {_direction(m.change_pct or 0.0)} {abs(m.change_pct or 0.0):.0f}% "
        f"({_pair(name, m.before.mean, m.after.mean)})"
        for name, m in ranked[:limit]
    ]


def _unconfirmed_words(metrics: Mapping[str, MetricChange], limit: int = 2) -> list[str]:
    """Large moves the test cannot confirm, named as such: a window that is one steady climb has
    a lag-1 autocorrelation near 1, hence an effective size of about 2, whatever the difference.
    Leaving a 70 % fall of checkpoint age out of the summary would hide the story."""
    ranked = sorted(
        (
            (name, m)
            for name, m in metrics.items()
            if not m.significant and m.change_pct is not None and abs(m.change_pct) >= LARGE_CHANGE_PCT
            and m.p_value is not None and name not in WORKLOAD_METRICS
        ),
        key=lambda item: -abs(item[1].change_pct or 0.0),
    )
    return [
        f"{name} {_direction(m.change_pct or 0.0)} {abs(m.change_pct or 0.0):.0f}% "
        f"({_pair(name, m.before.mean, m.after.mean)}; not significant, p = {m.p_value:.2f}: "
        f"too few independent samples, e.g. a window that is one steady climb)"
        for name, m in ranked[:limit]
    ]


def _summary(
    metrics: Mapping[str, MetricChange],
    extra: Mapping[str, Mapping[str, float | None]],
    moved: Sequence[str],
) -> str:
    parts = _spiky_words(extra) + _metric_words(metrics) + _unconfirmed_words(metrics) + _hll_words(extra)
    text = "; ".join(parts) if parts else "no significant change"
    if moved:
        how = ", ".join(
            f"{n} {_direction(metrics[n].change_pct or 0.0)} "
            f"{abs(metrics[n].change_pct or 0.0):.0f}%"
            for n in moved
        )
        text += (
            f". Warning: the workload changed too ({how}); differences may reflect load, "
            f"compare normalised figures such as {NORMALISED_METRIC}"
        )
    return text + "."
