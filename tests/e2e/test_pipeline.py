"""The whole pipeline for real: a Celery worker on Redis polls the local MariaDB, samples land in
PostgreSQL, the series API returns them, and the server page draws them in Chromium."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import login, wait_for, write_load

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"



@pytest.mark.django_db(transaction=True)
def test_worker_polls_mariadb_and_the_page_draws_checkpoint_age(
    local_server, celery_worker_thread, admin_user, api_token, client, live_server, browser
):
    from collectors.tasks import schedule_polls
    from servers.models import CollectorRun, PollMinute
    from timeseries.models import InnodbSample

    load = write_load(6)
    # Beat's job, sent through the broker: the worker fans out and then polls.
    for _ in range(4):
        schedule_polls.apply_async()
        time.sleep(1.1)
    wait_for(
        lambda: InnodbSample.objects.filter(server=local_server).count() >= 3,
        30,
        lambda: f"3 samples; runs: {list(CollectorRun.objects.values_list('status', 'error'))}",
    )
    load.join()

    runs = CollectorRun.objects.filter(server=local_server, kind=CollectorRun.Kind.INNODB_STATUS)
    totals = PollMinute.objects.filter(server=local_server).totals()
    assert totals["polls"] - totals["failures"] >= 3, (totals, list(runs.values("status", "error")))
    sample = InnodbSample.objects.filter(server=local_server).latest("ts")
    assert sample.lsn >= sample.checkpoint_lsn > 0
    assert sample.checkpoint_age_bytes == sample.lsn - sample.checkpoint_lsn
    assert sample.pages_total > 0 and sample.history_list_length is not None

    response = client.get(
        f"/api/v1/servers/{local_server.pk}/series",
        {"metrics": "checkpoint_age_bytes,history_list_length", "points": 50},
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert response.status_code == 200
    series = response.json()["metrics"]["checkpoint_age_bytes"]
    assert len(series["t"]) >= 1 and len(series["t"]) <= 50
    assert all(lo <= avg <= hi for lo, avg, hi in zip(series["min"], series["avg"], series["max"]))

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    login(page, live_server.url)
    page.goto(f"{live_server.url}/servers/{local_server.pk}/")
    page.wait_for_selector("body[data-charts-ready='1']", timeout=20000)
    drawn = page.eval_on_selector("#chart-checkpoint", "el => el.querySelectorAll('.scatterlayer .trace').length")
    assert drawn >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "e2e-server.png"), full_page=True)


def test_docker_compose_file_is_valid():
    """docker-compose.yml must stay correct for users with Docker (the engine is not here)."""
    for command in (["docker", "compose", "config", "-q"], ["docker-compose", "config", "-q"]):
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                    cwd=Path(__file__).resolve().parents[2])
        except FileNotFoundError:
            continue
        if result.returncode == 0 or "unknown shorthand flag" not in result.stderr + result.stdout:
            assert result.returncode == 0, result.stderr
            return
    pytest.fail("neither `docker compose` nor `docker-compose` is installed (make test installs docker-compose)")
