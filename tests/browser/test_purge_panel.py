"""The purge panel names who held the oldest read view, on a real held-snapshot capture of the local
MariaDB, and marks the hold as a band on the purge chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CAPTURE = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / "mariadb-10.11--held-snapshot.jsonl.gz"


def test_the_purge_panel_names_the_holder_and_bands_the_hold(browser, live_server, admin_user):
    from collectors.imports import import_capture

    server = import_capture(CAPTURE, "held-snapshot").server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    login(page, live_server.url)
    page.goto(f"{live_server.url}/servers/{server.pk}/")
    page.wait_for_selector("body[data-charts-ready='1']", timeout=30000)
    page.select_option("#range", "custom")
    page.fill("#range-start", "2026-11-24T11:30:00")
    page.fill("#range-end", "2026-11-24T11:38:00")
    page.click("#range-apply")
    page.wait_for_function(
        "document.getElementById('chart-hll').dataset.range === "
        "String(Date.UTC(2026,10,24,11,30)) + ',' + String(Date.UTC(2026,10,24,11,38))")
    row = page.locator("#blocker-table tbody tr").first
    page.wait_for_function("document.querySelector('#blocker-table tbody td').textContent === '1539'")
    cells = row.locator("td").all_inner_texts()
    assert cells[:2] == ["1539", "reporting@127.0.0.1"]
    assert 145 <= int(cells[3]) <= 151
    assert cells[5] == "0 / 0"  # INNODB_TRX's rows locked / modified, from the capture
    bands = page.evaluate("""() => document.getElementById('chart-hll').layout.shapes
        .filter(s => s.type === 'rect' && s.fillcolor === '#d1242f').length""")
    assert bands == 1
    traces = page.evaluate("() => document.getElementById('chart-hll').data.map(t => t.name)")
    assert "purged undo pages/s" in traces
    lag = page.evaluate("""() => { const d = document.getElementById('chart-purge-lag');
        return {names: d.data.map(t => t.name), peak: Math.max(...d.data.filter(t => t.name && t.name.startsWith('history'))[0].y),
                bands: d.layout.shapes.filter(s => s.type === 'rect' && s.fillcolor === '#d1242f').length}; }""")
    assert {"history list growth /h (10-min fit)", "trx ids not yet purged"} <= set(lag["names"])
    assert lag["peak"] > 1_000_000 and lag["bands"] == 1
    settings = page.evaluate("""() => { const d = document.getElementById('chart-purge-settings');
        return {steps: d.data.filter(t => t.line && t.line.shape === 'hv').map(t => [t.name, t.y[0]]),
                notes: d.layout.annotations.map(a => a.text).join(' ')}; }""")
    assert settings["steps"] == [["innodb_purge_threads", 4], ["innodb_purge_batch_size", 127]]
    assert "innodb_max_purge_lag 0: DML never delayed" in settings["notes"]
    assert "innodb_max_purge_lag_delay 0 µs: the delay is capped at 0" in settings["notes"]
    page.locator("#chart-purge-lag-box").screenshot(
        path=str(Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "purge-lag.png"))
    page.locator("section.blockers").screenshot(
        path=str(Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "purge-blockers.png"))
