"""An organiser and the public, in a real browser, with a real Celery worker and a scripted judge.

The organiser grades the toy campaign from the dashboard, post-edits a judgment and
sees the leaderboard change; after publication and results_release an anonymous
visitor reads the results page with its plots.
"""

from __future__ import annotations

import subprocess
from datetime import timedelta
from typing import Any

import pytest
from celery.result import AsyncResult
from django.utils import timezone
from playwright.sync_api import Browser, Locator, Page, expect

from frontend import organiser
from grading.review import edits as grading_edits
from scoring.models import Evaluation
from tests.e2e.conftest import screenshot
from tests.e2e.test_participant import sign_in
from tests.grading.fixtures import judge_from_marked_example
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas, Upload, example, share_pr_runs

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def grading_tasks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the grading tasks the organiser pages queue, in order.

    The live server runs in this process, so the pages (and the edit service, which
    queues re-grading itself) call this wrapper around the real `enqueue_grading`; a test
    then waits on each task's own result instead of polling.
    """
    task_ids: list[str] = []
    enqueue = organiser.enqueue_grading

    def observed(run_ids: list[int]) -> list[str]:
        queued = enqueue(run_ids)
        task_ids.extend(queued)
        return queued

    monkeypatch.setattr(organiser, "enqueue_grading", observed)
    monkeypatch.setattr(grading_edits, "enqueue_grading", observed)
    return task_ids


def graded_and_scored(task_id: str) -> None:
    """Block until the worker has run grading task `task_id` and the scoring it queued."""
    result: dict[str, Any] = AsyncResult(task_id).get(timeout=120)
    assert result["scoring_task"] is not None, result  # the only run: the round is over
    AsyncResult(result["scoring_task"]).get(timeout=120)


def ac_accuracy() -> float | None:
    evaluation = Evaluation.objects.filter(track__slug="ac").order_by("-id").first()
    score = evaluation.scores.first() if evaluation else None
    return score.aggregates["accuracy"] if score else None


def accuracy_cell(page: Page) -> Locator:
    # The AC leaderboard's numeric cells: rank, then accuracy (tests/frontend/test_results.py).
    return page.locator("#ac-leaderboard tbody tr").first.locator("td.num").nth(1)


def test_an_organiser_grades_edits_a_judgment_and_sees_the_leaderboard_change(
    page: Page, browser: Browser, live_server: Any, personas: Personas, upload: Upload,
    celery_worker: subprocess.Popen[bytes], session_judge: ScriptedServer,
    grading_tasks: list[str],
) -> None:
    session_judge.judge.__dict__.update(judge_from_marked_example().__dict__)
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1"))
    base = live_server.url

    sign_in(page, base, "olga")
    page.goto(f"{base}/campaigns/toy/dashboard/")
    page.get_by_role("button", name="Grade pending runs").click()
    expect(page.get_by_text("1 run(s) queued for grading.")).to_be_visible()
    # The progress bar fills from the grading API while the worker judges: every judgment of
    # tests/data/toy/WASEDA-AC-1, 3 answers and 3 + 2 + 3 nuggets.
    expect(page.locator('tr[data-run="WASEDA-AC-1"] .count')).to_have_text("11/11", timeout=60_000)
    [graded] = grading_tasks
    graded_and_scored(graded)
    # tests/data/README.md: D001 and D003 correct, D002 ("Buzz Aldrin") wrong: 2/3.
    assert ac_accuracy() == pytest.approx(2 / 3)
    page.reload()
    screenshot(page, "dashboard")

    page.goto(f"{base}/campaigns/toy/results/")
    expect(page.get_by_text("Not published").first).to_be_visible()
    expect(accuracy_cell(page)).to_have_text("0.6667")
    screenshot(page, "results-before-edit")

    # D002's answer was judged incorrect; the organiser accepts it, with a note.
    page.goto(f"{base}/campaigns/toy/judgments/?kind=answer&label=false")
    screenshot(page, "judgments")
    page.get_by_role("link", name="Edit the label, see its history and provenance").click()
    page.get_by_role("group", name="Is the answer correct?").get_by_label("Yes").check()
    # Only D002's entailed nugget 1 is offered (nugget 2 is bogus); it becomes relevant.
    page.get_by_label("[1] Buzz Aldrin walked on the Moon during the Apollo 11 mission.").check()
    page.get_by_label("Note for the audit trail (why the label changes)").fill(
        "accepted on appeal: both Apollo 11 moonwalkers count")
    page.get_by_role("button", name="Save the new label").click()
    expect(page.get_by_text("run(s) queued for re-grading")).to_be_visible()
    expect(page.get_by_text("accepted on appeal: both Apollo 11 moonwalkers count")).to_be_visible()
    screenshot(page, "judgment-edited")

    [_, regraded] = grading_tasks
    graded_and_scored(regraded)
    assert ac_accuracy() == 1.0  # all three answers now correct: 3/3
    page.goto(f"{base}/campaigns/toy/results/")
    expect(accuracy_cell(page)).to_have_text("1.0000")
    screenshot(page, "results-after-edit")

    # Publish, reach results_release: the public sees the page with its plots.
    page.goto(f"{base}/campaigns/toy/dashboard/")
    page.get_by_role("button", name="Publish the latest ac scores").click()
    expect(page.get_by_text("The ac leaderboard is published.")).to_be_visible()
    campaign = personas.campaign
    now = timezone.now()
    campaign.ac_due, campaign.results_release = now - timedelta(hours=2), now - timedelta(hours=1)
    campaign.save()

    visitor = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    visitor.goto(f"{base}/campaigns/toy/results/")
    expect(visitor.get_by_role("heading", name="Results")).to_be_visible()
    expect(visitor.locator("svg[role=img]").first).to_be_visible()
    # Calibration and intervals; no reliability diagram: confidences stay each team's own.
    assert visitor.locator("svg[role=img]").count() >= 2
    expect(visitor.get_by_text("Reliability diagrams")).to_have_count(0)
    expect(visitor.get_by_text("Not published")).to_have_count(0)
    screenshot(visitor, "results-public")
    visitor.context.close()
