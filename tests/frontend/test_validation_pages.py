"""The dashboard's doubt counts and judge validations, and a validation's own page."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings

from grading.models import Judgment
from grading.r2c2.pipeline import run_grade
from grading.review.edits import judgment_edit
from submissions.models import Run
from tests.grading.fixtures import make_judge
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.grading.validation.test_judge_eval import ITEMS
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

DASHBOARD = "/campaigns/toy/dashboard/"
# An entailed nugget of tests/data/toy/WASEDA-AC-1 (D001 nugget 1).
NUGGET = "Chang'e 4 made the first soft landing on the far side of the Moon."


def test_the_dashboard_counts_the_doubtful_judgments_until_each_is_reviewed(
    personas: Personas, toy_ac_run: Run, server: ScriptedServer, script: ScriptedJudge
) -> None:
    assert NUGGET in script.entailed
    script.sure[NUGGET] = 0.6  # under the campaign's threshold, 0.8
    run_grade(run=toy_ac_run, judge=make_judge(server))
    client = signed_in(personas, "organiser")

    page = client.get(DASHBOARD).content.decode()
    assert "Of 11 judgment(s) in use, <strong>1</strong> are under the review threshold (80%" \
        in page
    assert "<strong>1</strong> not reviewed yet</a>: publishing waits for them" in page

    judgment = Judgment.objects.get(input__nugget=NUGGET)
    assert judgment.confidence == pytest.approx(0.6)
    judgment_edit(judgment=judgment, user=personas.organiser, changes={"entailed": True},
                  reason="", note="The passage says so.")
    assert "none is left to review" in client.get(DASHBOARD).content.decode()


def test_a_validation_shows_on_the_dashboard_and_lists_its_misses(
    personas: Personas, tmp_path: Path
) -> None:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8")
    script = ScriptedJudge(entailed={"Alien was directed by Scott.": False,
                                     "Alien was not directed by Scott.": False},
                           correct={"Ridley Scott": True})
    with ScriptedServer(script) as server, override_settings(
            GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        call_command("judge_eval", "toy", "--set", str(path), stdout=io.StringIO(),
                     stderr=io.StringIO())
    client = signed_in(personas, "organiser")

    dashboard = client.get(DASHBOARD).content.decode()
    assert "scripted-judge (official)" in dashboard and "<td>0.500</td>" in dashboard
    validation = personas.campaign.judge_validations.get()
    page = client.get(f"/campaigns/toy/validations/{validation.pk}/").content.decode()
    assert "accuracy <strong>0.500</strong>" in page
    # E2, E3 disagree on entailment; A3 is judged wrong in both answer passes.
    assert page.count("<tr><td>entailment</td>") == 2
    assert "<td>A3</td>" in page
    assert signed_in(personas, "participant_a").get(
        f"/campaigns/toy/validations/{validation.pk}/").status_code == 404


def test_the_validate_button_queues_a_validation(personas: Personas, monkeypatch: Any) -> None:
    queued: list[tuple[Any, ...]] = []
    monkeypatch.setattr("grading.tasks.validate_judge.delay", lambda *a: queued.append(a))

    response = signed_in(personas, "organiser").post(
        "/campaigns/toy/dashboard/validate/", {"judge": "official"}, follow=True)

    assert queued == [(personas.campaign.pk, "official", personas.organiser.pk)]
    assert "Validation of the official judge on the dev set (305 items) queued" \
        in response.content.decode()


def test_a_validation_fits_a_calibration_and_draws_the_reliability_diagrams(
    personas: Personas, tmp_path: Path
) -> None:
    # Five entailment items the judge calls "true" at 0.9 (after the threshold): two of
    # them wrong. Out of fold, every fit sees 0.9 right 2 times in 3 or in 4.
    passage = "Alien is a 1979 film directed by Ridley Scott."
    items: list[dict[str, Any]] = [
        {"id": f"E{i}", "kind": "entailment", "category": "c", "passage": passage,
         "nugget": f"Alien is a 1979 film, in words {'abcde'[i]}.", "entailed": i < 3}
        for i in range(5)]
    path = tmp_path / "five.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    script = ScriptedJudge(sure={item["nugget"]: 0.9 for item in items})
    with ScriptedServer(script) as server, override_settings(
            GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        out = io.StringIO()
        call_command("judge_eval", "toy", "--set", str(path), stdout=out,
                     stderr=io.StringIO())

    validation = personas.campaign.judge_validations.get()
    fitted = validation.calibration["steps"]["entailment"]
    assert (fitted["items"], fitted["values"]) == (5, [pytest.approx(0.6)])
    figures = validation.figures["entailment"]
    # Guo et al. 2017's ECE. Raw: 5 labels at 0.9, 3 right: |0.9 - 0.6| = 0.3. Refitted
    # out of fold (one item per fold): items 0..2 (right) get 2/4 = 0.5 from the other
    # four, items 3 and 4 (wrong) 3/4; bins [0.5, 0.6) and [0.7, 0.8):
    # 3/5 x |0.5 - 1| + 2/5 x |0.75 - 0| = 0.6.
    assert figures["ece_raw"] == pytest.approx(0.3)
    assert figures["ece_refit"] == pytest.approx(0.6)
    assert "calibration error (ECE): raw 0.300" in out.getvalue()
    page = signed_in(personas, "organiser").get(
        f"/campaigns/toy/validations/{validation.pk}/").content.decode()
    assert 'id="reliability-entailment-confidence"' in page
    assert 'id="reliability-entailment-refit_confidence"' in page
    assert "validation #" in page
