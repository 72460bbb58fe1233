"""Everything a monitored server says is shown as text, never run: a server whose error, version,
status text (a deadlocked query), and latch file names carry script payloads."""

from __future__ import annotations

import datetime as dt
import zlib

import pytest

from tests.conftest import login

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
STATUS_TEXT = f"""
=====================================
2026-11-22 10:00:00 0x7f INNODB MONITOR OUTPUT
=====================================
------------------------
LATEST DETECTED DEADLOCK
------------------------
2026-11-22 09:59:00 0x7f
*** (1) TRANSACTION:
TRANSACTION 1234, ACTIVE 1 sec starting index read
MySQL thread id 7, OS thread handle 1, query id 9 localhost app updating
UPDATE t SET note = '{SCRIPT}' WHERE id = 1 /* {IMG} */
---
LOG
---
Log sequence number 1000
Log flushed up to   1000
Pages flushed up to 1000
Last checkpoint at  1000
----------------------------
END OF INNODB MONITOR OUTPUT
============================
"""


@pytest.fixture
def hostile_server(db):
    from servers.models import CollectorRun, Server
    from timeseries.models import InnodbSample, RawStatus, SemaphoreWaitSample

    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    server = Server.objects.create(
        name="hostile", host="127.0.0.1", poll_interval_s=10, version=f"10.11 {SCRIPT}",
        version_comment=IMG, last_error=f"1064: near '{SCRIPT}{IMG}'", last_poll_status="error",
        last_sample_at=now,
    )
    InnodbSample.objects.create(server=server, ts=now, lsn=1000, checkpoint_lsn=1000, checkpoint_age_bytes=0,
                                history_list_length=1, semaphore_waits=1)
    RawStatus.objects.create(server=server, ts=now, parser_version="1",
                             text_zlib=zlib.compress(STATUS_TEXT.encode()))
    SemaphoreWaitSample.objects.create(server=server, ts=now, seq=0, file=IMG[:200], line=1, seconds=3.0,
                                       latch=SCRIPT[:40], created_file=SCRIPT, created_line=2)
    CollectorRun.objects.create(server=server, kind="innodb", started_at=now, finished_at=now,
                                status="failed", error_kind="error", error=f"{SCRIPT} {IMG}")
    return server


def pages(server) -> list[str]:
    return ["/", f"/servers/{server.pk}/", f"/servers/{server.pk}/raw/"]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["overview", "server", "raw"])
def test_server_supplied_text_is_escaped_in_pages(client, admin_user, hostile_server, which):
    client.force_login(admin_user)
    url = pages(hostile_server)[which]
    html = client.get(url).content.decode()
    assert "&lt;script&gt;window.__pwned" in html, f"{url}: the payload is not shown escaped"
    assert "<script>window.__pwned" not in html, url
    assert "<img src=x onerror" not in html, url


def test_the_raw_view_shows_the_deadlocked_query_escaped(client, admin_user, hostile_server):
    client.force_login(admin_user)
    html = client.get(f"/servers/{hostile_server.pk}/raw/").content.decode()
    assert "UPDATE t SET note = &#x27;&lt;script&gt;window.__pwned=1&lt;/script&gt;&#x27;" in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_script_from_a_monitored_server_runs_in_the_browser(hostile_server, admin_user, live_server, browser):
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, live_server.url)
    for url in pages(hostile_server):
        page.goto(live_server.url + url)
        page.wait_for_load_state("networkidle")
        assert "__pwned" in page.content(), f"{url}: the payload is not on the page, nothing tested"
        assert page.evaluate("typeof window.__pwned") == "undefined", url
    # The latches and raw-status JSON the server page draws from, rendered by the page's JS.
    page.goto(f"{live_server.url}/servers/{hostile_server.pk}/")
    page.wait_for_timeout(1500)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not dialogs
