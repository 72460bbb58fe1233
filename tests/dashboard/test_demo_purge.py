"""The demo's purge act on the local MariaDB, shortened: purge throttled, then more purge threads,
then a reporting connection holding a snapshot. The page (purge-blockers) and the history-list alert
must name that connection while it holds the view, and the page must not after its COMMIT. It drives
a load and SET GLOBALs, so it waits for the shared server's lock first."""

from __future__ import annotations

import fcntl

import MySQLdb
import pytest

from alerting import builtin_rules
from dashboard import demo_purge
from tests.conftest import MARIADB

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
LOCK = "/tmp/innowatch-mariadb.lock"


def test_the_purge_act_names_the_holder_on_the_page_and_in_the_alert(local_server):
    builtin_rules.install()  # a transactional test may have emptied the rules the migration made
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = MySQLdb.connect(**MARIADB, autocommit=True)
        before = demo_purge.demo.read_globals(conn.cursor(), list(demo_purge.THROTTLED))
        lines = demo_purge.run_purge_act(local_server, {**MARIADB, "connect_timeout": 5}, phase_s=20, hold_s=90,
                                         tail_s=10, interval_s=2, settle_s=5, say=lambda line: None)
        after = demo_purge.demo.read_globals(conn.cursor(), list(demo_purge.THROTTLED))
        conn.close()
    text = "\n".join(lines)
    assert "page names thread" in text and f"{demo_purge.REPORTING_USER}@127.0.0.1" in text
    assert "alert hll-high-within-the-hour: oldest read view: thread" in text
    assert "after the COMMIT the page names nobody" in text
    assert "innodb_purge_threads" in text  # the change was detected and reported
    assert after == before  # settings restored
