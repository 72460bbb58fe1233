"""The what-if panel on the server page: a real capture of the local MariaDB whose checkpoint age
sat at the async point with a 48 MB redo log, replayed with a 128 MB log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CAPTURE = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / "mariadb-10.11--redo-log-resize.jsonl.gz"


def _panel(browser, live_server, end: str):
    """The server page of the capture, its what-if range filled in (times in UTC)."""
    from collectors.imports import import_capture

    server = import_capture(CAPTURE, "redo-log-resize").server
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, timezone_id="UTC")
    login(page, live_server.url)
    page.goto(f"{live_server.url}/servers/{server.pk}/")
    page.fill("#whatif-form input[name=start]", "2026-11-24T11:47:40")
    page.fill("#whatif-form input[name=end]", end)
    return page


def test_a_bigger_redo_log_would_have_stayed_below_async(browser, live_server, admin_user):
    page = _panel(browser, live_server, "2026-11-24T11:50:20")
    page.fill("#whatif-form input[name=redo_mb]", "128")
    page.click("#whatif-form button[type=submit]")
    page.wait_for_function("document.getElementById('whatif-verdict').textContent.length > 0", timeout=30000)
    verdict = page.inner_text("#whatif-verdict")
    assert verdict.startswith("would have stayed below async: peak ")
    assert "instead of 10" in verdict  # measured peak ≈ 103 % of the 48 MB log's async point
    assert "mean" in page.inner_text("#whatif-fit")
    names = page.evaluate("() => document.getElementById('whatif-chart').data.map(t => t.name)")
    assert names[:3] == ["measured", "replayed (in force)", "what if"]
    assert "async point (what if)" in names
    page.wait_for_function("document.getElementById('whatif-redo').textContent.length > 0")
    redo = page.inner_text("#whatif-redo")
    assert redo.startswith("Redo sizing (7 days to the end of the range): the 48 MB log holds 1.")
    assert "resize: dynamic: SET GLOBAL innodb_log_file_size" in redo
    flush = page.evaluate("() => document.getElementById('whatif-flush-chart').data.map(t => t.name)")
    assert "flushed/s measured" in flush and "what if: background" in flush and "dirty what if" in flush
    page.locator("#whatif-panel").screenshot(
        path=str(Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "what-if.png"))


def test_a_range_too_short_to_replay_is_said_in_words(browser, live_server, admin_user):
    page = _panel(browser, live_server, "2026-11-24T11:47:41")
    page.click("#whatif-form button[type=submit]")
    page.wait_for_selector("#whatif-error:not([hidden])", timeout=30000)
    assert "usable samples" in page.inner_text("#whatif-error")
