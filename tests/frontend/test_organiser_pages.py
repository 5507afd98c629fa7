"""Organiser pages: the dashboard and judgment review, for organisers only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils.html import escape

from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.selectors import marked_run
from submissions.models import Run
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

# The two nuggets of tests/data/toy/WASEDA-AC-1 marked B, each with the passage it cites
# (tests/data/README.md): D001 nugget 3 cites WASEDA-PO-1 rank 3, D002 nugget 2 cites
# KYOTO-PG-1 rank 1.
BOGUS = "Chang'e 4 was launched by the European Space Agency."
BOGUS_PASSAGE = (
    "Chang'e 4 was launched on 7 December 2018 on a Long March 3B rocket from the Xichang "
    "Satellite Launch Center."
)
OTHER_BOGUS = "Buzz Aldrin was the commander of Apollo 11."
OTHER_BOGUS_PASSAGE = (
    "Neil Armstrong, the commander of Apollo 11, became the first person to walk on the Moon "
    "in July 1969."
)


@pytest.fixture
def graded(toy_ac_run: Run, judge: OpenAIJudge) -> Run:
    run_grade(run=toy_ac_run, judge=judge)
    return toy_ac_run


@pytest.mark.parametrize("path", ["/campaigns/toy/dashboard/", "/campaigns/toy/judgments/"])
@pytest.mark.parametrize("who", ["participant_a", "outsider"])
def test_no_one_but_organisers_finds_the_organiser_pages(
    personas: Personas, path: str, who: str
) -> None:
    assert signed_in(personas, who).get(path).status_code == 404


def test_the_dashboard_shows_runs_failures_progress_and_exports(
    personas: Personas, graded: Run, upload: Any
) -> None:
    upload("organiser", "KYOTO-PG-2", b"D001;0;Q;rank zero\n")  # PR deadline has passed
    page = signed_in(personas, "organiser").get("/campaigns/toy/dashboard/").content.decode()
    assert "WASEDA-AC-1" in page and "KYOTO-PG-1" in page
    assert "KYOTO-PG-2</a>: 1 problem(s)" in page  # the validation failure
    # Every judgment of WASEDA-AC-1 done: 3 answers and 3 + 2 + 3 nuggets.
    assert '<progress max="11" value="11"' in page
    for export in ("/qrels/", "/exports/res.zip", "/exports/marked.zip", "?format=csv",
                   "/exports/leaderboards.tex"):
        assert export in page


def test_the_grade_button_queues_the_pending_runs(
    personas: Personas, toy_ac_run: Run, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    client = signed_in(personas, "organiser")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post("/campaigns/toy/dashboard/grade/", follow=True)
    assert len(queued) == 1
    assert "1 run(s) queued for grading." in response.content.decode()


def test_judgment_review_shows_passage_and_nugget_side_by_side(
    personas: Personas, graded: Run
) -> None:
    page = signed_in(personas, "organiser").get(
        "/campaigns/toy/judgments/?kind=entailment&label=false").content.decode()
    assert "2 judgment use(s) match." in page
    assert page.count("not entailed (bogus)") == 2
    # Each bogus nugget with the passage it cites beside it.
    assert escape(BOGUS) in page and escape(BOGUS_PASSAGE) in page
    assert escape(OTHER_BOGUS) in page and escape(OTHER_BOGUS_PASSAGE) in page


def test_an_organiser_edits_a_label_with_a_note_in_one_action(
    personas: Personas, graded: Run, judge: OpenAIJudge
) -> None:
    judgment = Judgment.objects.get(kind="entailment", input__nugget=BOGUS)
    client = signed_in(personas, "organiser")
    response = client.post(f"/judgments/{judgment.pk}/", {
        "entailed": "true", "reason": "the passage names the launch",
        "note": "misread by the judge"},
        follow=True)
    page = response.content.decode()
    assert "run(s) queued for re-grading" in page
    assert "misread by the judge" in page  # the history
    edit = JudgmentEdit.objects.get()
    assert (edit.previous_label, edit.new_label) == ({"entailed": False}, {"entailed": True})
    run_grade(run=graded, judge=judge)
    marks = [m.mark for b in marked_run(run=graded) for m in b.marked.nuggets]
    # D001 nugget 3 is now entailed; D001's answer names nuggets 1 and 2 as relevant, so N.
    assert marks == ["R", "R", "N", "N", "B", "R", "R", "N"]


def test_an_edit_without_a_note_is_refused_and_says_why(personas: Personas,
                                                        graded: Run) -> None:
    judgment = Judgment.objects.get(kind="entailment", input__nugget=BOGUS)
    response = signed_in(personas, "organiser").post(
        f"/judgments/{judgment.pk}/", {"entailed": "true", "note": ""})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert not JudgmentEdit.objects.exists()
