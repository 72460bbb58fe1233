"""The incident page of a burst: one-second charts with the burst as a region, the raw texts
stepped through second by second, the worst second's sessions, the downloads; alerts link to it."""

from __future__ import annotations

import pytest

from tests.conftest import login
from tests.incidents.burst_fixture import make_burst

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_burst_page_draws_the_burst_and_steps_through_its_seconds(browser, live_server, admin_user, local_server):
    burst = make_burst(local_server, count=12)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    login(page, live_server.url)
    page.goto(f"{live_server.url}/bursts/{burst.pk}/")
    page.wait_for_selector("body[data-charts-ready='1']", timeout=30000)
    # One point a second on the checkpoint-age chart, and the burst as a shaded region over it.
    drawn = page.evaluate("""() => {
        const gd = document.getElementById('chart-checkpoint');
        const trace = gd.data.find((t) => t.name === 'checkpoint age');
        const regions = gd.layout.shapes.filter((s) => s.type === 'rect' && s.xref === 'x');
        return {points: trace.x.length, regions: regions.length};
    }""")
    assert drawn == {"points": 12, "regions": 1}
    assert page.locator("#chart-threads .scatterlayer .trace").count() >= 1
    # The worst second (highest checkpoint age: the trigger's metric) opens in the stepper.
    from incidents.queries import worst_second

    worst = page.get_attribute("body", "data-step-shown")
    assert worst == str(worst_second(burst).seq)
    assert "END OF INNODB MONITOR OUTPUT" in page.locator("#step-text").inner_text()
    page.click("#step-prev" if int(worst) > 0 else "#step-next")
    page.wait_for_function(f"document.body.dataset.stepShown !== '{worst}'")
    page.select_option("#step-what", "global_status")
    page.wait_for_function("document.getElementById('step-text').textContent.includes('Innodb_checkpoint_age')")
    assert page.locator("#trx-table tbody tr").count() >= 1
    assert page.get_attribute("#download-pt-stalk", "href") == f"/api/v1/bursts/{burst.pk}/pt-stalk"
    with page.expect_download() as download:
        page.click("#download-capture")
    assert download.value.suggested_filename.endswith(".jsonl.gz")


def test_an_alert_that_fired_during_a_burst_links_to_it(client, admin_user, local_server):
    from alerting.models import AlertEvent, AlertRule

    burst = make_burst(local_server, count=3)
    rule = AlertRule.objects.create(name="age", metric="checkpoint_age_pct_of_async", op=">", threshold=90)
    AlertEvent.objects.create(rule=rule, server=local_server, ts=burst.started_at, state="firing", value=95,
                              severity=rule.severity)
    client.force_login(admin_user)
    page = client.get("/alerts/history/").content.decode()
    assert f'href="/bursts/{burst.pk}/"' in page
    assert f'href="/bursts/{burst.pk}/"' in client.get(f"/servers/{local_server.pk}/").content.decode()
