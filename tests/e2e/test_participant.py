"""A participant, in a real browser: sign in, upload a bad run, read its errors, fix it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from submissions.models import Run
from tests.e2e.conftest import screenshot
from tests.support import Personas, example

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("secret-pass-123")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {username}")).to_be_visible()


def upload_run(page: Page, name: str, content: bytes) -> None:
    page.get_by_label("Track").select_option("pr")
    page.get_by_label("Run name").fill(name)
    page.get_by_label("Run file").set_input_files(
        {"name": name, "mimeType": "text/plain", "buffer": content})
    page.get_by_role("button", name="Upload and validate").click()


def test_a_participant_uploads_a_bad_run_sees_its_errors_then_a_good_one(
    page: Page, live_server: Any, personas: Personas, tracks: object
) -> None:
    base = live_server.url
    sign_in(page, base, "alice")
    page.goto(f"{base}/campaigns/toy/")
    screenshot(page, "campaign-home")
    page.get_by_role("link", name="Submit a run").click()

    upload_run(page, "WASEDA-PO-1", b"D001;1;Q1;Fine.\nD001;1;Q2;Tie.\nD009;2;Q3;Unknown.\n")
    report = page.get_by_role("alert")
    expect(report).to_contain_text("WASEDA-PO-1 was not accepted: 2 problem(s)")
    expect(page.locator("table.report tbody tr")).to_have_count(2)
    expect(page.locator("table.report")).to_contain_text("PassageRank")
    screenshot(page, "upload-invalid")

    upload_run(page, "WASEDA-PO-1", example("WASEDA-PO-1"))
    expect(page.get_by_role("heading", name="WASEDA-PO-1")).to_be_visible()
    expect(page.get_by_text("3 questions, 7 passages")).to_be_visible()
    screenshot(page, "run-detail")
    assert Run.objects.filter(name="WASEDA-PO-1", is_current=True, status="valid").exists()

    page.goto(f"{base}/campaigns/toy/runs/")
    expect(page.get_by_role("link", name="WASEDA-PO-1").first).to_be_visible()
    screenshot(page, "runs")


def test_the_upload_page_works_at_phone_width_and_by_keyboard(
    phone: Page, live_server: Any, personas: Personas, tracks: object
) -> None:
    sign_in(phone, live_server.url, "alice")
    phone.goto(f"{live_server.url}/campaigns/toy/runs/upload/")
    phone.get_by_label("Run name").focus()
    phone.keyboard.type("WASEDA-PO-1")
    phone.keyboard.press("Tab")
    expect(phone.get_by_label("Run file")).to_be_focused()
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    screenshot(phone, "upload-phone")
