"""The dashboard in headless Chromium: overview order and sorting, every server chart drawn against
its limits, one shared time axis, range changes, annotations, the raw view's escaping, phone width.
Screenshots for the README land in docs/screenshots/."""

from __future__ import annotations

import datetime as dt
import math
import zlib
from pathlib import Path

import pytest
from django.utils import timezone

from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
MiB = 1024 * 1024
MAX_AGE = 40_050_893
ASYNC = MAX_AGE - MAX_AGE // 8
VARIABLES = {
    "innodb_log_file_size": str(48 * MiB), "innodb_io_capacity": "200", "innodb_io_capacity_max": "2000",
    "innodb_max_dirty_pages_pct": "90", "innodb_max_dirty_pages_pct_lwm": "10", "innodb_max_purge_lag": "5000",
    "innodb_adaptive_flushing": "OFF", "innodb_adaptive_flushing_lwm": "10",
    "innodb_purge_threads": "4", "innodb_purge_batch_size": "300", "innodb_max_purge_lag_delay": "0",
}
PAYLOAD = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"


def make_server(name, *, tags=("primary",), sample_age_s=4.0, **kw):
    from servers.models import Server

    fields = {"host": "db.example", "flavor": "mariadb", "version": "10.11.6-MariaDB", "variables": VARIABLES,
              "poll_interval_s": 10, "last_poll_status": "ok",
              "last_sample_at": timezone.now() - dt.timedelta(seconds=sample_age_s), **kw}
    return Server.objects.create(name=name, tags=list(tags), **fields)


def status_text(ts: dt.datetime) -> str:
    return (f"=====================================\n{ts:%Y-%m-%d %H:%M:%S} 0x7f INNODB MONITOR OUTPUT\n"
            "=====================================\n------------------------\nLATEST DETECTED DEADLOCK\n"
            f"------------------------\n*** (1) TRANSACTION:\nUPDATE t SET v = '{PAYLOAD}'\n"
            "------------\nTRANSACTIONS\n------------\nHistory list length 42\n"
            "----------------------------\nEND OF INNODB MONITOR OUTPUT\n")


def store_disk(server, stamps):
    """/proc/diskstats counters of the datadir device: writes follow the flush bursts."""
    from timeseries.models import DiskSample

    writes = io_ms = write_ms = 0
    rows = []
    for i, ts in enumerate(stamps):
        burst = (i % 60) / 60.0 > 0.9
        w = 4000 if burst else 400
        writes += w
        write_ms += w * (3 if burst else 1)
        io_ms += 4500 if burst else 1000
        rows.append(DiskSample(server=server, device="nvme0n1", ts=ts, role="datadir", reads=i * 50, reads_merged=0,
                               sectors_read=i * 800, read_ms=i * 40, writes=writes, writes_merged=0,
                               sectors_written=writes * 32, write_ms=write_ms, in_progress=1, io_ms=io_ms,
                               weighted_io_ms=write_ms))
    DiskSample.objects.bulk_create(rows)


def store_history(server, *, n=720, step_s=5.0, level=0.6, wave=0.35):
    """An hour of spiky flushing: checkpoint age saw-tooths towards the async point, flushing
    bursts when it gets there; counters are cumulative as the server prints them."""
    from timeseries.models import InnodbSample, RawStatus, SemaphoreWaitSample
    from timeseries.partitions import ensure_partitions_for

    end = server.last_sample_at
    stamps = [end - dt.timedelta(seconds=step_s * (n - 1 - i)) for i in range(n)]
    ensure_partitions_for(stamps)
    rows, lsn, flushed, commits = [], 10**9, 10**6, 10**5
    for i, ts in enumerate(stamps):
        phase = (i % 60) / 60.0
        age = int(ASYNC * (level - wave + 2 * wave * phase))
        burst = 900 if phase > 0.9 else 60
        lsn += int(2.5 * MiB * step_s)
        flushed += int(burst * step_s)
        commits += int(800 * step_s)
        rows.append(InnodbSample(
            server=server, ts=ts, lsn=lsn, checkpoint_lsn=lsn - age, checkpoint_age_bytes=age,
            modified_age_bytes=int(age * 0.97), status_checkpoint_max_age=MAX_AGE,
            history_list_length=1000 + 5 * i, pages_dirty=4000 + int(3000 * phase), pages_data=60000, pages_free=5536,
            pages_total=65536, innodb_buffer_pool_pages_flushed=flushed, flush_adaptive_pages=flushed // 3,
            flush_background_pages=flushed // 10, com_commit=commits, trx_id_counter=2 * commits,
            trx_active=4 + int(4 * phase), lock_waits=int(phase > 0.9),
            trx_oldest_active_s=int(20 * phase), semaphore_waits=1 if phase > 0.9 else 0,
            semaphore_longest_wait_s=2.0 if phase > 0.9 else 0.0))
    InnodbSample.objects.bulk_create(rows)
    RawStatus.objects.bulk_create([
        RawStatus(server=server, ts=ts, parser_version="test", text_zlib=zlib.compress(status_text(ts).encode()))
        for ts in stamps[::12]])
    SemaphoreWaitSample.objects.bulk_create([
        SemaphoreWaitSample(server=server, ts=ts, seq=0, file="btr0cur.cc", line=3200, seconds=2.0, latch="RW-latch",
                            mode="X", created_file="dict0dict.cc", created_line=1627)
        for i, ts in enumerate(stamps) if (i % 60) / 60.0 > 0.9])
    return stamps


@pytest.fixture
def page(browser, live_server, admin_user):
    page = browser.new_page(viewport={"width": 1280, "height": 1800})
    login(page, live_server.url)
    yield page
    page.close()


def open_server_page(page, live_server, server):
    page.goto(f"{live_server.url}/servers/{server.pk}/")
    page.wait_for_selector("body[data-charts-ready='1']", timeout=30000)


def chart_x_range(page, chart_id: str) -> list[str]:
    return page.evaluate(f"document.getElementById('{chart_id}').layout.xaxis.range")


def avg_points(page, chart_id: str) -> int:
    """Points of the first series' average line (trace 2, after its min/max band)."""
    return page.evaluate(f"document.getElementById('{chart_id}').data[2].x.length")


def test_overview_puts_the_server_nearest_to_a_stall_on_top_and_sorts(page, live_server):
    hot = make_server("orders-primary", tags=["primary", "eu"])
    store_history(hot, n=120, level=1.05, wave=0.05)
    for i, level in enumerate([0.2, 0.45, 0.3, 0.6]):
        store_history(make_server(f"replica-{i + 1}", tags=["replica", "eu"]), n=120, level=level, wave=0.1)
    make_server("reports-legacy", tags=["replica"], sample_age_s=7200)
    make_server("billing-db", tags=["primary"], last_poll_status="unreachable", last_error="connection refused")
    from collectors.tasks import heartbeat

    heartbeat()  # a running collector, as on a healthy installation

    page.goto(f"{live_server.url}/")
    names = page.eval_on_selector_all("#servers tbody tr", "rows => rows.map(r => r.dataset.name)")
    assert names[0] == "orders-primary"
    first = page.inner_text("#servers tbody tr:first-child td:first-child")
    assert "warning" in first  # a word, not only a colour
    assert page.locator("#servers svg.spark polyline").count() == 5
    assert page.locator(".banner-critical").count() == 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(SCREENSHOTS / "overview.png"), full_page=True)

    page.click("th[data-sort=name]")
    names = page.eval_on_selector_all("#servers tbody tr", "rows => rows.map(r => r.dataset.name)")
    assert names == sorted(names)

    from servers.models import Server

    Server.objects.filter(name="replica-1").update(last_poll_status="unreachable")
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # back to the tab: refresh now
    page.wait_for_selector("#servers[data-refreshed-at]")
    assert "unreachable" in page.inner_text("#servers tr[data-name='replica-1'] td:first-child")
    names = page.eval_on_selector_all("#servers tbody tr", "rows => rows.map(r => r.dataset.name)")
    assert names == sorted(names)  # the chosen sort survives the refresh
    page.goto(f"{live_server.url}/?tag=replica")
    names = page.eval_on_selector_all("#servers tbody tr", "rows => rows.map(r => r.dataset.name)")
    assert set(names) == {"replica-1", "replica-2", "replica-3", "replica-4", "reports-legacy"}


def test_server_page_draws_every_chart_with_its_limits(page, live_server):
    server = make_server("orders-primary")
    store_disk(server, store_history(server))
    open_server_page(page, live_server, server)

    ids = page.eval_on_selector_all(".chart", "divs => divs.map(d => d.id)")
    assert {"chart-checkpoint", "chart-redo", "chart-flush", "chart-dirty", "chart-hll",
            "chart-semaphores", "chart-trx", "chart-commits", "chart-disk"} <= set(ids)
    for chart_id in ids:
        drawn = int(page.get_attribute(f"#{chart_id}", "data-drawn"))
        # Every series chart draws a min-max band and a line; the purge settings are two step lines.
        assert drawn == 2 if chart_id == "chart-purge-settings" else drawn >= 3, chart_id
    labels = page.evaluate("document.getElementById('chart-checkpoint').layout.annotations.map(a => a.text)")
    assert labels == ["adaptive flushing lwm", "async flush", "max checkpoint age"]
    flush_lines = page.evaluate("document.getElementById('chart-flush').layout.annotations.map(a => a.text)")
    assert flush_lines == ["innodb_io_capacity", "innodb_io_capacity_max"]
    flush_traces = page.evaluate("document.getElementById('chart-flush').data.map(t => t.name).filter(Boolean)")
    assert "adaptive" in flush_traces and "sync" not in flush_traces  # no sync flush data: no trace
    redo = page.evaluate("Math.max(...document.getElementById('chart-redo').data[2].y)")
    assert math.isclose(redo, 2.5, rel_tol=0.05)  # MB/s
    runway = page.evaluate("document.getElementById('chart-redo').data.find(t => (t.name || '').startsWith('runway')).y"
                           ".filter(v => v !== null)")
    assert runway and all(0 <= v <= 240 for v in runway)  # the sawtooth climbs towards the max age
    page.wait_for_function("document.querySelector('#latch-table tbody td').textContent.includes('dict0dict.cc:1627')")
    disk = page.evaluate("document.getElementById('chart-disk').data.map(t => t.name).filter(Boolean)")
    assert {"writes/s", "busy %"} <= set(disk)
    busy = page.evaluate("Math.max(...document.getElementById('chart-disk').data.find(t => t.name === 'busy %').y)")
    assert 80 <= busy <= 100  # 4.5 s of I/O time in 5 s at the bursts
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "server.png"), full_page=True)


def test_zooming_one_chart_moves_all_and_refetches_finer(page, live_server):
    server = make_server("zoomed")
    stamps = store_history(server)
    open_server_page(page, live_server, server)
    page.select_option("#range", "86400")  # a day: the hour of data shrinks to a few buckets
    page.wait_for_function("document.getElementById('chart-checkpoint').dataset.range.split(',')[1]"
                           " - document.getElementById('chart-checkpoint').dataset.range.split(',')[0] > 80000000")
    coarse = avg_points(page, "chart-checkpoint")

    start, end = stamps[100], stamps[400]
    page.evaluate(
        "([a, b]) => Plotly.relayout(document.getElementById('chart-hll'), {'xaxis.range': [a, b]})",
        [_axis(start), _axis(end)])
    expected = f"{int(start.timestamp() * 1000)},{int(end.timestamp() * 1000)}"
    page.wait_for_function(
        "exp => Array.from(document.querySelectorAll('.chart[data-drawn]')).every(d => d.dataset.range === exp)",
        arg=expected, timeout=20000)
    for chart_id in ("chart-checkpoint", "chart-flush", "chart-trx"):
        assert chart_x_range(page, chart_id)[0].startswith(_axis(start)[:19])
    fine = avg_points(page, "chart-checkpoint")
    assert fine >= 250 and fine > 5 * coarse  # 300 samples of 5 s, now each its own point

    page.dblclick("#chart-checkpoint .nsewdrag")  # back to the chosen range
    page.wait_for_function("document.getElementById('chart-flush').dataset.range.split(',')[1]"
                           " - document.getElementById('chart-flush').dataset.range.split(',')[0] > 80000000")


def _axis(ts: dt.datetime) -> str:
    """The page shows local time; the test browser runs in UTC, so both are the same string."""
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:23]


def test_range_picker_and_utc_toggle_change_every_chart(page, live_server):
    server = make_server("ranged")
    store_history(server)
    open_server_page(page, live_server, server)
    page.select_option("#range", "900")
    page.wait_for_function("Array.from(document.querySelectorAll('.chart[data-drawn]')).every(d => "
                           "{ const [a, b] = d.dataset.range.split(','); return Math.abs(b - a - 900000) < 5000; })")
    assert 150 <= avg_points(page, "chart-checkpoint") <= 181  # 15 minutes of 5 s samples
    page.check("#utc")
    page.wait_for_function("document.getElementById('range-label').textContent.includes('UTC')")

    page.select_option("#range", "custom")
    page.fill("#range-start", "2026-01-01T00:00:00")
    page.fill("#range-end", "2026-01-01T01:00:00")
    page.click("#range-apply")
    page.wait_for_function(
        "document.getElementById('chart-hll').dataset.range === String(Date.UTC(2026,0,1)) + ',' + String(Date.UTC(2026,0,1,1))")


def test_a_notification_link_opens_every_chart_on_the_incident_window(page, live_server):
    server = make_server("linked")
    stamps = store_history(server)
    start, end = stamps[50], stamps[200]
    query = f"start={start.isoformat(timespec='seconds')}&end={end.isoformat(timespec='seconds')}"
    page.goto(f"{live_server.url}/servers/{server.pk}/?{query}".replace("+", "%2B"))
    page.wait_for_selector("body[data-charts-ready='1']", timeout=30000)
    expected = f"{int(start.replace(microsecond=0).timestamp() * 1000)},{int(end.replace(microsecond=0).timestamp() * 1000)}"
    page.wait_for_function(
        "exp => Array.from(document.querySelectorAll('.chart[data-drawn]')).every(d => d.dataset.range === exp)",
        arg=expected, timeout=20000)


def test_annotations_are_drawn_on_every_chart_with_their_text(page, live_server, api_token, client):
    server = make_server("annotated")
    stamps = store_history(server)
    response = client.post("/api/v1/annotations", {"time": stamps[300].isoformat(), "text": "adaptive flushing ON",
                                                   "server": server.pk, "tags": ["tuning"]},
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code in (200, 201), response.content
    open_server_page(page, live_server, server)
    for chart_id in page.eval_on_selector_all(".chart", "divs => divs.map(d => d.id)"):
        texts = page.evaluate(f"(document.getElementById('{chart_id}').data.find(t => t.meta === 'annotations') "
                              "|| {hovertext: []}).hovertext")
        assert any("adaptive flushing ON" in t for t in texts), chart_id


def test_raw_view_escapes_status_text_and_clicking_a_chart_opens_it(page, live_server):
    server = make_server("raw-db")
    stamps = store_history(server)
    page.goto(f"{live_server.url}/servers/{server.pk}/raw/?at={stamps[-1].isoformat().replace('+', '%2B')}")
    assert PAYLOAD in page.inner_text("#raw-text")
    assert "LATEST DETECTED DEADLOCK" in page.inner_text("#deadlock")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("#raw-text script, #raw-text img, #deadlock img").count() == 0

    open_server_page(page, live_server, server)
    box = page.locator("#chart-checkpoint .nsewdrag").bounding_box()
    with page.expect_popup() as popup_info:
        page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    popup = popup_info.value
    popup.wait_for_load_state()
    assert f"/servers/{server.pk}/raw/?at=" in popup.url
    assert PAYLOAD in popup.inner_text("#raw-text")
    assert popup.evaluate("typeof window.__pwned") == "undefined"


def test_pages_fit_a_phone_screen(browser, live_server, admin_user):
    server = make_server("phone-db")
    store_history(server, n=120)
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    login(phone, live_server.url)
    for path in ("/", f"/servers/{server.pk}/"):
        phone.goto(live_server.url + path)
        if path != "/":
            phone.wait_for_selector("body[data-charts-ready='1']", timeout=30000)
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, (path, overflow)
        assert "ok" in phone.inner_text("body")
    phone.close()
