"""Alert lifecycle: pending, firing after `for`, keep-firing against flapping, backtest = live."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analysis.alert_rules import (
    INACTIVE,
    AlertState,
    RuleSpec,
    Transition,
    evaluate_series,
    replay,
    step,
)

RULE = RuleSpec("ckpt_high", "checkpoint_age_bytes", ">", 100.0, for_s=30, keep_firing_s=60)


def _series(
    values: Sequence[float | None], every: float = 10.0
) -> list[tuple[float, float | None]]:
    return [(i * every, v) for i, v in enumerate(values)]


def _kinds(transitions: list[Transition]) -> list[tuple[float, str]]:
    return [(t.ts, t.state) for t in transitions]


def test_condition_must_hold_for_duration_before_firing() -> None:
    points = _series([50, 150, 150, 150, 150, 150])
    assert _kinds(evaluate_series(RULE, points)) == [(10.0, "pending"), (40.0, "firing")]


def test_pending_that_goes_false_returns_to_inactive_without_notification() -> None:
    transitions = evaluate_series(RULE, _series([150, 150, 50, 50]))
    assert _kinds(transitions) == [(0.0, "pending"), (20.0, "inactive")]
    assert not any(t.notify for t in transitions)


def test_resolves_only_after_false_for_keep_firing() -> None:
    points = _series([150, 150, 150, 150, 50, 50, 50, 50, 50, 50, 50])
    assert _kinds(evaluate_series(RULE, points)) == [
        (0.0, "pending"),
        (30.0, "firing"),
        (100.0, "resolved"),  # first false at 40, + 60 s
    ]


def test_flapping_series_fires_once_and_resolves_once() -> None:
    flapping = [150.0] * 5 + [50.0, 150.0] * 10 + [50.0] * 10
    notices = [t for t in evaluate_series(RULE, _series(flapping)) if t.notify]
    assert [t.state for t in notices] == ["firing", "resolved"]


def test_without_keep_firing_a_flapping_series_notifies_each_time() -> None:
    rule = RuleSpec("r", "m", ">", 100.0, for_s=0, keep_firing_s=0)
    notices = [t.state for t in evaluate_series(rule, _series([150, 50, 150, 50])) if t.notify]
    assert notices == ["firing", "resolved", "firing", "resolved"]


def test_for_zero_fires_immediately() -> None:
    rule = RuleSpec("r", "m", ">=", 100.0)
    assert _kinds(evaluate_series(rule, _series([100]))) == [(0.0, "firing")]


def test_missing_data_holds_state() -> None:
    points = _series([150, None, None, 150, None, 50, None, None, None, None, None, None, 50])
    kinds = _kinds(evaluate_series(RULE, points))
    # pending at 0; still true at 30 (≥ for 30 s) → firing; false at 50, held through Nones,
    # resolved at the next known false value 120 (≥ 60 s after 50).
    assert kinds == [(0.0, "pending"), (30.0, "firing"), (120.0, "resolved")]


def test_less_than_operator() -> None:
    rule = RuleSpec("runway", "runway_minutes", "<", 15.0, for_s=0, keep_firing_s=0)
    assert _kinds(evaluate_series(rule, _series([30, 10, 20]))) == [
        (10.0, "firing"),
        (20.0, "resolved"),
    ]


def test_stale_or_repeated_ticks_are_ignored() -> None:
    state, t1 = step(RULE, INACTIVE, 100.0, 150.0)
    assert t1 is not None and t1.state == "pending"
    same, t2 = step(RULE, state, 100.0, 50.0)
    assert same == state and t2 is None


def test_invalid_rules_are_rejected() -> None:
    with pytest.raises(ValueError):
        RuleSpec("r", "m", "==", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RuleSpec("r", "m", ">", 1.0, for_s=-1)


def test_replay_returns_final_state_to_continue_live() -> None:
    state, _ = replay(RULE, _series([150, 150, 150, 150]))
    assert state.state == "firing"
    state, transition = step(RULE, state, 1000.0, 50.0)
    assert transition is None and state.false_since == 1000.0


values_st = st.lists(st.one_of(st.none(), st.floats(min_value=0, max_value=200)), max_size=80)


@given(values_st, st.sampled_from([0.0, 10.0, 30.0]), st.sampled_from([0.0, 20.0, 60.0]))
def test_backtest_equals_stepwise_live_evaluation(
    values: list[float | None], for_s: float, keep_s: float
) -> None:
    rule = RuleSpec("r", "m", ">", 100.0, for_s=for_s, keep_firing_s=keep_s)
    points = _series(values)
    state: AlertState = INACTIVE
    live: list[Transition] = []
    for ts, value in points:  # as the 10-second evaluator would call it
        state, transition = step(rule, state, ts, value)
        if transition is not None:
            live.append(transition)
    assert evaluate_series(rule, points) == live
    notices = [t.state for t in live if t.notify]
    assert all(a != b for a, b in itertools.pairwise(notices))  # firing/resolved alternate
    assert not notices or notices[0] == "firing"
