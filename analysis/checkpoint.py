"""Redo capacity and InnoDB's own checkpoint-age thresholds, per flavour and version.

Every formula here mirrors a function of the server's source; the function is named in the
comment above each computation so a reviewer can diff it against the tree:

* MySQL 5.5-5.7, Percona Server 5.x, MariaDB <= 10.4:
  ``storage/innobase/log/log0log.cc`` ``log_calc_max_ages()`` (MariaDB 10.3/10.4 renamed it
  ``log_set_capacity()``, same arithmetic) and ``log_margin_checkpoint_age()``.
* MySQL 8.0.11-8.0.29: ``storage/innobase/log/log0chkp.cc`` ``log_calc_max_ages()`` and
  ``log_calc_concurrency_margin()``.
* MySQL 8.0.30+, 8.4, 9.x: ``log0files_capacity.cc``
  ``Log_files_capacity::hard_logical_capacity_for_physical()`` / ``update_exposed()`` and
  ``log0chkp.cc`` ``log_concurrency_margin()`` / ``log_update_limits_low()`` /
  ``log_free_check_capacity()``; constants from ``include/log0constants.h``.
* MariaDB 10.5+: ``storage/innobase/log/log0log.cc`` ``log_t::set_capacity()``.

All sizes are bytes (LSN units). Values the server states itself (Percona's printed
``Max checkpoint age`` / ``Checkpoint age target``, the ``Innodb_checkpoint_max_age`` status
variable) win over the formula.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from analysis.trend import slope_per_s

Flavor = Literal["mysql", "percona", "mariadb"]
Source = Literal["printed", "status", "formula"]

_BLOCK = 512  # OS_FILE_LOG_BLOCK_SIZE
_LOG_FILE_HDR_SIZE = 4 * _BLOCK  # LOG_FILE_HDR_SIZE, 5.x and 8.0
_DEFAULT_PAGE = 16384
_VERSION_RE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """InnoDB's checkpoint-age limits, in bytes of redo (checkpoint age or modified age).

    ``async_bytes``: async pre-flush / adaptive-flush start (``max_modified_age_async``).
    ``sync_bytes``: sync pre-flush, user threads stall (``max_modified_age_sync``);
    None on MariaDB 10.5+, which has no such point.
    ``checkpoint_target_bytes``: async checkpoint (``max_checkpoint_age_async``, Percona's
    ``Checkpoint age target``; 8.0.30+ ``aggressive_checkpoint_min_age``); None on MariaDB 10.5+.
    ``max_bytes``: max checkpoint age (MySQL 8.0: the log_free_check capacity, where user
    threads wait; on 8.0.30+ it lies between the sync point and the aggressive checkpoint).
    ``adaptive_lwm_bytes``: ``innodb_adaptive_flushing_lwm`` % of the log capacity, if given.
    ``log_capacity_bytes``: capacity as InnoDB itself counts it (base of the lwm).
    """

    async_bytes: int
    sync_bytes: int | None
    checkpoint_target_bytes: int | None
    max_bytes: int
    adaptive_lwm_bytes: int | None
    log_capacity_bytes: int | None
    source: Source


def parse_version(version: str) -> tuple[int, int, int]:
    """``"10.11.19-MariaDB-0+deb12u1"`` → (10, 11, 19); ``"8.0.32-24"`` → (8, 0, 32)."""
    match = _VERSION_RE.match(version)
    if match is None:
        raise ValueError(f"unrecognised server version: {version!r}")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def detect_flavor(version: str, version_comment: str = "") -> Flavor:
    """Flavour from ``SELECT VERSION()`` and ``@@version_comment``."""
    text = f"{version} {version_comment}".lower()
    if "mariadb" in text:
        return "mariadb"
    if "percona" in text:
        return "percona"
    return "mysql"


def _is_mysql_8030_plus(flavor: Flavor, ver: tuple[int, int, int]) -> bool:
    return flavor != "mariadb" and ver >= (8, 0, 30)


def _is_mariadb_105_plus(flavor: Flavor, ver: tuple[int, int, int]) -> bool:
    return flavor == "mariadb" and ver >= (10, 5, 0)


def _int_var(variables: Mapping[str, str], name: str) -> int | None:
    raw = variables.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        return None


def redo_capacity_bytes(flavor: Flavor, version: str, variables: Mapping[str, str]) -> int | None:
    """Redo capacity C in bytes from ``SHOW GLOBAL VARIABLES`` (names lower-case).

    MySQL 8.0.30+ / 9.x: ``innodb_redo_log_capacity`` (the status variable
    ``Innodb_redo_log_capacity_resized`` wins if merged into ``variables``: when only the old
    variables are configured the server derives capacity from them). MariaDB 10.5+: one file,
    ``innodb_log_file_size``. Otherwise ``innodb_log_file_size × innodb_log_files_in_group``.
    None when the needed variables are missing.
    """
    ver = parse_version(version)
    if _is_mysql_8030_plus(flavor, ver):
        resized = _int_var(variables, "innodb_redo_log_capacity_resized")
        capacity = resized or _int_var(variables, "innodb_redo_log_capacity")
        if capacity is not None:
            return capacity
    file_size = _int_var(variables, "innodb_log_file_size")
    if file_size is None:
        return None
    if _is_mariadb_105_plus(flavor, ver):
        return file_size
    files = _int_var(variables, "innodb_log_files_in_group")
    return file_size * (files if files is not None else 2)


def _align_down(value: int, align: int = _BLOCK) -> int:
    return value - value % align


def _align_up(value: int, align: int = _BLOCK) -> int:
    return _align_down(value + align - 1, align)


@dataclass(frozen=True, slots=True)
class _Raw:
    """Formula output before printed/status values are applied."""

    async_bytes: int
    sync_bytes: int | None
    target_bytes: int | None
    max_bytes: int
    log_capacity_bytes: int


def _legacy(capacity: int, n_files: int, page: int, concurrency: int) -> _Raw:
    # 5.5-5.7 log0log.cc log_calc_max_ages() (MariaDB <= 10.4 log_set_capacity()):
    #   smallest_capacity = (file_size - LOG_FILE_HDR_SIZE) * n_files  (log_group_get_capacity)
    #   smallest_capacity -= smallest_capacity / 10                      "Add extra safety"
    #   free = LOG_CHECKPOINT_FREE_PER_THREAD(4 pages) * (10 + srv_thread_concurrency)
    #          + LOG_CHECKPOINT_EXTRA_FREE(8 pages)
    #   margin = smallest_capacity - free; margin -= margin / 10
    #   max_modified_age_async = margin - margin / 8   (LOG_POOL_PREFLUSH_RATIO_ASYNC)
    #   max_modified_age_sync  = margin - margin / 16  (LOG_POOL_PREFLUSH_RATIO_SYNC)
    #   max_checkpoint_age_async = margin - margin / 32 (LOG_POOL_CHECKPOINT_RATIO_ASYNC)
    #   max_checkpoint_age = margin
    smallest = capacity - _LOG_FILE_HDR_SIZE * n_files
    smallest -= smallest // 10
    free = 4 * page * (10 + concurrency) + 8 * page
    margin = max(smallest - free, 0)
    margin -= margin // 10
    return _Raw(
        margin - margin // 8, margin - margin // 16, margin - margin // 32, margin, smallest
    )


def _mariadb_105(capacity: int, ver: tuple[int, int, int], page: int) -> _Raw:
    # MariaDB 10.5+ log0log.cc log_t::set_capacity():
    #   smallest_capacity = srv_log_file_size - START_OFFSET  (10.8+ file format: 12288;
    #                       10.5-10.7: LOG_FILE_HDR_SIZE = 2048)
    #   smallest_capacity -= smallest_capacity / 10
    #   margin = smallest_capacity - (48 << srv_page_size_shift); margin -= margin / 10
    #   max_modified_age_async = margin - margin / 8; max_checkpoint_age = margin
    header = 12288 if ver >= (10, 8, 0) else _LOG_FILE_HDR_SIZE
    smallest = capacity - header
    smallest -= smallest // 10
    margin = max(smallest - 48 * page, 0)
    margin -= margin // 10
    return _Raw(margin - margin // 8, None, None, margin, smallest)


def _mysql_80(capacity: int, n_files: int, page: int, concurrency: int) -> _Raw:
    # 8.0.11-8.0.29 log0chkp.cc log_calc_max_ages():
    #   lsn_real_capacity = files_real_capacity - LOG_FILE_HDR_SIZE * n_files
    #   safety_margin = min(0.1 * real, 256 * LOG_CHECKPOINT_FREE_PER_THREAD * UNIV_PAGE_SIZE)
    #   lsn_capacity_for_writer = align_down(real - safety_margin, 512)
    #   extra_margin = align_down(writer * 0.05, 512); limit = writer - extra_margin
    #   async = limit - limit/8, sync = limit - limit/16, chkp async = limit - limit/32 (align_up)
    # log_calc_concurrency_margin(): 4 pages * (10 + concurrency) + 8 pages
    #   + align_down(0.05 * writer, 512); users stop at limit - margin (log_free_check).
    real = capacity - _LOG_FILE_HDR_SIZE * n_files
    safety = min(int(0.1 * real), 256 * 4 * page)
    writer = _align_down(real - safety)
    limit = writer - _align_down(int(writer * 0.05))
    concurrency_margin = 4 * page * (10 + concurrency) + 8 * page + _align_down(int(0.05 * writer))
    concurrency_margin = min(concurrency_margin, _align_up(writer // 2))
    return _Raw(
        _align_up(limit - limit // 8),
        _align_up(limit - limit // 16),
        _align_up(limit - limit // 32),
        _align_down(max(limit - concurrency_margin, 0)),
        limit,
    )


def _mysql_8030_soft_capacity(capacity: int, page: int) -> int:
    # log0files_capacity.cc Log_files_capacity::hard_logical_capacity_for_physical():
    #   lsn_capacity = C * (LOG_N_FILES - 2) / LOG_N_FILES - OVERHEAD, LOG_N_FILES = 32,
    #   OVERHEAD = (LOG_N_FILES - 1) * LOG_FILE_HDR_SIZE + LOG_EXTRA_SAFETY_MARGIN (2 * 64 KiB)
    #   hard = align_down(lsn_capacity - next_file_earlier_margin(C), 512), where
    #   next_file_earlier_margin = align_up(ceil(10% * align_down(C / 32, page)), 512)
    # soft_logical_capacity_for_hard(): align_down(floor(hard * (1 - 5%)), 512)
    overhead = 31 * _LOG_FILE_HDR_SIZE + 2 * 65536
    lsn_capacity = int(capacity * 30 / 32) - overhead
    file_size = _align_down(capacity // 32, page)
    earlier = _align_up(math.ceil(0.10 * file_size))
    hard = _align_down(max(lsn_capacity - earlier, 0))
    return _align_down(math.floor(hard * 0.95))


def _mysql_8030(capacity: int, page: int, concurrency: int) -> _Raw:
    # log0files_capacity.cc Log_files_capacity::update_exposed():
    #   adaptive_flush_min_age = align_down(soft - soft / 8)      (async, RATIO_MIN = 8)
    #   adaptive_flush_max_age = align_down(floor(soft * (1 - 1/16)))  (sync flush)
    #   aggressive_checkpoint_min_age = align_down(soft - soft / 32)
    # log0chkp.cc log_concurrency_margin(): 4 pages * (concurrency + 10)
    #   + LOG_FILES_DUMMY_INTAKE_SIZE (4 KiB) + align_down(5% * soft), capped at 55% of soft;
    # log_free_check_capacity() = align_down(soft - margin): user threads wait beyond it.
    soft = _mysql_8030_soft_capacity(capacity, page)
    margin = 4 * page * (concurrency + 10) + 4096 + _align_down(int(0.05 * soft))
    margin = min(margin, _align_down(int(soft * 0.55)))
    return _Raw(
        _align_down(soft - soft // 8),
        _align_down(math.floor(soft * (1 - 1 / 16))),
        _align_down(soft - soft // 32),
        _align_down(soft - margin),
        soft,
    )


def _formula(
    flavor: Flavor, ver: tuple[int, int, int], capacity: int, n_files: int, page: int, conc: int
) -> _Raw:
    if _is_mariadb_105_plus(flavor, ver):
        return _mariadb_105(capacity, ver, page)
    if _is_mysql_8030_plus(flavor, ver):
        return _mysql_8030(capacity, page, conc)
    if flavor != "mariadb" and ver >= (8, 0, 0):
        return _mysql_80(capacity, n_files, page, conc)
    return _legacy(capacity, n_files, page, conc)


def _from_max(flavor: Flavor, ver: tuple[int, int, int], max_bytes: int) -> _Raw:
    """Bands derived from a stated max checkpoint age (the server's own ``margin``).

    The server's ratios (7/8, 15/16, 31/32 of the margin) apply as in ``log_calc_max_ages``;
    the log capacity is estimated as margin / 0.9 (the per-thread reserve is negligible).
    On MySQL 8.0 the stated value (Percona) is taken as the max and the same ratios are used.
    """
    capacity = max_bytes * 10 // 9
    if _is_mariadb_105_plus(flavor, ver):
        return _Raw(max_bytes - max_bytes // 8, None, None, max_bytes, capacity)
    return _Raw(
        max_bytes - max_bytes // 8,
        max_bytes - max_bytes // 16,
        max_bytes - max_bytes // 32,
        max_bytes,
        capacity,
    )


def checkpoint_thresholds(
    flavor: Flavor,
    version: str,
    capacity_bytes: int | None,
    *,
    printed_max_checkpoint_age: int | None = None,
    printed_checkpoint_age_target: int | None = None,
    status_checkpoint_max_age: int | None = None,
    log_files_in_group: int = 2,
    page_size: int = _DEFAULT_PAGE,
    thread_concurrency: int = 0,
    adaptive_flushing_lwm_pct: float | None = None,
) -> Thresholds | None:
    """InnoDB's thresholds for this server, in bytes; None when nothing is known.

    ``capacity_bytes`` is C from :func:`redo_capacity_bytes`. The printed values (Percona's
    LOG section) win, then ``Innodb_checkpoint_max_age``, then the formula. On MySQL 5.x/8.0
    before 8.0.30 ``log_files_in_group`` matters (one header per file is not redo space).
    """
    ver = parse_version(version)
    formula = (
        _formula(flavor, ver, capacity_bytes, log_files_in_group, page_size, thread_concurrency)
        if capacity_bytes
        else None
    )
    raw, source = _choose(
        flavor, ver, formula, printed_max_checkpoint_age, status_checkpoint_max_age
    )
    if raw is None:
        return None
    lwm = None
    if adaptive_flushing_lwm_pct is not None:
        lwm = adaptive_flushing_lwm_bytes(raw.log_capacity_bytes, adaptive_flushing_lwm_pct)
    return Thresholds(
        async_bytes=raw.async_bytes,
        sync_bytes=raw.sync_bytes,
        checkpoint_target_bytes=printed_checkpoint_age_target or raw.target_bytes,
        max_bytes=raw.max_bytes,
        adaptive_lwm_bytes=lwm,
        log_capacity_bytes=formula.log_capacity_bytes if formula is not None else None,
        source=source,
    )


def _choose(
    flavor: Flavor,
    ver: tuple[int, int, int],
    formula: _Raw | None,
    printed_max: int | None,
    status_max: int | None,
) -> tuple[_Raw | None, Source]:
    """Stated max checkpoint age (printed, then status) over the formula."""
    stated = printed_max or status_max
    if not stated:
        return formula, "formula"
    raw = _from_max(flavor, ver, stated)
    if formula is not None:  # InnoDB's own capacity stays the lwm base
        raw = replace(raw, log_capacity_bytes=formula.log_capacity_bytes)
    return raw, "printed" if printed_max else "status"


def adaptive_flushing_lwm_bytes(log_capacity_bytes: int, lwm_pct: float) -> int:
    """Checkpoint age below which the page cleaner does no LSN-driven flushing, in bytes.

    buf0flu.cc ``page_cleaner_flush_pages_recommendation()``:
    ``af_lwm = srv_adaptive_flushing_lwm * log_get_capacity() / 100``.
    """
    return int(lwm_pct * log_capacity_bytes / 100)


def adaptive_flush_pct(
    age_bytes: int,
    async_bytes: int,
    io_capacity: int,
    io_capacity_max: int,
    *,
    lwm_bytes: int | None = None,
    adaptive_flushing: bool = True,
) -> int:
    """Percent of ``innodb_io_capacity`` the page cleaner's LSN term asks for.

    buf0flu.cc ``af_get_pct_for_lsn()``: below the lwm (or below the async point when adaptive
    flushing is OFF) 0; else ``lsn_age_factor = age * 100 / max_modified_age_async`` and
    ``pct = (io_capacity_max / io_capacity) * f * sqrt(f) / 7.5``. Both divisions of
    integers are integer divisions in the server, and so here.
    """
    if async_bytes <= 0 or io_capacity <= 0 or age_bytes <= 0:
        return 0
    if lwm_bytes is not None and age_bytes < lwm_bytes:
        return 0
    if not adaptive_flushing and age_bytes < async_bytes:
        return 0
    factor = age_bytes * 100 // async_bytes
    return int((io_capacity_max // io_capacity) * (factor * math.sqrt(factor)) / 7.5)


def runway_minutes(
    samples: Sequence[tuple[float, float | None]],
    sync_bytes: int | None,
    *,
    window_s: float = 300.0,
) -> float | None:
    """Minutes until checkpoint age reaches ``sync_bytes`` at its current net growth rate.

    ``samples`` are (epoch seconds, checkpoint age bytes), oldest first; None ages are
    skipped. The rate is the least-squares slope over the last ``window_s`` seconds.
    Returns 0.0 when already at or past the sync point, None when unknown or not growing.
    """
    known = [(t, float(v)) for t, v in samples if v is not None]
    if not known or not sync_bytes:
        return None
    last_t, last_age = known[-1]
    if last_age >= sync_bytes:
        return 0.0
    recent = [(t, v) for t, v in known if t >= last_t - window_s]
    slope = slope_per_s(recent)
    if slope is None or slope <= 0:
        return None
    return (sync_bytes - last_age) / slope / 60.0
