"""How many pages InnoDB's page cleaner flushes in one second, per version family.

Each policy is the decision one page-cleaner iteration takes (about once a second), written from
the server's own source; the what-if replay (analysis.whatif) calls it with the state it tracks.

* MariaDB 10.5+ (10.11 above all): ``storage/innobase/buf/buf0flu.cc`` ``buf_flush_page_cleaner()``,
  ``page_cleaner_flush_pages_recommendation()``, ``af_get_pct_for_lsn()``, ``af_needed_for_redo()``;
  ``mtr0mtr.cc`` ``mtr_t::commit()`` → ``buf_flush_ahead()`` past ``max_modified_age_async``
  (soft target: up to ``innodb_io_capacity_max`` a second) and past ``max_checkpoint_age``
  (furious: ``buf_flush_sync_for_checkpoint()``, user threads wait in ``log_checkpoint_margin()``).
* MySQL 8.0 / 8.4 and 5.7 (Percona 5.7 too): ``buf0flu.cc`` ``page_cleaner_flush_pages_recommendation()``,
  ``af_get_pct_for_dirty()``, ``af_get_pct_for_lsn()`` (Percona: ``innodb_cleaner_lsn_age_factor``
  LEGACY = f√f / 7.5, HIGH_CHECKPOINT = f²√f / 700.5), averaged over ``innodb_flushing_avg_loops``;
  past the sync point (``max_modified_age_sync``; 8.0.30+ ``adaptive_flush_max_age``) a sync flush
  brings the age back to it at whatever rate it takes.

What the policies leave out: LRU (eviction) flushing and single-page flushes (a pool with free
pages does none), idle flushing when no transaction commits, the device's own limit (a flush the
policy asks for is assumed to happen), checkpoint writes lagging the oldest dirty page (the model's
age is the modified age), doublewrite, multiple buffer-pool instances (MySQL splits the request
evenly), and on MariaDB the activity-count wake-ups.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# buf_flush_lsn_scan_factor: the page cleaner counts dirty pages within 3 s of redo ahead of the
# oldest and asks for a third of them.
SCAN_FACTOR = 3


@dataclass(frozen=True, slots=True)
class FlushSettings:
    """The variables and limits a policy reads. Bytes are LSN units; pct are percent."""

    family: str  # "mariadb" (10.5+), "mysql8", "mysql57" (Percona 5.7 too)
    io_capacity: int
    io_capacity_max: int
    adaptive_flushing: bool
    async_bytes: int
    max_bytes: int
    log_capacity_bytes: int
    pool_pages: int
    sync_bytes: int | None = None  # MySQL only; MariaDB 10.5+ has none
    adaptive_flushing_lwm_pct: float = 10.0
    max_dirty_pages_pct: float = 90.0
    max_dirty_pages_pct_lwm: float = 0.0
    flushing_avg_loops: int = 30
    lsn_age_factor: str = "legacy"  # Percona 5.7 innodb_cleaner_lsn_age_factor: high_checkpoint

    @property
    def adaptive_lwm_bytes(self) -> float:
        # af_get_pct_for_lsn(): af_lwm = innodb_adaptive_flushing_lwm * log_capacity / 100
        return self.adaptive_flushing_lwm_pct * self.log_capacity_bytes / 100


@dataclass(slots=True)
class CleanerState:
    """What the page cleaner keeps between iterations (the function-static variables of
    page_cleaner_flush_pages_recommendation(): prev_lsn, prev_time, sum_pages, n_iterations,
    avg_page_rate, and the file-static lsn_avg_rate)."""

    avg_page_rate: float = 0.0
    lsn_avg_rate: float = 0.0
    sum_pages: float = 0.0
    iterations: int = 0
    prev_lsn: float = 0.0  # 0: not primed
    prev_time_s: float = 0.0
    sleeping: bool = False  # MariaDB, innodb_max_dirty_pages_pct_lwm = 0: untimed wait
    last_pages: float = 0.0  # pages the last batch flushed (last_pages_in)


@dataclass(frozen=True, slots=True)
class Moment:
    """The state one iteration looks at (per-second quantities)."""

    now_s: float
    lsn: float
    age_bytes: float
    dirty_pages: float
    pages_for_lsn: float  # dirty pages first dirtied within 3 × lsn_avg_rate of redo past the oldest
    dt_s: float


@dataclass(slots=True)
class Decision:
    """Pages per second by path; ``stall`` when user threads would wait for flushing."""

    rates: dict[str, float] = field(default_factory=dict)
    target_age_bytes: float | None = None  # flush down to this age at once (async / sync / furious)
    stall: bool = False


def pct_for_lsn(s: FlushSettings, age: float) -> float:
    """af_get_pct_for_lsn(): percent of io_capacity asked for by the redo age."""
    if age < s.adaptive_lwm_bytes or s.async_bytes <= 0 or s.io_capacity <= 0:
        return 0.0
    if s.family != "mariadb" and not s.adaptive_flushing and age < s.async_bytes:
        return 0.0
    factor = float(int(age * 100 // s.async_bytes))  # lsn_t integer division in the server
    ratio = s.io_capacity_max // s.io_capacity
    if s.lsn_age_factor == "high_checkpoint":
        return ratio * factor * factor * math.sqrt(factor) / 700.5
    return ratio * factor * math.sqrt(factor) / 7.5


def _update_averages(s: FlushSettings, st: CleanerState, m: Moment) -> None:
    """sum_pages += last_pages_in; every innodb_flushing_avg_loops iterations (or seconds since
    prev_time, counted in whole seconds as time() does) avg_page_rate and lsn_avg_rate move half
    way to the window's rates. prev_time is also reset where the caller returns early (MariaDB:
    age below the lwm) while sum_pages and n_iterations are not: the next average then divides
    many iterations' pages by a second or two, and the batch that follows is several times
    innodb_io_capacity (measured on 10.11.19: bursts of ~780 pages/s with io_capacity 100)."""
    st.sum_pages += st.last_pages
    st.iterations += 1
    elapsed = max(math.floor(m.now_s) - math.floor(st.prev_time_s), 1)
    if st.iterations >= s.flushing_avg_loops or elapsed >= s.flushing_avg_loops:
        st.avg_page_rate = (st.sum_pages / elapsed + st.avg_page_rate) / 2
        st.lsn_avg_rate = (st.lsn_avg_rate + (m.lsn - st.prev_lsn) / elapsed) / 2
        st.prev_lsn, st.prev_time_s, st.sum_pages, st.iterations = m.lsn, m.now_s, 0.0, 0


def _mariadb_recommendation(s: FlushSettings, st: CleanerState, m: Moment, pct_lwm: float) -> float:
    """page_cleaner_flush_pages_recommendation(), MariaDB 10.5+."""
    dirty_pct = 100.0 * m.dirty_pages / max(s.pool_pages, 1)
    lsn_pct = pct_for_lsn(s, m.age_bytes)
    if not st.prev_lsn or lsn_pct == 0:
        st.prev_lsn, st.prev_time_s = m.lsn, m.now_s
        if s.io_capacity >= m.dirty_pages:
            return m.dirty_pages
        scaled = dirty_pct / s.max_dirty_pages_pct if s.max_dirty_pages_pct > 1 else dirty_pct
        if scaled * s.io_capacity < m.dirty_pages:
            return float(s.io_capacity)
        return float(min(s.io_capacity_max, m.dirty_pages))
    _update_averages(s, st, m)
    if pct_lwm == 0 or s.max_dirty_pages_pct == 0:
        total_ratio = 1.0
    else:
        total_ratio = max(lsn_pct / 100, dirty_pct / s.max_dirty_pages_pct)
    for_lsn = max(min(m.pages_for_lsn, s.io_capacity_max) // SCAN_FACTOR, 1)
    n = (int(s.io_capacity * total_ratio) + st.avg_page_rate + for_lsn) / 3
    return min(n, s.io_capacity_max)


def mariadb(s: FlushSettings, st: CleanerState, m: Moment) -> Decision:
    """One iteration of buf_flush_page_cleaner(), MariaDB 10.5+."""
    if m.age_bytes >= s.max_bytes:
        # log_close() → PAGE_FLUSH_SYNC: furious flushing at innodb_io_capacity_max, users wait.
        st.sleeping = False
        return Decision({"sync": 0.0}, target_age_bytes=s.async_bytes, stall=True)
    if m.age_bytes > s.async_bytes:
        # buf_flush_ahead(lsn, false): up to innodb_io_capacity_max a second until the oldest
        # page passes the target. Measured on 10.11: the age is held at the async point.
        st.sleeping = False
        return Decision({"async": 0.0}, target_age_bytes=s.async_bytes)
    dirty_pct = 100.0 * m.dirty_pages / max(s.pool_pages, 1)
    pct_lwm = s.max_dirty_pages_pct_lwm
    if pct_lwm == 0 and st.sleeping and dirty_pct < s.max_dirty_pages_pct:
        return Decision()  # untimed wait: only buf_flush_ahead() or a full pool wakes it
    if pct_lwm != 0 and dirty_pct < pct_lwm:
        pct_lwm = 0.0  # maybe_unemployed
    gated = s.max_dirty_pages_pct_lwm == 0 or pct_lwm == 0
    if gated and dirty_pct < s.max_dirty_pages_pct and m.age_bytes <= s.adaptive_lwm_bytes:
        st.sleeping = s.max_dirty_pages_pct_lwm == 0  # set_idle
        return Decision()
    if not s.adaptive_flushing or s.max_dirty_pages_pct_lwm == 0:
        # With innodb_max_dirty_pages_pct_lwm = 0 an awake cleaner past the adaptive-flushing lwm
        # flushes innodb_io_capacity a second, counted as background, whatever
        # innodb_adaptive_flushing says (MDEV-26055 left it so). Measured on 10.11.19: adaptive
        # flushing switched on, 0 adaptive pages, ~80 background pages a second at io_capacity 100.
        return Decision({"background": float(s.io_capacity)})
    return Decision({"adaptive": _mariadb_recommendation(s, st, m, pct_lwm)})


def _pct_for_dirty(s: FlushSettings, dirty_pct: float) -> float:
    """af_get_pct_for_dirty(), MySQL 5.7 / 8.0."""
    if dirty_pct == 0:
        return 0.0
    if s.max_dirty_pages_pct_lwm == 0:
        return 100.0 if dirty_pct >= s.max_dirty_pages_pct else 0.0
    if dirty_pct >= s.max_dirty_pages_pct_lwm:
        return dirty_pct * 100 / (s.max_dirty_pages_pct + 1)
    return 0.0


def mysql(s: FlushSettings, st: CleanerState, m: Moment) -> Decision:
    """One iteration of the MySQL 5.7 / 8.0 / 8.4 page cleaner coordinator."""
    sync = s.sync_bytes or s.max_bytes
    if m.age_bytes > sync:
        # buf_flush_sync_lsn set: pc_request(ULINT_MAX, lsn_limit) flushes to the sync point
        # at any rate; past log_free_check capacity (max) user threads wait.
        return Decision({"sync": 0.0}, target_age_bytes=sync, stall=m.age_bytes >= s.max_bytes)
    if not st.prev_lsn or st.prev_lsn == m.lsn:
        st.prev_lsn = st.prev_lsn or m.lsn
        st.prev_time_s = st.prev_time_s or m.now_s
        return Decision()
    _update_averages(s, st, m)
    dirty_pct = 100.0 * m.dirty_pages / max(s.pool_pages, 1)
    pct_total = max(_pct_for_dirty(s, dirty_pct), pct_for_lsn(s, m.age_bytes))
    for_lsn = max(m.pages_for_lsn // SCAN_FACTOR, 1)
    if s.family == "mysql8":
        for_lsn = min(for_lsn, 2 * s.io_capacity_max)
    return Decision({"adaptive": min((s.io_capacity * pct_total / 100 + st.avg_page_rate + for_lsn) / 3,
                                     s.io_capacity_max)})


POLICIES = {"mariadb": mariadb, "mysql8": mysql, "mysql57": mysql}
