"""A server's own limits: checkpoint-age bands from analysis.checkpoint plus the flushing and
purge settings from its latest SHOW GLOBAL VARIABLES. Everything a chart or a status word
compares a sample with comes from here, so the overview and the server page agree."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from analysis import checkpoint


@dataclass(frozen=True)
class ServerLimits:
    """Bytes for the checkpoint bands; settings as the server reports them (None: not known)."""

    async_bytes: int | None = None
    sync_bytes: int | None = None
    checkpoint_target_bytes: int | None = None
    max_bytes: int | None = None
    adaptive_lwm_bytes: int | None = None
    redo_capacity_bytes: int | None = None  # C, from the variables
    log_capacity_bytes: int | None = None  # as InnoDB counts it (base of the lwm)
    source: str | None = None  # printed / status / formula
    adaptive_flushing: bool | None = None
    io_capacity: int | None = None
    io_capacity_max: int | None = None
    max_dirty_pages_pct: float | None = None
    max_dirty_pages_pct_lwm: float | None = None
    max_purge_lag: int | None = None

    @property
    def stall_bytes(self) -> int | None:
        """Where user threads stall: the sync point; MariaDB 10.5+ has none, so its max age."""
        return self.sync_bytes or self.max_bytes

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stall_bytes": self.stall_bytes}


def _lower(variables: Mapping[str, Any] | None) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (variables or {}).items()}


def _int(variables: Mapping[str, str], name: str) -> int | None:
    try:
        return int(float(variables[name]))
    except (KeyError, ValueError):
        return None


def _float(variables: Mapping[str, str], name: str) -> float | None:
    try:
        return float(variables[name])
    except (KeyError, ValueError):
        return None


def _on(variables: Mapping[str, str], name: str) -> bool | None:
    value = variables.get(name)
    if value is None:
        return None
    return value.strip().upper() in ("ON", "1", "TRUE", "YES")


def _flavor(server) -> checkpoint.Flavor:
    if server.flavor in ("mysql", "percona", "mariadb"):
        return server.flavor
    return checkpoint.detect_flavor(server.version or "", server.version_comment or "")


def _checkpoint_limits(server, variables: dict[str, str], sample):
    """(capacity C, analysis.checkpoint.Thresholds or None)."""
    flavor = _flavor(server)
    try:
        capacity = checkpoint.redo_capacity_bytes(flavor, server.version, variables)
        return capacity, checkpoint.checkpoint_thresholds(
            flavor,
            server.version,
            capacity,
            printed_max_checkpoint_age=getattr(sample, "max_checkpoint_age_bytes", None),
            printed_checkpoint_age_target=getattr(sample, "checkpoint_age_target_bytes", None),
            status_checkpoint_max_age=getattr(sample, "status_checkpoint_max_age", None),
            log_files_in_group=_int(variables, "innodb_log_files_in_group") or 2,
            page_size=_int(variables, "innodb_page_size") or 16384,
            thread_concurrency=_int(variables, "innodb_thread_concurrency") or 0,
            adaptive_flushing_lwm_pct=_float(variables, "innodb_adaptive_flushing_lwm"),
        )
    except ValueError:  # unparsable version string: no bands rather than wrong ones
        return None, None


def server_limits(server, sample=None) -> ServerLimits:
    """Limits of ``server`` (flavor, version, variables) given its latest ``InnodbSample``,
    whose printed / exported max checkpoint age wins over the formula."""
    variables = _lower(server.variables)
    settings = {
        "adaptive_flushing": _on(variables, "innodb_adaptive_flushing"),
        "io_capacity": _int(variables, "innodb_io_capacity"),
        "io_capacity_max": _int(variables, "innodb_io_capacity_max"),
        "max_dirty_pages_pct": _float(variables, "innodb_max_dirty_pages_pct"),
        "max_dirty_pages_pct_lwm": _float(variables, "innodb_max_dirty_pages_pct_lwm"),
        "max_purge_lag": _int(variables, "innodb_max_purge_lag"),
    }
    capacity, limits = _checkpoint_limits(server, variables, sample) if server.version else (None, None)
    if limits is None:
        return ServerLimits(**settings)
    return ServerLimits(
        async_bytes=limits.async_bytes,
        sync_bytes=limits.sync_bytes,
        checkpoint_target_bytes=limits.checkpoint_target_bytes,
        max_bytes=limits.max_bytes,
        adaptive_lwm_bytes=limits.adaptive_lwm_bytes,
        redo_capacity_bytes=capacity,
        log_capacity_bytes=limits.log_capacity_bytes,
        source=limits.source,
        **settings,
    )


def runway_minutes(ages: list[tuple[float, float | None]], limits: ServerLimits) -> float | None:
    """Minutes to the stall point at the current net redo growth (None: not growing / unknown)."""
    return checkpoint.runway_minutes(ages, limits.stall_bytes)
