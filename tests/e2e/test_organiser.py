"""An organiser and the public, in a real browser, with a real Celery worker and a scripted judge.

The organiser grades the toy campaign from the dashboard, post-edits a judgment and
sees the leaderboard change; after publication and results_release an anonymous
visitor reads the results page with its plots.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from scoring.models import Evaluation
from tests.e2e.conftest import screenshot
from tests.e2e.test_participant import sign_in
from tests.grading.fixtures import judge_from_marked_example
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas, Upload, example, share_pr_runs

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def wait_until(condition: Callable[[], bool], what: str, seconds: float = 90) -> None:
    """Poll the database until the worker has done its part (bounded, like expect())."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def ac_accuracy() -> float | None:
    evaluation = Evaluation.objects.filter(track__slug="ac").order_by("-id").first()
    score = evaluation.scores.first() if evaluation else None
    return score.aggregates["accuracy"] if score else None


def test_an_organiser_grades_edits_a_judgment_and_sees_the_leaderboard_change(
    page: Page, browser: Browser, live_server: Any, personas: Personas, upload: Upload,
    celery_worker: subprocess.Popen[bytes], session_judge: ScriptedServer,
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
    # The progress bar fills from the grading API while the worker judges.
    expect(page.locator('tr[data-run="WASEDA-AC-1"] .count')).to_have_text("9/9", timeout=60_000)
    wait_until(lambda: ac_accuracy() is not None, "the scores after grading")
    page.reload()
    screenshot(page, "dashboard")

    page.goto(f"{base}/campaigns/toy/results/")
    expect(page.get_by_text("Not published").first).to_be_visible()
    expect(page.locator("table").first).to_contain_text("0.6667")
    screenshot(page, "results-before-edit")

    # D002's answer was judged incorrect; the organiser accepts it, with a note.
    page.goto(f"{base}/campaigns/toy/judgments/?kind=answer&label=false")
    screenshot(page, "judgments")
    page.get_by_role("link", name="Edit the label, see its history and provenance").click()
    page.get_by_role("group", name="Is the answer correct?").get_by_label("Yes").check()
    page.get_by_label("[1] The Manchurian Candidate (2004) was directed by Jonathan Demme.").check()
    page.get_by_label("Note for the audit trail (why the label changes)").fill(
        "the question is ambiguous between the two films")
    page.get_by_role("button", name="Save the new label").click()
    expect(page.get_by_text("run(s) queued for re-grading")).to_be_visible()
    expect(page.get_by_text("the question is ambiguous between the two films")).to_be_visible()
    screenshot(page, "judgment-edited")

    wait_until(lambda: ac_accuracy() == 1.0, "the scores after the edit")
    page.goto(f"{base}/campaigns/toy/results/")
    expect(page.locator("table").first).to_contain_text("1.0000")
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
    assert visitor.locator("svg[role=img]").count() >= 3
    expect(visitor.get_by_text("Not published")).to_have_count(0)
    screenshot(visitor, "results-public")
    visitor.context.close()
