"""`manage.py judge_eval`: a judge measured on a tiny labelled set, figures by hand; the
campaign's thresholds gate `grade`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from grading.llm.subtasks import SUBTASKS
from grading.models import JudgeValidation
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import Personas

pytestmark = pytest.mark.django_db

PASSAGE = "Alien is a 1979 science fiction horror film directed by Ridley Scott."
SCOTT = "Ridley Scott directed Alien."
ITEMS: list[dict[str, Any]] = [
    # human true, judge true | human true, judge false | human false, judge true |
    # human false, judge false
    {"id": "E1", "kind": "entailment", "category": "paraphrase", "passage": PASSAGE,
     "nugget": SCOTT, "entailed": True},
    {"id": "E2", "kind": "entailment", "category": "paraphrase", "passage": PASSAGE,
     "nugget": "Alien was directed by Scott.", "entailed": True},
    {"id": "E3", "kind": "entailment", "category": "added fact", "passage": PASSAGE,
     "nugget": "Alien is a comedy.", "entailed": False},
    {"id": "E4", "kind": "entailment", "category": "negation", "passage": PASSAGE,
     "nugget": "Alien was not directed by Scott.", "entailed": False},
    # Correct by the gold rule, relevant set right.
    {"id": "A1", "kind": "answer", "category": "exact", "question": "Who directed Alien?",
     "gold_answers": ["Ridley Scott"], "answer": "Ridley Scott",
     "nuggets": [{"num": 1, "text": SCOTT}], "correct": True, "relevant": [1]},
    # Wrong, by the LLM.
    {"id": "A2", "kind": "answer", "category": "wrong entity", "question": "Who directed Alien?",
     "gold_answers": ["Ridley Scott"], "answer": "James Cameron", "nuggets": [],
     "correct": False, "relevant": []},
    # Correct by the LLM, but the judge finds nugget 2 relevant too.
    {"id": "A3", "kind": "answer", "category": "verbose correct",
     "question": "Who directed Alien?", "gold_answers": ["Ridley Scott"],
     "answer": "It was Scott, the British director",
     "nuggets": [{"num": 1, "text": SCOTT}, {"num": 2, "text": "Alien is set in space."}],
     "correct": True, "relevant": [1]},
]


@pytest.fixture
def labelled(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8")
    return path


@pytest.fixture
def script() -> ScriptedJudge:
    return ScriptedJudge(
        entailed={"Alien was directed by Scott.": False, "Alien was not directed by Scott.": False},
        correct={"Ridley Scott": True, "It was Scott, the British director": True},
        relevant={"Ridley Scott": [SCOTT],
                  "It was Scott, the British director": [SCOTT, "Alien is set in space."]},
    )


def judge_eval(server: ScriptedServer, *args: str) -> str:
    stdout = io.StringIO()
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        call_command("judge_eval", *args, stdout=stdout, stderr=io.StringIO())
    return stdout.getvalue()


def test_the_figures_are_those_worked_out_by_hand(
    personas: Personas, server: ScriptedServer, labelled: Path
) -> None:
    out = judge_eval(server, personas.campaign.slug, "--set", str(labelled))

    validation = JudgeValidation.objects.get()
    entailment = validation.figures["entailment"]
    # 2 of 4 agree; each side says "true" half the time, so p_e = 0.5 and kappa = 0.
    # "Bogus" said on E2, E4 (right on E4); bogus by the human E3, E4 (found E4).
    assert (entailment["accuracy"], entailment["kappa"]) == (0.5, 0.0)
    assert (entailment["bogus_precision"], entailment["bogus_recall"]) == (0.5, 0.5)
    assert entailment["by_category"]["paraphrase"] == {"items": 2, "accuracy": 0.5}
    gold = validation.figures["answer_gold"]
    # All three correctness decisions agree: kappa = (1 - 5/9) / (1 - 5/9) = 1. Of A1 and
    # A3 (correct, with nuggets), only A1's relevant set is exact. A1 went by the rule.
    assert (gold["accuracy"], gold["kappa"], gold["exact_relevant_set"]) == (1.0, 1.0, 0.5)
    assert gold["decided_by_rule"] == 1
    nuggets = validation.figures["answer_nuggets"]
    assert (nuggets["accuracy"], nuggets["exact_relevant_set"], nuggets["decided_by_rule"]) \
        == (1.0, 0.5, 0)
    assert gold["tokens_per_judgment"] > 0 and gold["judgments_per_second"] > 0
    assert validation.passed and validation.judge_model == "scripted-judge"
    assert validation.prompt_versions["entailment"] == SUBTASKS["entailment"].decision
    missed = [o["id"] for o in validation.outcomes if not o["agreed"]]
    assert missed == ["E2", "E3"]
    assert "accuracy 0.500, kappa 0.000" in out
    assert "exact relevant set 0.500 (of 2 correct answers with nuggets)" in out


def test_missed_thresholds_fail_the_command_and_keep_grade_from_running(
    personas: Personas, server: ScriptedServer, labelled: Path
) -> None:
    campaign = personas.campaign
    campaign.judge_thresholds = {"entailment_accuracy": 0.9, "answer_gold_accuracy": 0.9}
    campaign.save()

    with pytest.raises(CommandError, match=r"missed campaign .* thresholds"):
        judge_eval(server, campaign.slug, "--set", str(labelled))
    validation = JudgeValidation.objects.get()
    assert validation.failures == [
        "entailment_accuracy: 0.500 is under the campaign's threshold 0.9"]
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"), \
            pytest.raises(CommandError, match=r"latest validation of scripted-judge \(#\d+, "
                                              r".*\) failed: entailment_accuracy: 0.500"):
        call_command("grade", campaign.slug, stdout=io.StringIO())

    campaign.judge_thresholds = {"entailment_accuracy": 0.5}
    campaign.save()
    with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL="scripted-judge"):
        call_command("grade", campaign.slug, stdout=io.StringIO())  # no longer refused


def test_grade_asks_for_a_validation_when_there_is_none(personas: Personas) -> None:
    campaign = personas.campaign
    campaign.judge_thresholds = {"entailment_accuracy": 0.9}
    campaign.save()

    with override_settings(GRADER_BASE_URL="http://127.0.0.1:9/v1", GRADER_MODEL="m"), \
            pytest.raises(CommandError, match=rf"run `python manage.py judge_eval "
                                              rf"{campaign.slug}`"):
        call_command("grade", campaign.slug, stdout=io.StringIO())


@pytest.mark.parametrize(("content", "problem"), [
    ('{"id": "E1", "kind": "entailment"}\n',
     "line 1: category: expected non-empty text, found None"),
    ("not json\n", "line 1: not a JSON object"),
    ('{"id": "A1", "kind": "answer", "category": "c", "question": "q", "gold_answers": ["g"],'
     ' "answer": "a", "nuggets": [{"num": 1, "text": "n"}], "correct": false,'
     ' "relevant": [1]}\n', "line 1: relevant must be empty when correct is false"),
    ('{"id": "X", "kind": "rubric"}\n', "line 1: kind: expected 'entailment' or 'answer'"),
    ("", "holds no items"),
])
def test_a_bad_set_is_refused_naming_the_line(
    personas: Personas, tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(CommandError, match=problem):
        call_command("judge_eval", personas.campaign.slug, "--set", str(path))
    assert not JudgeValidation.objects.exists()


def test_an_unknown_judge_is_refused_with_the_choices(personas: Personas) -> None:
    with pytest.raises(CommandError, match="expected official, second, or a packaged model "
                                           r"\(qwen2.5-coder-0.5b, qwen2.5-coder-1.5b\)"):
        call_command("judge_eval", personas.campaign.slug, "--judge", "gpt-5")


def test_the_gold_check_says_correct_only_from_its_threshold(
    personas: Personas, server: ScriptedServer, script: ScriptedJudge, labelled: Path
) -> None:
    # The judge says "correct" to A3 with probability 0.7. The gold subtask wants 0.75
    # (subtasks.py): log-odds ln(0.7/0.3) - ln(0.75/0.25) = -0.251, so the shifted
    # probability of "correct" is 1 / (1 + e^0.251) = 0.4375 and the verdict is "wrong",
    # with confidence 0.5625. From the nuggets (threshold 0.8): ln(7/3) - ln 4 = -0.539,
    # 1 / (1 + e^0.539) = 0.368, "wrong" with confidence 0.632.
    script.raw["It was Scott, the British director"] = 0.7

    judge_eval(server, personas.campaign.slug, "--set", str(labelled))

    outcomes = {(o["pass"], o["id"]): o for o in JudgeValidation.objects.get().outcomes}
    gold = outcomes[("answer_gold", "A3")]
    assert gold["judge"] == {"correct": False, "relevant": []}
    assert gold["confidence"] == pytest.approx(0.5625, abs=1e-4)
    nuggets = outcomes[("answer_nuggets", "A3")]
    assert nuggets["judge"] == {"correct": False, "relevant": []}
    assert nuggets["confidence"] == pytest.approx(0.6316, abs=1e-4)
