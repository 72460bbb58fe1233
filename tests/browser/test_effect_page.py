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
    assert xs == [["before", -50, -10], ["after", 10, 50]]
    # Server text is escaped, never markup.
    assert page.locator("pre.annotation-text").inner_text() == "<b>adaptive</b> ON"
