"""Interrupted time series: what the window before a change predicts for the window after it, and
how far the after window departs from that prediction.

Per metric, two ordinary least-squares fits with Newey-West (HAC) standard errors, because
ten-second samples of checkpoint age or a flush rate are strongly autocorrelated and plain OLS
errors would make every wiggle "significant":

- the before window: ``y = b0 + b1·t`` (t in seconds from the change, so b0 is the level at the
  change);
- the after window: its mean, ``y = m``.

The counterfactual is the before fit carried into the after window. A trend is carried only when
it is clear (HAC p < alpha), steady (the line explains at least half the variance, R² ≥ 0.5: a
drift, not a wander of autocorrelated noise) and material (over the before window it moved the
metric by at least the metric's materiality floor); otherwise the before mean is the prediction. The trend is
carried no further than the before window was long (a 5-minute climb says nothing about minute 40)
and the prediction is clamped to the metric's physical range (no negative history length, no
checkpoint age past the point where InnoDB flushes furiously), so a steep before window cannot
predict the impossible.

The departure is ``m − mean(counterfactual over the after times)``; its standard error combines the
after mean's HAC variance with the before fit's HAC covariance (the windows are disjoint). The
p-value is two-sided, normal.

Lag rule: Andrews' (1991) automatic bandwidth for the Bartlett kernel under AR(1),
``ceil(1.1447 (α n)^(1/3))`` with ``α = 4ρ² / ((1−ρ)² (1+ρ)²)`` and ρ the lag-1 autocorrelation
of the residuals, never below Newey and West's (1994) rule ``floor(4 (n/100)^(2/9))`` nor above
n/2. The fixed Newey-West rule alone is far too short for a flush rate sampled every 10 s
(ρ ≈ 0.8): on such noise it called one in six unchanged windows "significant".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# numpy, scipy and statsmodels (~150 MB with pandas) load on the first report, not with every
# process that imports the views: the Celery worker runs Django's URL checks at start.

MIN_POINTS = 6
MIN_TREND_R2 = 0.5


@dataclass(frozen=True, slots=True)
class ItsResult:
    """``expected``: counterfactual mean of the after window; ``departure`` = after mean − expected.
    ``trend_per_s``: the before window's slope (None when not carried); ``trend_p``: its HAC p-value."""

    before_mean: float
    after_mean: float
    expected: float
    departure: float
    departure_se: float
    p_value: float
    trend_per_s: float | None
    trend_p: float | None
    n_before: int
    n_after: int
    counterfactual: tuple[tuple[float, float], ...] = ()  # (epoch s, predicted) at the after times


def newey_west_lags(n: int) -> int:
    return max(1, int(4 * (n / 100.0) ** (2.0 / 9.0)))


def hac_lags(residuals: "np.ndarray") -> int:
    n = len(residuals)
    centred = residuals - residuals.mean()
    den = float(centred @ centred)
    rho = float(centred[1:] @ centred[:-1]) / den if den > 0 else 0.0
    rho = min(max(rho, 0.0), 0.97)
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    andrews = math.ceil(1.1447 * (alpha * n) ** (1.0 / 3.0)) if alpha > 0 else 0
    return int(min(max(newey_west_lags(n), andrews), max(1, n // 2)))


def _hac(y: "np.ndarray", x: "np.ndarray"):
    import statsmodels.api as sm

    model = sm.OLS(y, x)
    lags = hac_lags(model.fit().resid)
    return model.fit(cov_type="HAC", cov_kwds={"maxlags": lags})


def _mean_and_se(values: "np.ndarray") -> tuple[float, float]:
    import numpy as np

    if np.ptp(values) == 0:
        return float(values[0]), 0.0
    fit = _hac(values, np.ones((len(values), 1)))
    return float(fit.params[0]), float(fit.bse[0])


def interrupted_time_series(
    before: Sequence[tuple[float, float]],
    after: Sequence[tuple[float, float]],
    change_at: float,
    *,
    floor: float,
    lower: float | None = 0.0,
    upper: float | None = None,
    alpha: float = 0.05,
) -> ItsResult | None:
    """The before trend carried over the after window, and the after window's departure from it.
    ``floor``: the smallest move that matters for this metric (its materiality floor); ``lower`` /
    ``upper``: the physical range of the metric. None when either window has fewer than
    ``MIN_POINTS`` points."""
    if len(before) < MIN_POINTS or len(after) < MIN_POINTS:
        return None
    import numpy as np
    import statsmodels.api as sm
    from scipy import stats

    tb = np.array([t - change_at for t, _ in before], dtype=float)
    yb = np.array([v for _, v in before], dtype=float)
    ta = np.array([t - change_at for t, _ in after], dtype=float)
    ya = np.array([v for _, v in after], dtype=float)
    after_mean, after_se = _mean_and_se(ya)
    before_mean, before_se = _mean_and_se(yb)

    trend, trend_p, expected, expected_se = None, None, before_mean, before_se
    predicted = np.full(len(ta), before_mean)
    span = float(tb.max() - tb.min())
    if span > 0 and np.ptp(yb) > 0:
        fit = _hac(yb, sm.add_constant(tb, has_constant="add"))
        slope, slope_p = float(fit.params[1]), float(fit.pvalues[1])
        trend_p = slope_p if math.isfinite(slope_p) else None
        if trend_p is not None and trend_p < alpha and fit.rsquared >= MIN_TREND_R2 and abs(slope) * span >= floor:
            trend = slope
            horizon = np.minimum(ta, span)  # carried no further than it was observed
            predicted = fit.params[0] + slope * horizon
            if lower is not None:
                predicted = np.maximum(predicted, lower)
            if upper is not None:
                predicted = np.minimum(predicted, upper)
            expected = float(predicted.mean())
            gradient = np.array([1.0, float(horizon.mean())])
            expected_se = float(math.sqrt(max(gradient @ fit.cov_params() @ gradient, 0.0)))
    departure = after_mean - expected
    se = math.sqrt(after_se**2 + expected_se**2)
    if se > 0:
        p = float(2 * stats.norm.sf(abs(departure) / se))
    else:
        p = 0.0 if departure != 0 else 1.0
    line = tuple((float(t + change_at), float(v)) for t, v in zip(ta, predicted))
    return ItsResult(before_mean, after_mean, expected, departure, se, p, trend, trend_p, len(yb), len(ya), line)
