"""The effect page draws one chart per metric, before and after on one axis."""

from __future__ import annotations

import pytest

from tests.annotations.test_effects import AFTER, BEFORE, CHANGE, _store
from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_effect_page_draws_both_windows_around_the_change(browser, live_server, admin_user, local_server):
    import datetime as dt

    from annotations.models import Annotation

    local_server.poll_interval_s = 10
    local_server.save()
    _store(local_server, CHANGE - dt.timedelta(seconds=60), BEFORE)
    _store(local_server, CHANGE, AFTER)
    annotation = Annotation.objects.create(server=local_server, time=CHANGE, text="<b>adaptive</b> ON")
    page = browser.new_page()
    login(page, live_server.url)
    page.goto(f"{live_server.url}/annotations/{annotation.pk}/effect/?window=60s&settle=0")
    page.wait_for_selector(".effect-chart[data-metric=checkpoint_age_bytes] .main-svg")
    xs = page.evaluate("""() => {
        const gd = document.querySelector('.effect-chart[data-metric=checkpoint_age_bytes]');
        return gd.data.map(t => [t.name, Math.min(...t.x), Math.max(...t.x)]);
    }""")
    # Five points a window are too few to predict from: no predicted line, an honest verdict.
    assert xs[:2] == [["before", -50, -10], ["after", 10, 50]]
    assert page.locator("#effect-table tr[data-metric=checkpoint_age_bytes] td").nth(1).inner_text() == "inconclusive"
    # Server text is escaped, never markup.
    assert page.locator("pre.annotation-text").inner_text() == "<b>adaptive</b> ON"


def test_effect_page_shows_the_prediction_verdicts_and_units_on_a_real_capture(browser, live_server, admin_user):
    from pathlib import Path

    from annotations.models import Annotation
    from collectors.imports import import_capture

    capture = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / \
        "mariadb-10.11--adaptive-flushing-on.jsonl.gz"
    server = import_capture(capture, "adaptive-on").server
    change = Annotation.objects.get(server=server, tags__contains=["innodb_adaptive_flushing"])
    page = browser.new_page()
    login(page, live_server.url)
    page.goto(f"{live_server.url}/annotations/{change.pk}/effect/")
    page.wait_for_selector(".effect-chart[data-metric=checkpoint_age_bytes] .main-svg")
    names = page.evaluate("""() => document.querySelector('.effect-chart[data-metric=checkpoint_age_bytes]')
        .data.map(t => [t.name, t.x.length])""")
    assert names[2][0] == "predicted by the before window" and names[2][1] == names[1][1] > 0
    row = page.locator("#effect-table tr[data-metric=checkpoint_age_bytes] td")
    assert row.nth(1).inner_text() == "effect"
    assert row.nth(2).inner_text().endswith(" MB")  # 15.3 MB, not 15334464.2
    assert "engaged" in page.locator("#effect-mechanism").inner_text()
    page.screenshot(path=str(Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "effect.png"), full_page=True)
