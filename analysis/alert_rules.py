"""The alert lifecycle, Prometheus/Alertmanager style, as pure functions.

Live evaluation calls :func:`step` once per tick with the latest value; a backtest calls
:func:`evaluate_series`, which is nothing but a loop of the same :func:`step` over history,
so what a backtest shows is what live evaluation would have done.

States: ``inactive`` → ``pending`` (condition true) → ``firing`` (true for ≥ ``for_s``) →
``resolved`` notice and back to ``inactive`` once the condition has been false for
≥ ``keep_firing_s`` (Prometheus ``keep_firing_for``: counted from the first false evaluation,
reset if the condition comes back). A pending alert whose condition goes false returns to
``inactive`` without any notification. Missing data (None) holds the state. Timestamps are
epoch seconds; an evaluation not later than the previous one is ignored.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

Op = Literal[">", "<", ">=", "<="]
State = Literal["inactive", "pending", "firing"]
TransitionKind = Literal["pending", "firing", "resolved", "inactive"]
Severity = Literal["info", "warning", "critical"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
}


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """``metric op threshold`` held for ``for_s`` seconds fires; resolves after the condition
    has been false for ``keep_firing_s`` seconds (0: at the first false evaluation)."""

    name: str
    metric: str
    op: Op
    threshold: float
    for_s: float = 0.0
    keep_firing_s: float = 0.0
    severity: Severity = "warning"

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"unknown operator {self.op!r}")
        if self.for_s < 0 or self.keep_firing_s < 0:
            raise ValueError("for_s and keep_firing_s must be >= 0")

    def condition(self, value: float) -> bool:
        """Whether ``value`` breaches the rule."""
        return _OPS[self.op](value, self.threshold)


@dataclass(frozen=True, slots=True)
class AlertState:
    """Where one rule stands. ``active_since``: condition true since (pending/firing);
    ``firing_since``; ``false_since``: first false evaluation while firing (keep-firing)."""

    state: State = "inactive"
    active_since: float | None = None
    firing_since: float | None = None
    false_since: float | None = None
    last_ts: float | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """A change of state at ``ts``; ``notify`` is true for ``firing`` and ``resolved``."""

    ts: float
    state: TransitionKind
    value: float | None = None

    @property
    def notify(self) -> bool:
        return self.state in ("firing", "resolved")


INACTIVE = AlertState()


def _on_true(
    rule: RuleSpec, st: AlertState, ts: float, value: float
) -> tuple[AlertState, Transition | None]:
    if st.state == "firing":
        return replace(st, false_since=None), None
    since = st.active_since if st.state == "pending" and st.active_since is not None else ts
    if ts - since >= rule.for_s:
        return replace(st, state="firing", active_since=since, firing_since=ts), Transition(
            ts, "firing", value
        )
    if st.state == "pending":
        return st, None
    return replace(st, state="pending", active_since=ts), Transition(ts, "pending", value)


def _on_false(
    rule: RuleSpec, st: AlertState, ts: float, value: float
) -> tuple[AlertState, Transition | None]:
    if st.state == "pending":
        return replace(INACTIVE, last_ts=st.last_ts), Transition(ts, "inactive", value)
    if st.state != "firing":
        return st, None
    false_since = st.false_since if st.false_since is not None else ts
    if ts - false_since >= rule.keep_firing_s:
        return replace(INACTIVE, last_ts=st.last_ts), Transition(ts, "resolved", value)
    return replace(st, false_since=false_since), None


def step(
    rule: RuleSpec, state: AlertState, ts: float, value: float | None
) -> tuple[AlertState, Transition | None]:
    """Evaluate ``rule`` once at ``ts`` (epoch seconds) with the metric's ``value``.

    Returns the new state and the transition it caused, if any. None holds the state.
    """
    if state.last_ts is not None and ts <= state.last_ts:
        return state, None
    state = replace(state, last_ts=ts)
    if value is None:
        return state, None
    if rule.condition(value):
        return _on_true(rule, state, ts, value)
    return _on_false(rule, state, ts, value)


def worst_value(op: Op, held: float | None, value: float | None) -> float | None:
    """The worst value of an incident so far, the peak a resolved notice reports: the highest for
    ``>``/``>=`` rules, the lowest for ``<``/``<=`` (a runway that fell to 3 minutes)."""
    if value is None or not math.isfinite(value):
        return held
    if held is None:
        return value
    return max(held, value) if op in (">", ">=") else min(held, value)


def evaluate_series(
    rule: RuleSpec,
    points: Sequence[tuple[float, float | None]],
    *,
    initial: AlertState = INACTIVE,
) -> list[Transition]:
    """Backtest: the transitions :func:`step` produces over ``points`` (oldest first)."""
    return replay(rule, points, initial=initial)[1]


def replay(
    rule: RuleSpec,
    points: Sequence[tuple[float, float | None]],
    *,
    initial: AlertState = INACTIVE,
) -> tuple[AlertState, list[Transition]]:
    """Like :func:`evaluate_series`, also returning the final state (to continue live)."""
    state, out = initial, []
    for ts, value in points:
        state, transition = step(rule, state, ts, value)
        if transition is not None:
            out.append(transition)
    return state, out
