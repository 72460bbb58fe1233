"""`/metrics` parses with prometheus_client's own parser and gives the figures the API gives."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from timeseries import ingest

pytestmark = pytest.mark.django_db


def _families(response) -> dict[str, dict[tuple, float]]:
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


@pytest.fixture
def sampled(local_server):
    now = timezone.now().replace(microsecond=0)
    local_server.variables = {"innodb_log_file_size": str(48 * 1024**2), "innodb_log_files_in_group": "1"}
    local_server.flavor, local_server.version = "mariadb", "10.11.19-MariaDB"
    local_server.last_sample_at = now
    local_server.last_poll_status = "ok"
    local_server.save()
    ingest.save_innodb_samples([{"server_id": local_server.pk, "ts": now - dt.timedelta(seconds=10 - i),
                                 "checkpoint_age_bytes": 20_000_000 + i, "history_list_length": 777,
                                 "pages_dirty": 1234, "status_checkpoint_max_age": 40_050_893} for i in range(3)])
    return local_server


def test_metrics_need_a_token_or_a_login(client):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401


def test_metrics_parse_and_match_the_api(client, api_token, sampled):
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    families = _families(response)
    label = (("server", sampled.name),)
    assert families["innowatch_innodb_checkpoint_age_bytes"][label] == 20_000_002
    assert families["innowatch_innodb_history_list_length"][label] == 777
    thresholds = client.get(f"/api/v1/servers/{sampled.pk}/thresholds",
                            HTTP_AUTHORIZATION=f"Bearer {api_token}").json()["limits"]
    assert families["innowatch_innodb_checkpoint_async_bytes"][label] == thresholds["async_bytes"]
    assert families["innowatch_innodb_checkpoint_age_pct_of_async"][label] == pytest.approx(
        100 * 20_000_002 / thresholds["async_bytes"])
    assert families["innowatch_poll_failing"][label] == 0
    assert families["innowatch_redis_up"][()] == 1
    assert families["innowatch_spool_depth"][()] >= 0


def test_flushing_and_redo_are_exposed_as_the_latest_sample_s_counters(client, api_token, local_server):
    now = timezone.now().replace(microsecond=0)
    rows = [{"server_id": local_server.pk, "ts": now - dt.timedelta(seconds=20 - 10 * i), "lsn": 9_000_000 + 5_000 * i,
             "innodb_buffer_pool_pages_flushed": 100 + 7 * i, "flush_adaptive_pages": 40 + 3 * i,
             "flush_background_pages": 60 + 4 * i, "flush_lru_pages": None, "flush_sync_pages": 0}
            for i in range(3)]
    ingest.save_innodb_samples(rows)
    families = _families(client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {api_token}"))
    label = (("server", local_server.name),)
    assert families["innowatch_innodb_pages_flushed_total"][label] == 114
    assert families["innowatch_innodb_redo_written_bytes_total"][label] == 9_010_000
    by_path = families["innowatch_innodb_flushed_pages_by_path_total"]
    assert by_path == {(("path", "adaptive"), *label): 46, (("path", "background"), *label): 68,
                       (("path", "sync"), *label): 0}  # LRU not read on this server: absent, not 0
