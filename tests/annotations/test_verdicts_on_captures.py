"""Effect verdicts on real captures of the local MariaDB 10.11 under sysbench (tests/fixtures/captures,
PROVENANCE.md says how each was made), read through the API as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotations.models import Annotation
from collectors.imports import import_capture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
pytestmark = pytest.mark.django_db


def _report(client, api_token, capture: str, variable: str) -> dict:
    server = import_capture(CAPTURES / capture, capture.split("--")[1][:60]).server
    change = Annotation.objects.get(server=server, kind=Annotation.Kind.VARIABLE_CHANGE, tags__contains=[variable])
    response = client.get(f"/api/v1/annotations/{change.pk}/effect", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 200, response.content
    return response.json()


def _verdicts(body: dict) -> dict[str, str]:
    return {name: m["verdict"] for name, m in body["metrics"].items()}


def test_adaptive_flushing_where_it_works_is_an_effect_on_age_dirty_pages_and_flushing(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--adaptive-flushing-on.jsonl.gz", "innodb_adaptive_flushing")
    verdicts = _verdicts(body)
    assert {verdicts["checkpoint_age_bytes"], verdicts["pages_dirty"], verdicts["pages_flushed_per_s"]} == {"effect"}
    assert body["mechanism"]["engaged"] is True
    age = body["metrics"]["checkpoint_age_bytes"]
    assert age["after"]["mean"] < age["expected"] and age["change_vs_expected_pct"] < -50
    assert body["summary"].startswith("Effects: checkpoint age fell")
    assert body["workload_changed"] is False


def test_adaptive_flushing_switched_on_at_the_async_point_changes_nothing(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--adaptive-flushing-pinned-at-async.jsonl.gz",
                   "innodb_adaptive_flushing")
    assert "effect" not in _verdicts(body).values()
    assert body["mechanism"]["engaged"] is False
    assert "buffer_flush_adaptive_total_pages" in body["mechanism"]["evidence"]
    # Another engineer's innodb_max_purge_lag toggles fell in the after window: they act on purge,
    # not on flushing, so the window runs across them and says so.
    assert any("innodb_max_purge_lag" in note for note in body["windows"]["cut_by"])


def test_a_history_list_that_keeps_climbing_across_a_purge_threads_change_is_trend(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--purge-threads-while-hll-rises.jsonl.gz",
                   "innodb_purge_threads")
    verdicts = _verdicts(body)
    assert verdicts["history_list_length"] == "trend"
    assert "effect" not in verdicts.values()
    assert body["mechanism"]["engaged"] is False and "blocked" in body["mechanism"]["evidence"]


def test_more_purge_threads_while_purge_keeps_up_is_no_effect(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--purge-threads-no-effect.jsonl.gz", "innodb_purge_threads")
    assert "effect" not in _verdicts(body).values()
    assert body["mechanism"]["engaged"] is False and "kept up" in body["mechanism"]["evidence"]
    assert body["summary"].startswith("No metric moved because of this change")
    # An autocommit load: COMMIT statements read 0 and are not taken for a change of load.
    assert body["metrics"]["commits_per_s"]["before"]["mean"] == 0
    assert body["metrics"]["trx_per_s"]["verdict"] == "no_effect"


def test_raising_io_capacity_where_flushing_runs_at_the_budget_is_an_effect(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--io-capacity-raise.jsonl.gz", "innodb_io_capacity")
    verdicts = _verdicts(body)
    assert verdicts["pages_flushed_per_s"] == "effect" and verdicts["checkpoint_age_bytes"] == "effect"
    flushed = body["metrics"]["pages_flushed_per_s"]
    assert flushed["after"]["mean"] > 1.3 * flushed["before"]["mean"]
    assert body["mechanism"]["engaged"] is True and body["workload_changed"] is False


def test_more_purge_threads_after_a_throttled_purge_that_kept_up_is_no_effect(client, api_token):
    body = _report(client, api_token, "mariadb-10.11--purge-throttled-then-more-threads.jsonl.gz",
                   "innodb_purge_threads")
    assert "effect" not in _verdicts(body).values()
    assert body["mechanism"]["engaged"] is False
