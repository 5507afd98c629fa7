"""An organiser of a RUBRIC campaign, in a real browser with a real Celery worker: edits a
test-bank item, post-edits a grade on the grid, and sees the Rubric-Cover leaderboard
change after each (docs/rubric.md).

The grades are tests/scoring/rubric_case.py's, stored as grading stores them. Editing
an item's text makes its grades stale, and the worker grades the item's pairs again at
once (D001's pool: d1, d2, d3, d4; 4 judge calls) with the session's scripted judge,
which grades 2 where a test scripts nothing; then it scores again. A post-edit wins
over the judge's grade. Hand values (min_grade 4, depth 3, cover_k 10; means over D001
and D002):

    before:            WASEDA-R1 (1 + 1/2) / 2 = 0.75    KYOTO-R1 (1/2 + 0) / 2 = 0.25
    B's text edited:   WASEDA-R1 (1/2 + 1/2) / 2 = 0.5   KYOTO-R1 (0 + 0) / 2 = 0
                       (B was covered only by d3's 4, now 2; A by d1's 5, on WASEDA-R1)
    d4 graded 5 on A:  WASEDA-R1 0.5                     KYOTO-R1 (1/2 + 0) / 2 = 0.25
"""

from __future__ import annotations

import importlib
import subprocess
from typing import Any

import pytest
from celery.result import AsyncResult
from playwright.sync_api import Locator, Page, expect

from frontend import organiser
from grading.review import edits as grading_edits
from grading.rubric import bank_changes as testbank_regrade
from grading.work.dispatch import enqueue_scoring
from scoring.services import campaign_score
from tests.e2e.conftest import screenshot
from tests.e2e.test_participant import sign_in
from tests.scoring.rubric_case import rubric_case
from tests.support import Personas

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def scoring_tasks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the scoring tasks the pages queue (the dashboard's button, and the
    post-edit service), so the test waits on each task's result instead of polling.
    The live server runs in this process, so its views call this wrapper."""
    task_ids: list[str] = []

    def observed(campaign_id: int) -> str:
        task_id = enqueue_scoring(campaign_id)
        task_ids.append(task_id)
        return task_id

    monkeypatch.setattr(organiser, "enqueue_scoring", observed)
    monkeypatch.setattr(grading_edits, "enqueue_scoring", observed)
    return task_ids


@pytest.fixture
def item_grading_tasks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the grading tasks a test-bank change queues (see `scoring_tasks`)."""
    task_ids: list[str] = []

    def observed(**kwargs: Any) -> str | None:
        task_id = testbank_regrade.testbank_changed(**kwargs)
        if task_id is not None:
            task_ids.append(task_id)
        return task_id

    # The module, not the view that frontend.rubric names `testbank` too.
    bank_pages = importlib.import_module("frontend.rubric.testbank")
    monkeypatch.setattr(bank_pages, "testbank_changed", observed)
    return task_ids


def cover_cell(page: Page, run: str) -> Locator:
    # The dl leaderboard's numeric cells of a run: rank, then Rubric-Cover@10.
    row = page.locator("#dl-leaderboard tbody tr", has_text=run)
    return row.locator("td.num").nth(1)


def expect_cover(page: Page, base: str, waseda: str, kyoto: str) -> None:
    page.goto(f"{base}/campaigns/toy/results/")
    expect(cover_cell(page, "WASEDA-R1")).to_have_text(waseda)
    expect(cover_cell(page, "KYOTO-R1")).to_have_text(kyoto)


def test_an_organiser_edits_an_item_post_edits_a_grade_and_sees_rubric_cover_change(
    page: Page, live_server: Any, personas: Personas,
    celery_worker: subprocess.Popen[bytes], scoring_tasks: list[str],
    item_grading_tasks: list[str],
) -> None:
    case = rubric_case(personas)
    campaign_score(campaign=personas.campaign)
    base = live_server.url

    sign_in(page, base, "olga")
    expect_cover(page, base, waseda="0.7500", kyoto="0.2500")
    screenshot(page, "rubric-results-before")

    # The test bank, from the dashboard: item B gets a new text, with a note.
    page.goto(f"{base}/campaigns/toy/dashboard/")
    page.get_by_role("link", name="Review and edit the test bank").click()
    # Readable: the item's text in plain weight, in the widest column; its id below it.
    bank = page.locator("table.testbank").first
    item = bank.locator("tbody th").first
    assert item.evaluate("cell => getComputedStyle(cell).fontWeight") == "400"
    assert item.evaluate("cell => getComputedStyle(cell.querySelector('a')).textDecorationLine"
                         ) == "none"
    text_width, table_width = bank.evaluate("t => [t.rows[1].cells[0].offsetWidth, t.offsetWidth]")
    assert text_width >= 0.5 * table_width
    screenshot(page, "rubric-testbank")
    page.get_by_role("link", name="When was Alien released?").click()
    page.get_by_label("Text", exact=True).fill("In which year did Alien come out?")
    page.get_by_label("Note for the audit trail (why the test bank changes)").fill(
        "clearer wording")
    page.get_by_role("button", name="Save the item").click()
    expect(page.get_by_text("Its pairs are being graded")).to_be_visible()
    expect(page.locator("#item-text")).to_have_text("In which year did Alien come out?")
    expect(page.get_by_text("Note: clearer wording")).to_be_visible()
    screenshot(page, "rubric-testbank-item-edited")

    # The worker grades B's pairs on the new text, then scores the campaign again.
    [regraded] = item_grading_tasks
    summary: dict[str, Any] = AsyncResult(regraded).get(timeout=120)
    assert (summary["pairs"], summary["judge_calls"]) == (4, 4)
    AsyncResult(summary["scoring_task"]).get(timeout=120)
    expect_cover(page, base, waseda="0.5000", kyoto="0.0000")

    # The grid of D001, from the dashboard: B is graded on its new text; d4 gets 5 on A.
    page.goto(f"{base}/campaigns/toy/dashboard/")
    page.get_by_role("link", name="grid of grades").click()
    a, b = case.item_id("A"), case.item_id("B")
    d4 = page.locator('tr[data-docid="d4"]')
    expect(d4.locator(f'td[data-item="{b}"]').locator("strong.grade")).to_have_text("2")
    on_a = d4.locator(f'td[data-item="{a}"]')
    expect(on_a.locator("strong.grade")).to_have_text("0")
    on_a.get_by_text("Edit grade").click()
    edit = on_a.get_by_role("form", name=f"Edit the grade of d4 on {a}")
    edit.get_by_label("Grade", exact=True).select_option("5")
    edit.get_by_label("Note", exact=True).fill("d4 names Ridley Scott")
    screenshot(page, "rubric-grid-editing")
    edit.get_by_role("button", name="Save grade").click()
    expect(page.get_by_text("Grade set to 5")).to_be_visible()
    on_a = page.locator('tr[data-docid="d4"]').locator(f'td[data-item="{a}"]')
    expect(on_a.locator("strong.grade")).to_have_text("5")
    expect(on_a.get_by_text("edited", exact=True)).to_be_visible()
    screenshot(page, "rubric-grid-edited")

    [after_edit] = scoring_tasks  # queued by the post-edit itself
    AsyncResult(after_edit).get(timeout=120)
    expect_cover(page, base, waseda="0.5000", kyoto="0.2500")
    screenshot(page, "rubric-results-after")
