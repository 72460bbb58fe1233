"""Each fault of a monitored server caused for real on a second MariaDB instance: the poll is
recorded with its error kind, the server is shown as such, and the worker goes on polling others."""

from __future__ import annotations

import time

import pytest

from tests.faults.conftest import MONITOR, NO_PROCESS, free_port

pytestmark = pytest.mark.django_db


def api_status(client, api_token, server) -> str:
    answer = client.get("/api/v1/servers", HTTP_AUTHORIZATION=f"Bearer {api_token}").json()
    return next(s["status"] for s in answer if s["id"] == server.pk)


def assert_recorded_as(kind: str, server, run, client, api_token, admin_user):
    from servers.models import CollectorRun

    assert run.status == CollectorRun.Status.FAILED, (run.status, run.error)
    assert run.error_kind == kind, (run.error_kind, run.error)
    stored = CollectorRun.objects.filter(server=server).latest("started_at")
    assert (stored.status, stored.error_kind) == (CollectorRun.Status.FAILED, kind)
    server.refresh_from_db()
    assert server.last_poll_status == kind and server.last_error
    assert api_status(client, api_token, server) == kind
    # The pages say "unreachable" for every failed poll, with the reason next to it.
    client.force_login(admin_user)
    reason = f"last poll: {server.get_last_poll_status_display()}"
    for url in ("/", f"/servers/{server.pk}/"):
        page = client.get(url).content.decode()
        assert "status-unreachable" in page and reason in page, (url, reason)


def assert_worker_goes_on(local_server):
    from collectors.tasks import poll_once
    from servers.models import CollectorRun

    run = poll_once(local_server)
    assert run.status != CollectorRun.Status.FAILED, run.error
    local_server.refresh_from_db()
    assert local_server.last_poll_status == "ok"


def test_a_port_with_nothing_listening_is_recorded_as_unreachable(
    make_server, local_server, client, api_token, admin_user
):
    from collectors.tasks import poll_once

    server = make_server("nothing-there", free_port(), *MONITOR)
    run = poll_once(server)
    assert_recorded_as("unreachable", server, run, client, api_token, admin_user)
    assert_worker_goes_on(local_server)


def test_an_instance_stopped_mid_run_is_recorded_as_unreachable(
    second_mariadb, make_server, local_server, client, api_token, admin_user
):
    from collectors.tasks import poll_once
    from servers.models import CollectorRun

    server = make_server("stopped", second_mariadb.port, *MONITOR)
    assert poll_once(server).status != CollectorRun.Status.FAILED
    second_mariadb.stop()
    run = poll_once(server)
    assert_recorded_as("unreachable", server, run, client, api_token, admin_user)
    assert_worker_goes_on(local_server)


def test_an_instance_paused_beyond_the_poll_timeout_is_recorded_as_timeout_in_bounded_time(
    second_mariadb, make_server, local_server, client, api_token, admin_user, settings
):
    from collectors.tasks import poll_once

    settings.INNOWATCH_POLL_TIMEOUT_S = 1
    server = make_server("paused", second_mariadb.port, *MONITOR)
    second_mariadb.pause()
    try:
        started = time.monotonic()
        run = poll_once(server)
        elapsed = time.monotonic() - started
    finally:
        second_mariadb.resume()
    # connect_timeout and read_timeout are both 1 s; the client library may retry once.
    assert elapsed < 5, f"the poll took {elapsed:.1f} s against a 1 s timeout"
    assert_recorded_as("timeout", server, run, client, api_token, admin_user)
    assert_worker_goes_on(local_server)


def test_a_wrong_password_is_recorded_as_auth(
    second_mariadb, make_server, local_server, client, api_token, admin_user
):
    from collectors.tasks import poll_once

    server = make_server("wrong-password", second_mariadb.port, MONITOR[0], "not-the-password")
    run = poll_once(server)
    assert_recorded_as("auth", server, run, client, api_token, admin_user)
    assert "not-the-password" not in run.error
    assert_worker_goes_on(local_server)


def test_an_account_without_process_is_recorded_as_missing_privilege(
    second_mariadb, make_server, local_server, client, api_token, admin_user
):
    from collectors.tasks import poll_once

    server = make_server("no-process", second_mariadb.port, *NO_PROCESS)
    run = poll_once(server)
    assert_recorded_as("privilege", server, run, client, api_token, admin_user)
    assert "PROCESS" in run.error
    assert_worker_goes_on(local_server)


def commit_rows(instance, n: int) -> None:
    conn = instance.root()
    cur = conn.cursor()
    for _ in range(n):
        cur.execute("BEGIN")
        cur.execute("INSERT INTO scratch.t (v) VALUES (REPEAT('x', 100))")
        cur.execute("COMMIT")
    conn.close()


def test_a_server_restart_between_polls_gives_no_negative_rate(
    second_mariadb, make_server, client, api_token
):
    from collectors.tasks import poll_once
    from servers.models import CollectorRun
    from timeseries.models import InnodbSample

    server = make_server("restarted", second_mariadb.port, *MONITOR)
    commit_rows(second_mariadb, 300)
    for _ in range(2):
        assert poll_once(server).status != CollectorRun.Status.FAILED
        commit_rows(second_mariadb, 300)
        time.sleep(1.05)
    second_mariadb.restart()
    for _ in range(2):
        time.sleep(1.05)
        commit_rows(second_mariadb, 20)
        assert poll_once(server).status != CollectorRun.Status.FAILED

    commits = list(InnodbSample.objects.filter(server=server).order_by("ts").values_list("com_commit", flat=True))
    assert commits[2] < commits[1], f"the restart did not reset Com_commit: {commits}"
    answer = client.get(
        f"/api/v1/servers/{server.pk}/series",
        {"metrics": "commits_per_s,redo_bytes_per_s,pages_flushed_per_s", "points": 100},
        HTTP_AUTHORIZATION=f"Bearer {api_token}",
    )
    assert answer.status_code == 200, answer.content
    metrics = answer.json()["metrics"]
    assert any(v > 0 for v in metrics["commits_per_s"]["max"]), metrics["commits_per_s"]
    for name, series in metrics.items():
        values = [v for key in ("min", "avg", "max") for v in series[key] if v is not None]
        assert all(v >= 0 for v in values), (name, series)
