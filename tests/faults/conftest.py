"""A second MariaDB instance that the fault tests own: stopped, paused, restarted at will.

The machine's MariaDB (port 3306) stays the healthy server (`local_server`); this one runs on a
free port with its own data directory, so breaking it cannot hurt anyone else's tests.
Start-up measured on this machine: mariadb-install-db ≈ 1.3 s, mariadbd accepting ≈ 0.3 s; the
instance is session-scoped and each test gets it back running (`second_mariadb`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import MySQLdb
import pytest

from tests.conftest import wait_for

MONITOR = ("iw_monitor", "monitor-pass-1")  # PROCESS + REPLICATION CLIENT, as the README asks
NO_PROCESS = ("iw_noprocess", "noprocess-pass-1")  # REPLICATION CLIENT only


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



class MariadbInstance:
    """mariadbd in a subprocess on 127.0.0.1:<port>, data in a temporary directory."""

    def __init__(self, base: Path):
        self.base = base
        self.datadir = base / "data"
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.paused = False

    def install(self) -> None:
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.datadir}",
             "--auth-root-authentication-method=normal", "--user=root"],
            check=True, capture_output=True, timeout=60,
        )

    def start(self) -> None:
        log = open(self.base / "mariadbd.log", "ab")
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.datadir}", f"--port={self.port}",
             f"--socket={self.base}/sock", "--bind-address=127.0.0.1", "--user=root", "--skip-log-bin",
             "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=8M"],
            stdout=log, stderr=log,
        )
        log.close()
        wait_for(self._accepts, 30, f"mariadbd on port {self.port}")

    def _accepts(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"mariadbd exited: {(self.base / 'mariadbd.log').read_text()[-2000:]}")
        try:
            MySQLdb.connect(host="127.0.0.1", port=self.port, user="root", connect_timeout=1).close()
            return True
        except MySQLdb.Error:
            return False

    def stop(self) -> None:
        if self.proc is None:
            return
        self.resume()
        self.proc.terminate()  # clean shutdown: the next start needs no crash recovery
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.paused and self.proc is not None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self.paused

    def root(self):
        return MySQLdb.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True)

    def create_accounts(self) -> None:
        conn = self.root()
        cur = conn.cursor()
        for (user, password), grants in ((MONITOR, "PROCESS, REPLICATION CLIENT"), (NO_PROCESS, "REPLICATION CLIENT")):
            cur.execute("CREATE USER IF NOT EXISTS %s@'127.0.0.1' IDENTIFIED BY %s", (user, password))
            cur.execute(f"GRANT {grants} ON *.* TO %s@'127.0.0.1'", (user,))
        cur.execute("CREATE DATABASE IF NOT EXISTS scratch")
        cur.execute("CREATE TABLE IF NOT EXISTS scratch.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100))")
        conn.close()


@pytest.fixture(scope="session")
def _second_mariadb_session():
    base = Path(tempfile.mkdtemp(prefix="iw-faults-mariadb-"))
    instance = MariadbInstance(base)
    try:
        instance.install()
        instance.start()
        instance.create_accounts()
        yield instance
    finally:
        instance.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def second_mariadb(_second_mariadb_session):
    """The second instance, running and not paused at the start and at the end of each test."""
    instance = _second_mariadb_session
    if not instance.running():
        instance.stop()
        instance.start()
    yield instance
    if not instance.running():
        instance.stop()
        instance.start()


@pytest.fixture
def make_server(db):
    """A Server row for an address/account; poll interval long enough that rates span the test."""
    from servers.models import Server

    def make(name: str, port: int, user: str, password: str, interval_s: int = 60) -> Server:
        server = Server(name=name, host="127.0.0.1", port=port, user=user, poll_interval_s=interval_s)
        server.set_password(password)
        server.save()
        return server

    return make
