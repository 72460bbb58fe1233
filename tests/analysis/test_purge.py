"""Who holds purge back, from the status text alone: every version in the corpus that prints the
session and read-view lines names the holder; those that do not say nothing rather than guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.purge import ViewHolder, hold_intervals, holders_from_status, holders_not_shown, split_client
from collectors.parsers.innodb_status import parse_innodb_status

STATUSES = Path(__file__).resolve().parent.parent / "fixtures" / "innodb_status"


def _holders(name: str, min_age_s: int = 0):
    status = parse_innodb_status((STATUSES / f"{name}.txt").read_text(errors="replace"))
    return holders_from_status(status.transactions, min_age_s=min_age_s)


@pytest.mark.parametrize("client, expected", [
    ("127.0.0.1 reporting", ("127.0.0.1", "reporting")),
    ("localhost root Sending data", ("localhost", "root")),
    ("upload 10.0.16.1 admin", ("upload", "admin")),  # MySQL 5.0/5.1: host, address, user
    ("10.0.2.107 wikiuser", ("10.0.2.107", "wikiuser")),
    ("", (None, None)),
])
def test_the_session_line_gives_host_and_user(client, expected):
    assert split_client(client) == expected


@pytest.mark.parametrize("name, thread_id, user, host, age_s", [
    ("unknown--cacti-innodb-006", 14, "root", "localhost", 236),  # MySQL 5.0, two-word trx ids
    ("unknown--pt-mysql-summary-innodb-status.004", 391259, "admin", "upload", 263),  # 5.1
    ("unknown--nagios-innodb-status-001", 31615419, "foozle", "10.124.62.114", 40),
    ("mariadb-10.6--datadog-mariadb-106", 338, "shopper_1", "127.0.0.1", 0),
])
def test_the_oldest_view_holder_is_named_from_the_corpus(name, thread_id, user, host, age_s):
    oldest = _holders(name)[0]
    assert (oldest.thread_id, oldest.user, oldest.host, oldest.age_s) == (thread_id, user, host, age_s)


def test_a_status_without_read_view_lines_names_nobody():
    assert _holders("mariadb-10.11--local-idle") == []


def test_young_views_are_statements_not_blockers():
    assert _holders("mariadb-10.6--datadog-mariadb-106", min_age_s=10) == []
    assert [h.thread_id for h in _holders("unknown--cacti-innodb-006", min_age_s=10)] == [14]


def _h(thread, trx, age):
    return ViewHolder(thread, "app", "10.0.0.5", trx, age, "ACTIVE", None)


def test_sightings_join_into_intervals_newest_first():
    sightings = [(0, _h(1, "a", 10)), (10, _h(1, "a", 20)), (20, _h(1, "a", 30)),
                 (100, _h(1, "a", 110)),  # seen again after a gap: a new interval
                 (10, _h(2, "b", 12))]
    intervals = hold_intervals(sightings, gap_s=30)
    assert [(i.thread_id, i.first_seen, i.last_seen, i.max_age_s) for i in intervals] == [
        (1, 100, 100, 110), (1, 0, 20, 30), (2, 10, 10, 12)]


CORPUS = sorted(STATUSES.glob("*.txt"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_every_corpus_status_names_the_holder_or_says_why_not(path):
    """Each text either names the oldest view's holder, lists every session with none holding a
    view (nothing to name), or says what this version's text does not show."""
    transactions = parse_innodb_status(path.read_text(errors="replace")).transactions
    holders = holders_from_status(transactions, min_age_s=0)
    reason = holders_not_shown(transactions)
    if holders:
        assert holders[0].thread_id is not None and holders[0].age_s is not None
    elif reason is None:
        assert transactions.read_views == 0  # the whole list printed, and no session holds a view
    else:
        assert "not shown by this version" in reason or "partly shown" in reason


@pytest.mark.parametrize("name, expected", [
    ("unknown--cacti-innodb-010", "not shown by this version: no TRANSACTIONS section"),
    ("unknown--pt-deadlock-logger-bug-1082104", "not shown by this version: no TRANSACTIONS section"),
    ("unknown--nagios-innodb-status-001", "partly shown: the server cut the transaction list"),
    ("mysql-8.0--datadog-mysql-80", None),  # six sessions, none in a transaction
    ("mysql-8.4--datadog-mysql-84", None),  # one in a lock wait, without a read view
])
def test_what_a_version_does_not_show_is_said(name, expected):
    transactions = parse_innodb_status((STATUSES / f"{name}.txt").read_text(errors="replace")).transactions
    reason = holders_not_shown(transactions)
    assert (reason is None) if expected is None else (expected in reason)
