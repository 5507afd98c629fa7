"""A second judge: its labels sit beside the official ones, and agreement is reported."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from grading.agreement.judges import judge_agreement
from grading.models import JudgeSlot, Judgment
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.review.edits import judgment_confirm
from grading.selectors import marked_run
from submissions.models import Run
from tests.grading.fixtures import judge_from_marked_example, make_judge
from tests.grading.scripted_server import ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

LANDING = "Chang'e 4 made the first soft landing on the far side of the Moon."  # D001 #1
MERCURY = "Mercury has a mean diameter of about 4,879 km."  # D003 nugget 2


@pytest.fixture
def both_judged(toy_ac_run: Run, judge: OpenAIJudge) -> Run:
    run_grade(run=toy_ac_run, judge=judge)
    second = judge_from_marked_example()
    # Disagrees twice on entailment. (Not on D001 nugget 3, the bogus "European Space
    # Agency": the names-and-numbers rule marks it bogus whatever the LLM says.)
    second.entailed[LANDING] = False
    second.entailed[MERCURY] = False
    with ScriptedServer(second) as server:
        run_grade(run=toy_ac_run, judge=make_judge(server, model="second-judge"),
                  slot=JudgeSlot.SECOND)
    return toy_ac_run


def test_the_second_judge_never_changes_the_official_marks(both_judged: Run) -> None:
    marks = "".join(m.mark for b in marked_run(run=both_judged) for m in b.marked.nuggets)
    assert marks == "RRBNBRRN"
    second = "".join(m.mark for b in marked_run(run=both_judged, slot=JudgeSlot.SECOND)
                     for m in b.marked.nuggets)
    # D001 nugget 1 is bogus to the second judge, and so is D003's nugget 2.
    assert second == "BRBNBRBN"


def test_agreement_is_cohens_kappa_per_kind(both_judged: Run, personas: Personas) -> None:
    # Entailment labels in nugget order: official T T F T F T T T, second F T F T F T F T.
    # p_o = 6/8; the official judge says T 6 times in 8, the second 4 times, so
    # p_e = (6/8)(4/8) + (2/8)(4/8) = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2 (Cohen 1960,
    # "A coefficient of agreement for nominal scales").
    agreement = {(a.kind, a.between): a for a in judge_agreement(campaign=personas.campaign)}
    entailment = agreement[("entailment", "official vs second judge")]
    assert (entailment.pairs, entailment.disagreements) == (8, 2)
    assert entailment.kappa == pytest.approx(1 / 2)
    # No organiser edited anything: nothing to compare, and no kappa to show.
    edits = agreement[("entailment", "LLM vs organisers' edits")]
    assert (edits.pairs, edits.disagreements, edits.kappa) == (0, 0, None)


def test_organisers_list_where_the_judges_disagree(both_judged: Run,
                                                   personas: Personas) -> None:
    items = personas.client("organiser").get(
        "/api/v1/campaigns/toy/judgments/?kind=entailment&disagreement=true").json()["results"]
    assert sorted((i["qid"], i["nugget_num"]) for i in items) == [("D001", 1), ("D003", 2)]
    progress = personas.client("organiser").get("/api/v1/campaigns/toy/grading/").json()
    assert {"kind": "entailment", "between": "official vs second judge", "pairs": 8,
            "disagreements": 2, "kappa": pytest.approx(1 / 2)} in progress["agreement"]


def test_the_dashboard_shows_no_agreement_with_edits_before_any_edit(
    both_judged: Run, personas: Personas
) -> None:
    browser = Client()
    browser.force_login(User.objects.get(pk=personas.organiser.pk))
    page = browser.get("/campaigns/toy/dashboard/").content.decode()
    row = ("<td>entailment</td><td>LLM vs organisers&#x27; edits</td>"
           "<td>none: no judgment edited or confirmed yet</td><td>0</td><td>—</td>")
    assert row in page
    judgment_confirm(judgment=Judgment.objects.filter(kind="entailment")[0],
                     user=personas.organiser)
    page = browser.get("/campaigns/toy/dashboard/").content.decode()
    assert ("<td>entailment</td><td>LLM vs organisers&#x27; edits</td><td>1</td><td>0</td>"
            in page)
