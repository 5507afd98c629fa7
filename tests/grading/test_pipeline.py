"""The R2C2 judge pipeline against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import dataclasses
import io

import pytest

from grading.judge import JudgeUnavailable
from grading.llm.subtasks import SUBTASKS
from grading.models import Judgment, JudgmentStatus, NuggetEntailment
from grading.r2c2.pipeline import run_grade
from grading.selectors import grading_progress, marked_run
from submissions.formats.marked_ac_run import write_marked_ac_run
from submissions.models import Run
from tests.grading.fixtures import GIVES_UP_AFTER, make_judge
from tests.grading.scripted_server import SURE, ScriptedJudge, ScriptedServer
from tests.grading.scripted_server.judge import raw_probability
from tests.support import Personas, Upload, example

pytestmark = pytest.mark.django_db

# D001's nugget 3: the cited passage says a Long March 3B launched Chang'e 4, and
# never names the European Space Agency (the names-and-numbers rule decides it).
BOGUS = "Chang'e 4 was launched by the European Space Agency."
# D001's nugget 1: entailed, and left to the LLM.
SOFT_LANDING = "Chang'e 4 made the first soft landing on the far side of the Moon."


def marked_text(run: Run) -> bytes:
    out = io.StringIO()
    write_marked_ac_run([block.marked for block in marked_run(run=run)], out)
    return out.getvalue().encode()


def test_the_toy_run_is_marked_exactly_as_the_example_says(toy_ac_run: Run, judge: object,
                                                           script: ScriptedJudge) -> None:
    report = run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]

    assert marked_text(toy_ac_run) == example("WASEDA-AC-1.marked")
    verdicts = {b.marked.qid: b.correct for b in marked_run(run=toy_ac_run)}
    assert verdicts == {"D001": True, "D002": False, "D003": True}
    assert (report.nuggets, report.entailment_calls, report.answer_calls) == (8, 8, 3)
    assert report.needs_review == 0


def test_bogus_nuggets_are_never_shown_to_the_answer_step(toy_ac_run: Run, judge: object) -> None:
    run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]
    d001 = Judgment.objects.get(kind="answer", input__answer="China National Space Administration")
    assert [n["num"] for n in d001.input["nuggets"]] == [1, 2]  # nugget 3 is bogus
    d002 = Judgment.objects.get(kind="answer", input__answer="Buzz Aldrin")
    assert [n["num"] for n in d002.input["nuggets"]] == [1]  # nugget 2 is bogus


def test_every_judgment_keeps_its_provenance(toy_ac_run: Run, judge: object) -> None:
    run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]
    judgment = Judgment.objects.filter(kind="entailment").first()
    assert judgment is not None
    assert judgment.judge_model == "scripted-judge"
    assert judgment.prompt_version == "entailment-v2"
    assert len(judgment.input_hash) == 64
    assert judgment.decoding["temperature"] == 0.0
    assert judgment.raw_output == "true"
    assert judgment.prompt_tokens and judgment.completion_tokens
    assert judgment.latency_seconds is not None and judgment.attempts == 1
    assert judgment.input["nugget"] and judgment.input["passage"]
    assert judgment.confidence == pytest.approx(SURE)
    assert judgment.steps == [{"step": "entailment", "decided_by": "llm",
                               "prompt_version": "entailment-v2",
                               "decision": SUBTASKS["entailment"].decision, "verdict": True,
                               "confidence": pytest.approx(SURE),
                               # the token probability, before the threshold
                               "p_true": pytest.approx(raw_probability(
                                   True, SURE, SUBTASKS["entailment"].true_above)),
                               "confidence_from": "logprobs", "calibrated": None}]


def test_identical_inputs_are_judged_once_across_runs_and_re_runs(
    toy_ac_run: Run, judge: object, upload: Upload, script: ScriptedJudge
) -> None:
    run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]
    calls = sum(script.calls.values())
    # The same blocks again, as another run of the same team.
    response = upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1"))
    second = Run.objects.get(pk=response.json()["id"])

    again = run_grade(run=second, judge=judge)  # type: ignore[arg-type]
    rerun = run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]

    assert (again.entailment_calls, again.answer_calls) == (0, 0)
    assert (rerun.entailment_calls, rerun.answer_calls) == (0, 0)
    assert sum(script.calls.values()) == calls
    assert marked_text(second) == example("WASEDA-AC-1.marked")


def test_a_changed_wording_or_threshold_judges_again_and_old_judgments_keep_theirs(
    toy_ac_run: Run, judge: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]
    before = {j.pk: j.steps for j in Judgment.objects.filter(kind="answer")}
    moved = dataclasses.replace(SUBTASKS["relevance"], version="relevance-test", true_above=0.6)
    monkeypatch.setitem(SUBTASKS, "relevance", moved)

    again = run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]

    # Every answer's judgment depends on the relevance wording: all are judged again;
    # no entailment judgment does.
    assert again.answer_calls == len(before) and again.entailment_calls == 0
    for judgment in Judgment.objects.filter(kind="answer"):
        decisions = {s["decision"] for s in judgment.steps if s["step"] == "relevance"}
        if judgment.pk in before:
            assert judgment.steps == before[judgment.pk]  # untouched
            assert decisions <= {"relevance-v2@0.85"}
        else:
            assert decisions <= {"relevance-test@0.6"}


@pytest.mark.parametrize("fault", ["timeout", "500", "429"])
def test_transient_failures_are_retried_until_the_judge_answers(
    toy_ac_run: Run, server: ScriptedServer, script: ScriptedJudge, fault: str
) -> None:
    nugget = SOFT_LANDING
    script.faults[nugget] = [fault, fault]
    # A scripted timeout is never answered, so only the client's timeout ends it.
    judge = make_judge(server, **({"timeout": GIVES_UP_AFTER} if fault == "timeout" else {}))
    run_grade(run=toy_ac_run, judge=judge)
    assert script.calls[nugget] == 3
    judgment = Judgment.objects.get(kind="entailment", input__nugget=nugget)
    assert (judgment.llm_label, judgment.attempts) == ({"entailed": True}, 3)
    assert marked_text(toy_ac_run) == example("WASEDA-AC-1.marked")


def test_a_reply_that_never_parses_needs_review_and_counts_nowhere(
    toy_ac_run: Run, judge: object, script: ScriptedJudge
) -> None:
    nugget = SOFT_LANDING
    script.faults[nugget] = ["garbage", "garbage"]  # parse_attempts = 2

    report = run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]

    judgment = Judgment.objects.get(kind="entailment", input__nugget=nugget)
    assert judgment.status == JudgmentStatus.NEEDS_REVIEW and judgment.llm_label is None
    assert judgment.raw_output == "this is not JSON {"
    assert report.needs_review == 1
    blocks = {b.marked.qid: b for b in marked_run(run=toy_ac_run)}
    # D001 waits for an organiser: no answer verdict, block incomplete; others done.
    assert (blocks["D001"].correct, blocks["D001"].complete) == (None, False)
    assert blocks["D003"].complete and blocks["D003"].correct is True
    [progress] = grading_progress(campaign=toy_ac_run.track.campaign)
    assert (progress.needs_review, progress.answers_judged) == (1, 2)


def test_a_judge_that_goes_down_mid_run_loses_and_duplicates_nothing(
    toy_ac_run: Run, script: ScriptedJudge
) -> None:
    with ScriptedServer(script) as server:
        server.judge.faults.update({  # the server breaks down for the last nugget
            "Mars is the fourth planet from the Sun.": ["500"] * 10})
        with pytest.raises(JudgeUnavailable):
            run_grade(run=toy_ac_run, judge=make_judge(server, max_retries=1), batch=2)
    stored = Judgment.objects.count()
    assert stored == 7  # every answered call was kept, its batch-mate's too
    assert not NuggetEntailment.objects.exists()  # nothing linked half-way

    script.faults.clear()
    with ScriptedServer(script) as server:  # back up, on another port
        report = run_grade(run=toy_ac_run, judge=make_judge(server))
    assert (report.entailment_calls, report.answer_calls) == (1, 3)
    assert Judgment.objects.filter(kind="entailment").count() == 8
    assert marked_text(toy_ac_run) == example("WASEDA-AC-1.marked")


def test_the_judge_never_sees_more_requests_at_once_than_its_concurrency(
    toy_ac_run: Run, server: ScriptedServer
) -> None:
    # The server answers none until two are in flight: a client allowed two reaches two
    # whatever the scheduling, and one that sent more would show it.
    server.judge.hold_until = 2
    run_grade(run=toy_ac_run, judge=make_judge(server, concurrency=2))
    assert server.judge.max_in_flight == 2


def test_progress_counts_judgments_per_run(toy_ac_run: Run, judge: object,
                                           personas: Personas) -> None:
    [before] = grading_progress(campaign=personas.campaign)
    assert (before.done, before.total) == (0, 11)  # eight nuggets and three answers
    run_grade(run=toy_ac_run, judge=judge)  # type: ignore[arg-type]
    [after] = grading_progress(campaign=personas.campaign)
    assert (after.done, after.total, after.needs_review) == (11, 11, 0)


