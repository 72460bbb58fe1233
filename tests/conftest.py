"""Shared fixtures: the machine's real PostgreSQL (through pytest-django), Redis and MariaDB.

Tests use Redis database 15 and queue `innowatch-test` (dashboard/settings_test.py;
INNOWATCH_TEST_REDIS_URL to change) so they never touch a running innowatch's queue, and their own
monitoring account on the local MariaDB.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from pathlib import Path

import MySQLdb
import pytest
import redis

FIXTURES = Path(__file__).parent / "fixtures"
MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}


@pytest.fixture(scope="session", autouse=True)
def _test_redis():
    """The test Redis database (settings_test points the broker and our keys at it)."""
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()


@pytest.fixture(autouse=True)
def _forget_failed_logins(_test_redis):
    """Tests all log in from 127.0.0.1: one test's failed logins must not rate-limit the next."""
    for key in _test_redis.scan_iter("iw:login-fail:*"):
        _test_redis.delete(key)


@pytest.fixture
def redis_client(_test_redis):
    return _test_redis


@pytest.fixture
def mariadb_root():
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def monitor_account():
    """A least-privilege account on the local MariaDB, as `make run` creates for users.

    One account per test session: test runs in parallel on the same MariaDB would otherwise
    reset each other's password mid-run (seen as spurious `auth` poll failures)."""
    user, password = f"iw_test_{secrets.token_hex(4)}", secrets.token_urlsafe(16)
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = conn.cursor()
    for host in ("localhost", "127.0.0.1"):
        cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (user, host, password))
        cur.execute("GRANT PROCESS, REPLICATION CLIENT ON *.* TO %s@%s", (user, host))
    conn.close()
    yield {"user": user, "password": password}
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    for host in ("localhost", "127.0.0.1"):
        conn.cursor().execute("DROP USER IF EXISTS %s@%s", (user, host))
    conn.close()


@pytest.fixture
def local_server(db, monitor_account):
    """The shared scenario: the machine's MariaDB registered as a monitored server."""
    from servers.models import Server

    server = Server(name="local-mariadb", host="127.0.0.1", port=3306, user=monitor_account["user"],
                    poll_interval_s=1, tags=["local", "primary"])
    server.set_password(monitor_account["password"])
    server.save()
    return server


@pytest.fixture
def admin_user(db, django_user_model):
    return django_user_model.objects.create_superuser("admin", "", "correct-horse-battery")


@pytest.fixture
def api_token(admin_user):
    from accounts.models import ApiToken

    _, key = ApiToken.issue(admin_user, "tests")
    return key


@pytest.fixture
def celery_worker_thread(_test_redis):
    """A real Celery worker consuming the test queue from Redis, in a thread of this process."""
    from celery.contrib.testing.worker import start_worker

    from dashboard.celery import app

    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                      queues=["innowatch-test"], shutdown_timeout=30) as worker:
        yield worker


def wait_for(predicate, timeout_s: float, what):
    """Poll `predicate` until it returns something truthy; `what` (text or a callable giving text)
    says in the failure what was awaited."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what() if callable(what) else what}")


def write_load(seconds: float, rows_per_tx: int = 50, stop: threading.Event | None = None) -> threading.Thread:
    """Background inserts into a scratch table so InnoDB's counters move during a test (until
    `seconds` have passed or `stop` is set)."""
    stop_at = [seconds]
    stop = stop or threading.Event()

    def run():
        import time

        conn = MySQLdb.connect(**MARIADB, autocommit=False)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS innowatch_scratch")
        cur.execute("CREATE TABLE IF NOT EXISTS innowatch_scratch.load_rows "
                    "(id BIGINT AUTO_INCREMENT PRIMARY KEY, payload VARCHAR(200))")
        deadline = time.monotonic() + stop_at[0]
        while time.monotonic() < deadline and not stop.is_set():
            cur.executemany("INSERT INTO innowatch_scratch.load_rows (payload) VALUES (%s)",
                            [("x" * 180,)] * rows_per_tx)
            conn.commit()
        conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def browser():
    """Debian's Chromium driven by Playwright (its own browser download does not work here)."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the ORM calls made by fixtures
    # and assertions here are still synchronous and safe.
    # Restored afterwards so that no later test (or subprocess it starts) inherits it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            instance = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            yield instance
            instance.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def login(page, live_server_url: str, username: str = "admin", password: str = "correct-horse-battery"):
    page.goto(f"{live_server_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (for a local server a test starts, or a dead one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
