"""Server page annotations panel: add, edit, delete through the API, text shown escaped."""

from __future__ import annotations

import pytest

from tests.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_add_edit_and_delete_an_annotation_on_the_server_page(browser, live_server, admin_user, local_server):
    from annotations.models import Annotation

    page = browser.new_page()
    login(page, live_server.url)
    page.goto(f"{live_server.url}/servers/{local_server.pk}/")
    page.fill("#annotation-form input[name=text]", "<img src=x onerror=alert(1)> raised io_capacity")
    page.fill("#annotation-form input[name=tags]", "tuning")
    page.click("#annotation-form button[type=submit]")
    row = page.locator("#annotation-list tbody tr").first
    row.wait_for()
    assert "<img src=x onerror=alert(1)> raised io_capacity" in row.inner_text()
    assert page.locator("#annotation-list img").count() == 0
    saved = Annotation.objects.get()
    assert (saved.server_id, saved.author, saved.tags) == (local_server.pk, admin_user, ["tuning"])
    assert row.locator("a").get_attribute("href") == f"/annotations/{saved.pk}/effect/"

    page.once("dialog", lambda d: d.accept("io_capacity 1000"))
    row.locator("button", has_text="edit").click()
    page.locator("#annotation-list tbody tr", has_text="io_capacity 1000").wait_for()
    assert Annotation.objects.get().text == "io_capacity 1000"

    page.once("dialog", lambda d: d.accept())
    page.locator("#annotation-list tbody tr button", has_text="delete").click()
    page.locator("#annotation-list tbody tr").wait_for(state="detached")
    assert not Annotation.objects.exists()
