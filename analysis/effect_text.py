"""The effect report in words: values in their metric's units (MB, pages/s, entries), the summary
that leads with effects and lists apart what moved for another reason, and the vocabulary of
metrics both the report and its words use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The report's records (analysis.effect.MetricChange, Report) are read by attribute here: this
# module sits below analysis.effect, which imports it.
MetricChange = Report = Any

# What the server was asked to do: a move here is a change of load, not of behaviour.
WORKLOAD_METRICS = ("trx_per_s", "redo_bytes_per_s", "rows_changed_per_s", "threads_running")
WORKLOAD_CHANGE_PCT = 20.0
# Metrics the load drives: not attributable to a change while the load moved.
LOAD_DRIVEN = ("checkpoint_age_bytes", "modified_age_bytes", "pages_dirty", "pages_flushed_per_s",
               "history_list_length", "disk_w_s", "flush_adaptive_pages_per_s", "flush_background_pages_per_s",
               "purge_undo_log_pages_per_s")
SPIKY_METRIC = "pages_flushed_per_s"
HLL_METRIC = "history_list_length"
SPIKINESS_MIN_CV_CHANGE = 0.1
NORMALISED_METRIC = "pages_flushed_per_redo_mb"
# The order a DBA reads a flushing or purge story in.
READING_ORDER = ("checkpoint_age_bytes", "modified_age_bytes", "pages_flushed_per_s", "pages_dirty",
                 "history_list_length", "purge_undo_log_pages_per_s", "flush_adaptive_pages_per_s",
                 "flush_background_pages_per_s", "pages_flushed_per_redo_mb")

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


def _direction(delta: float) -> str:
    return "rose" if delta > 0 else "fell"


def _spiky_words(extra: Mapping[str, Mapping[str, float | None]]) -> list[str]:
    spiky = extra.get(SPIKY_METRIC, {})
    cv_b, cv_a = spiky.get("cv_before"), spiky.get("cv_after")
    # Relative and absolute: CV 0.01 → 0.03 is steady flushing either way, not news.
    if cv_b is None or cv_a is None or abs(cv_a - cv_b) < max(0.25 * max(cv_b, cv_a), SPIKINESS_MIN_CV_CHANGE):
        return []
    return [f"{SPIKY_METRIC}: spikiness (CV) {_direction(cv_a - cv_b)} {cv_b:.1f} → {cv_a:.1f}"]


_LABELS = {
    "checkpoint_age_bytes": "checkpoint age", "modified_age_bytes": "modified age", "pages_dirty": "dirty pages",
    "pages_flushed_per_s": "pages flushed", "history_list_length": "history list length",
    "redo_bytes_per_s": "redo", "trx_per_s": "transactions", "rows_changed_per_s": "rows changed",
    "threads_running": "threads running", "pages_flushed_per_redo_mb": "pages flushed per MB of redo",
    "flush_adaptive_pages_per_s": "adaptive flushing", "flush_background_pages_per_s": "background flushing",
    "commits_per_s": "COMMIT statements", "disk_w_s": "disk writes", "disk_wr_rt_ms": "disk write latency",
}
_UNITS = {"history_list_length": " entries", "pages_dirty": " pages", "pages_flushed_per_s": " pages/s",
          "trx_per_s": " trx/s", "rows_changed_per_s": " rows/s", "disk_w_s": "/s", "disk_wr_rt_ms": " ms",
          "flush_adaptive_pages_per_s": " pages/s", "flush_background_pages_per_s": " pages/s"}


def metric_label(name: str) -> str:
    return _LABELS.get(name, name.replace("_", " "))



def display_value(name: str, value: float | None, scale: float | None = None) -> str:
    """A value in its metric's units for people: 35.0 MB, 213 pages/s, 7,120 entries."""
    return _with_unit(name, value, abs(value or 0.0) if scale is None else scale)


def _with_unit(name: str, value: float | None, scale: float) -> str:
    text = format_value(name, value, scale_to=scale)
    return text if _is_bytes(name) or value is None else text + _UNITS.get(name, "")


def _move_words(name: str, m: MetricChange) -> str:
    scale = max(abs(m.before.mean or 0.0), abs(m.after.mean or 0.0), abs(m.expected or 0.0))
    pct = f" {abs(m.change_pct):.0f} %" if m.change_pct is not None else ""
    words = (f"{metric_label(name)} {_direction((m.after.mean or 0.0) - (m.before.mean or 0.0))}{pct} "
             f"({_with_unit(name, m.before.mean, scale)} → {_with_unit(name, m.after.mean, scale)}")
    if m.expected is not None and m.trend_per_h is not None:
        words += f"; the before trend predicted {_with_unit(name, m.expected, scale)}"
    return words + ")"


def summary(report: Report, variable: str | None, load_moved: str) -> str:
    metrics = report.metrics
    effects = [n for n, m in metrics.items() if m.verdict == "effect" and n not in WORKLOAD_METRICS
               and n != "commits_per_s"]
    effects.sort(key=lambda n: READING_ORDER.index(n) if n in READING_ORDER else len(READING_ORDER))
    parts = [("Effects: " + "; ".join(_move_words(n, metrics[n]) for n in effects)) if effects
             else "No metric moved because of this change"]
    parts += _spiky_words(report.extra) if effects else []
    others = [n for n, m in metrics.items() if m.verdict in ("not_attributable", "trend")
              and n not in WORKLOAD_METRICS and n != "commits_per_s"]
    if others:
        parts.append("Moved, but not because of this change: " + "; ".join(
            f"{_move_words(n, metrics[n])}: {metrics[n].reason}" for n in others))
    if load_moved:
        parts.append(f"The workload changed ({load_moved}); compare normalised figures such as "
                     f"{metric_label(NORMALISED_METRIC)}")
    if variable:
        engaged = report.mechanism["engaged"]
        state = {True: "engaged", False: "did not engage", None: "unknown"}[engaged]
        parts.append(f"Mechanism of {variable} {state}: {report.mechanism['evidence']}")
    return ". ".join(parts) + "."
