"""What-if replay: a server's own redo history run through the page cleaner's rules.

The load is taken as it was: the redo written per poll (LSN deltas), and the rate at which clean
pages became dirty (Δdirty + pages flushed per poll). The second depends on how many pages are
already dirty (a page modified again while dirty adds nothing): had the replay ``D`` dirty pages
where the server had ``D_m``, the rate is scaled by ``exp((D_m − D)/P)``, with ``P`` fitted on a
calibration window (new dirty pages per byte of redo ``≈ k × exp(−dirty/P)``). The flushing rules
come from analysis.page_cleaner.

The checkpoint age follows from bookkeeping, not from a fit: flush-list flushing writes the
oldest dirty pages first, so when F pages have been flushed since the start, the oldest dirty
page is the (F+1)-th page to have been dirtied, and the age is the redo written since then.
Pages dirty at the start are spread evenly over the measured age at the start. A share of the
dirty pages the server counts holds no place in that order (fitted on the calibration window,
see :attr:`Workload.stale_share`).

Left out (besides what analysis.page_cleaner leaves out): a change of load caused by the change
(a stalled server writes less redo; here the redo rate is the measured one, and "stall" marks
where users would have waited), pages dirtied again after being flushed within a poll, and LRU
flushes of dirty pages, which the measured flush counter includes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from analysis.page_cleaner import POLICIES, SCAN_FACTOR, CleanerState, FlushSettings, Moment

PATHS = ("background", "adaptive", "async", "sync")
_MAX_STEPS = 40_000  # substeps per replay; a 24 h range of 10 s polls runs in ~2.2 s steps


@dataclass(frozen=True, slots=True)
class Measured:
    """Per-poll measurements, oldest first (numpy float arrays of one length)."""

    t_s: np.ndarray
    lsn: np.ndarray
    age_bytes: np.ndarray
    dirty_pages: np.ndarray
    flushed_pages: np.ndarray  # cumulative counter


@dataclass(frozen=True, slots=True)
class Workload:
    """How redo turns into newly dirty pages (fitted by :func:`calibrate`)."""

    pages_per_byte: float
    hot_pages: float  # P; inf when the window showed no saturation
    # Share of "Modified db pages" that holds no place in the age order: MariaDB 10.6+ leaves pages
    # already written or freed on the flush list (oldest_modification 1) until a batch walks past.
    stale_share: float = 0.0

    def new_dirty_per_s(self, measured_per_s: float, measured_dirty: float, dirty: float) -> float:
        """The measured dirtying rate, had ``dirty`` pages been dirty instead of ``measured_dirty``."""
        if math.isinf(self.hot_pages):
            return measured_per_s
        return measured_per_s * min(max(math.exp((measured_dirty - dirty) / self.hot_pages), 0.1), 10.0)


@dataclass(slots=True)
class Replay:
    t_s: np.ndarray
    age_bytes: np.ndarray
    dirty_pages: np.ndarray
    flush_per_s: dict[str, np.ndarray]
    stall: np.ndarray
    crossings: list[dict] = field(default_factory=list)


def calibrate(m: Measured) -> Workload:
    """The workload of a window: :func:`fit_dirtying` and :func:`fit_stale_share`."""
    k, hot = fit_dirtying(m)
    return Workload(k, hot, fit_stale_share(m))


def fit_stale_share(m: Measured) -> float:
    """The share of dirty pages to leave out so that oldest-first bookkeeping of the measured
    dirty and flushed pages gives the measured checkpoint age (over the window's last two
    thirds, after the start-up guess of the initial pages has been flushed)."""
    flushed = m.flushed_pages - m.flushed_pages[0]
    arrived = np.maximum.accumulate(np.concatenate([[0.0], m.dirty_pages + flushed]))
    at_lsn = np.concatenate([[m.lsn[0] - m.age_bytes[0]], m.lsn])
    tail = slice(len(m.t_s) // 3, None)
    target = float(m.age_bytes[tail].mean())
    if target <= 0:
        return 0.0

    def error(share: float) -> float:
        return float((m.lsn - np.interp(flushed + share * m.dirty_pages, arrived, at_lsn))[tail].mean()) - target

    low, high = 0.0, 0.5
    if error(low) <= 0:
        return 0.0
    if error(high) > 0:
        return high
    for _ in range(30):  # the age falls as the share grows: bisection
        mid = (low + high) / 2
        low, high = (mid, high) if error(mid) > 0 else (low, mid)
    return (low + high) / 2


def fit_dirtying(m: Measured) -> tuple[float, float]:
    """Fit k and P on a window: new-dirty/redo against dirty pages, least squares over 10 s blocks
    (single polls are noisy: a flush batch lands between two readings)."""
    dt = np.diff(m.t_s)
    ok = dt > 0
    redo = np.diff(m.lsn)[ok]
    new = (np.diff(m.dirty_pages) + np.diff(m.flushed_pages))[ok]
    dirty = m.dirty_pages[1:][ok]
    span = np.cumsum(dt[ok])
    if redo.sum() <= 0:
        return 0.0, math.inf
    blocks = (span // 10).astype(int)
    sums = lambda v: np.bincount(blocks, weights=v)  # noqa: E731
    b_redo, b_new, b_n = sums(redo), sums(new), np.bincount(blocks)
    b_dirty = sums(dirty) / np.maximum(b_n, 1)
    keep = (b_redo > 0) & (b_new > 0)
    if not keep.any():
        return 0.0, math.inf
    y, x, w = np.log(b_new[keep] / b_redo[keep]), b_dirty[keep], b_redo[keep]
    mean_k = float(b_new[keep].sum() / b_redo[keep].sum())
    if len(x) < 3 or np.ptp(x) < 0.2 * max(x.max(), 1):
        return mean_k, math.inf
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))
    if slope >= 0:
        return mean_k, math.inf
    return float(math.exp(intercept)), float(-1 / slope)


class _Fifo:
    """Cumulative pages first dirtied against the LSN at that moment: oldest-first flushing."""

    def __init__(self, lsn0: float, age0: float, dirty0: float, stale0: float, capacity: int):
        self.n = np.empty(capacity + 2)
        self.lsn = np.empty(capacity + 2)
        self.n[0], self.lsn[0] = min(stale0, dirty0 - 1e-6), lsn0 - max(age0, 0.0)
        self.n[1], self.lsn[1] = dirty0, lsn0
        self.size = 2

    def add(self, n_total: float, lsn: float) -> None:
        self.n[self.size], self.lsn[self.size] = n_total, lsn
        self.size += 1

    def lsn_of_page(self, flushed: float) -> float:
        k = self.size
        return float(np.interp(flushed, self.n[:k], self.lsn[:k]))

    def pages_before(self, lsn: float) -> float:
        k = self.size
        return float(np.interp(lsn, self.lsn[:k], self.n[:k]))

    def flushed_for_age(self, lsn_now: float, age: float) -> float:
        """Flushed count at which the age would be ``age``."""
        return self.pages_before(lsn_now - age)


def replay(m: Measured, settings: FlushSettings, workload: Workload) -> Replay:
    """Run the load of ``m`` through the page cleaner of ``settings``; state starts as measured."""
    steps = _substeps(m.t_s)
    engine = _Engine(m, settings, workload, int(steps.sum()))
    out = _Arrays(len(m.t_s))
    out.record(0, m.age_bytes[0], m.dirty_pages[0], {}, False)
    for i in range(1, len(m.t_s)):
        interval = m.t_s[i] - m.t_s[i - 1]
        if interval <= 0:
            out.copy_previous(i)
            continue
        redo_per_s = max(m.lsn[i] - m.lsn[i - 1], 0.0) / interval
        dirtied = m.dirty_pages[i] - m.dirty_pages[i - 1] + m.flushed_pages[i] - m.flushed_pages[i - 1]
        load = (redo_per_s, max(dirtied, 0.0) / interval, (m.dirty_pages[i] + m.dirty_pages[i - 1]) / 2)
        k, dt = int(steps[i - 1]), interval / steps[i - 1]
        totals, stalled = dict.fromkeys(PATHS, 0.0), False
        for j in range(k):
            stalled |= engine.step(m.t_s[i - 1] + (j + 1) * dt, dt, load, totals)
        out.record(i, engine.age(), engine.dirty, {p: v / interval for p, v in totals.items()}, stalled)
    return out.result(m.t_s, settings)


class _Engine:
    """The replayed server: LSN, dirty pages in first-dirtied order, the page cleaner's state."""

    def __init__(self, m: Measured, settings: FlushSettings, workload: Workload, steps: int):
        self.s, self.w, self.stale = settings, workload, workload.stale_share
        self.policy = POLICIES[settings.family]
        self.state = _warm_state(m, settings)
        self.lsn, self.dirty, self.flushed = float(m.lsn[0]), float(m.dirty_pages[0]), 0.0
        self.new_total = self.dirty
        self.fifo = _Fifo(self.lsn, m.age_bytes[0], self.dirty, self.stale * self.dirty, steps)

    def age(self) -> float:
        return self.lsn - self.fifo.lsn_of_page(self.flushed + self.stale * self.dirty)

    def step(self, now: float, dt: float, load: tuple[float, float, float], totals: dict[str, float]) -> bool:
        """One page-cleaner iteration of ``dt`` seconds; adds pages flushed by path to ``totals``;
        True when user threads would have waited."""
        redo_per_s, dirtied_per_s, measured_dirty = load
        self.lsn += redo_per_s * dt
        new = min(self.w.new_dirty_per_s(dirtied_per_s, measured_dirty, self.dirty) * dt, self.s.pool_pages - self.dirty)
        self.new_total += max(new, 0.0)
        self.dirty += max(new, 0.0)
        self.fifo.add(self.new_total, self.lsn)
        age = self.age()
        ahead = self.fifo.pages_before(self.lsn - age + self.state.lsn_avg_rate * SCAN_FACTOR) - self.flushed
        d = self.policy(self.s, self.state, Moment(now, self.lsn, age, self.dirty, max(ahead, 0.0), dt))
        if d.target_age_bytes is not None:
            d.rates[next(iter(d.rates))] += self._pages_to_reach(d.target_age_bytes, d.stall, dt) / dt
        pages = min(sum(d.rates.values()) * dt, self.dirty)
        scale = pages / (sum(d.rates.values()) * dt) if pages > 0 else 0.0
        for path, rate in d.rates.items():
            totals[path] += rate * scale * dt
        self.flushed += pages
        self.dirty -= pages
        if "adaptive" in d.rates:
            self.state.last_pages = pages / dt  # one iteration's batch (a second of flushing)
        elif "sync" in d.rates:
            self.state.last_pages = 0.0
        return d.stall

    def _pages_to_reach(self, target_age: float, stall: bool, dt: float) -> float:
        """Oldest-first pages to flush for the age to fall to ``target_age``; MariaDB's soft flush
        does at most innodb_io_capacity_max a second, a furious or MySQL sync flush any number."""
        position = self.fifo.flushed_for_age(self.lsn, target_age)
        need = max((position - self.flushed - self.stale * self.dirty) / (1 - self.stale), 0.0)
        limit = math.inf if stall or self.s.family != "mariadb" else self.s.io_capacity_max * dt
        return min(need, limit)


def _substeps(t_s: np.ndarray) -> np.ndarray:
    """Substeps per poll interval: one per second of the page cleaner, fewer on long ranges."""
    span = float(t_s[-1] - t_s[0]) if len(t_s) > 1 else 0.0
    step_s = max(1.0, span / _MAX_STEPS)
    return np.maximum(np.ceil(np.diff(t_s) / step_s), 1).astype(int)


def _warm_state(m: Measured, s: FlushSettings) -> CleanerState:
    """The averages a running server already holds: the first minute's redo and flush rates."""
    head = m.t_s <= m.t_s[0] + 60
    span = max(float(m.t_s[head][-1] - m.t_s[0]), 1.0)
    redo = float(m.lsn[head][-1] - m.lsn[0]) / span
    pages = float(m.flushed_pages[head][-1] - m.flushed_pages[0]) / span
    # MariaDB with innodb_max_dirty_pages_pct_lwm = 0: a page cleaner that went idle (at or below
    # the adaptive-flushing lwm) sleeps until the async point, however far the age climbs above
    # the lwm meanwhile; a first minute that flushed nothing is that sleep (an awake cleaner
    # flushes every second).
    sleeping = s.max_dirty_pages_pct_lwm == 0 and (m.age_bytes[0] <= s.adaptive_lwm_bytes or pages < 1.0)
    return CleanerState(avg_page_rate=pages, lsn_avg_rate=redo, prev_lsn=float(m.lsn[0]), prev_time_s=float(m.t_s[0]),
                        sleeping=sleeping)


class _Arrays:
    def __init__(self, n: int):
        self.age, self.dirty, self.stall = np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool)
        self.flush = {p: np.zeros(n) for p in PATHS}

    def record(self, i: int, age: float, dirty: float, rates: dict[str, float], stall: bool) -> None:
        self.age[i], self.dirty[i], self.stall[i] = age, dirty, stall
        for path, rate in rates.items():
            self.flush[path][i] = rate

    def copy_previous(self, i: int) -> None:
        self.age[i], self.dirty[i] = self.age[i - 1], self.dirty[i - 1]

    def result(self, t_s: np.ndarray, s: FlushSettings) -> Replay:
        return Replay(t_s, self.age, self.dirty, self.flush, self.stall,
                      crossings(t_s, self.age, {"async": s.async_bytes, "sync": s.sync_bytes, "max": s.max_bytes}))


def crossings(t_s: np.ndarray, age: np.ndarray, points: dict[str, float | None]) -> list[dict]:
    """Where a series goes above / back below each named point: [{"point", "start", "end"}]."""
    found = []
    for name, level in points.items():
        if not level:
            continue
        above = age >= level
        edges = np.flatnonzero(np.diff(above.astype(int)))
        starts = ([0] if above[0] else []) + [e + 1 for e in edges if above[e + 1]]
        for s in starts:
            after = np.flatnonzero(~above[s:])
            end = s + after[0] if len(after) else None
            found.append({"point": name, "start": float(t_s[s]), "end": None if end is None else float(t_s[end])})
    return found


def fit(measured: np.ndarray, predicted: np.ndarray) -> dict[str, float | None]:
    """How close a replay is: mean and p95 of both, and their relative errors (percent)."""
    out: dict[str, float | None] = {}
    for name, fn in (("mean", np.mean), ("p95", lambda a: np.percentile(a, 95))):
        m, p = float(fn(measured)), float(fn(predicted))
        out[f"measured_{name}"], out[f"predicted_{name}"] = m, p
        out[f"{name}_error_pct"] = None if m == 0 else 100.0 * (p - m) / m
    return out
