"""Grading fixtures (a plugin of tests/conftest.py): the toy AC run, a scripted judge."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping

import pytest

from grading.llm.calls import JudgeConfig
from grading.models import Judgment
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.review.edits import judgment_confirm
from submissions.formats.marked_ac_run import parse_marked_ac_run
from submissions.models import Run
from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import Personas, Upload, example, share_pr_runs


def judge_from_marked_example() -> ScriptedJudge:
    """A judge that answers as tests/data/toy/WASEDA-AC-1.marked says."""
    marked = parse_marked_ac_run(io.BytesIO(example("WASEDA-AC-1.marked")))
    assert marked.ok
    script = ScriptedJudge()
    for block in marked.records:
        relevant = [m.nugget.text for m in block.nuggets if m.mark == "R"]
        script.correct[block.answer] = bool(relevant)
        script.relevant[block.answer] = relevant
        for m in block.nuggets:
            script.entailed[m.nugget.text] = m.mark != "B"
    return script


@pytest.fixture
def script() -> ScriptedJudge:
    return judge_from_marked_example()


@pytest.fixture
def server(script: ScriptedJudge) -> Iterator[ScriptedServer]:
    with ScriptedServer(script) as running:
        yield running


#: The client timeout of a test whose scripted server holds a request until teardown: the
#: held request always times out; every other reply has this long on loopback, which even
#: one busy core gives it many times over.
GIVES_UP_AFTER = 1.0


def make_judge(server: ScriptedServer, **options: object) -> OpenAIJudge:
    # A timeout far beyond any loopback reply: where no timeout is under test, none fires.
    config = dict(base_url=server.base_url, model="scripted-judge", concurrency=4,
                  timeout=30.0, max_retries=3, parse_attempts=2, backoff_initial=0.01,
                  backoff_max=0.05)
    config.update(options)
    return OpenAIJudge(JudgeConfig(**config))  # type: ignore[arg-type]


@pytest.fixture
def judge(server: ScriptedServer) -> OpenAIJudge:
    return make_judge(server)


@pytest.fixture
def toy_ac_run(personas: Personas, upload: Upload) -> Run:
    """WASEDA-AC-1 of the toy campaign, accepted after both PR runs were shared."""
    upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    upload("participant_b", "KYOTO-PG-1", example("KYOTO-PG-1"))
    share_pr_runs(personas)
    response = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1"))
    assert response.status_code == 201, response.json()
    return Run.objects.get(pk=response.json()["id"])


# Nuggets of tests/data/toy/WASEDA-AC-1 that tests about doubt and review refer to, with
# their marks (tests/data/README.md).
SOFT_LANDING = "Chang'e 4 made the first soft landing on the far side of the Moon."  # D001#1, R
ESA_LAUNCH = "Chang'e 4 was launched by the European Space Agency."  # D001 nugget 3, B
MARS_DIAMETER = "Mars has a mean diameter of about 6,779 km."  # D003 nugget 1, R
FOURTH_PLANET = "Mars is the fourth planet from the Sun."  # D003 nugget 3, N
ALDRIN_COMMANDER = "Buzz Aldrin was the commander of Apollo 11."  # D002 nugget 2, B
#: The toy's nuggets the names-and-numbers rule decides without asking the judge: each
#: names someone its passage never mentions.
RULED = frozenset({ESA_LAUNCH, ALDRIN_COMMANDER})


def asked_once(calls: Mapping[str, int], nuggets: Iterable[str]) -> bool:
    """Was the judge asked once about each nugget the rule leaves to it, and never about
    the others?"""
    return all(calls.get(nugget, 0) == (0 if nugget in RULED else 1) for nugget in nuggets)


def judgment_of(text: str) -> Judgment:
    """The entailment judgment of a nugget, or the answer judgment of an answer."""
    nugget = Judgment.objects.filter(kind="entailment", input__nugget=text).first()
    return nugget or Judgment.objects.get(kind="answer", input__answer=text)


def confirm(personas: Personas, text: str) -> None:
    """An organiser confirms the judge's label of a nugget or an answer."""
    judgment_confirm(judgment=judgment_of(text), user=personas.organiser)


#: What the scripted judge is unsure of (the campaign's review threshold is 0.8): D001's
#: first nugget's entailment, D002's answer check, and whether D003's nugget 3 helped.
#: Mars's diameter is less than sure but above the threshold.
DOUBT = {SOFT_LANDING: 0.6, "Buzz Aldrin": 0.7, f"relevance:{FOURTH_PLANET}": 0.75,
         MARS_DIAMETER: 0.9}


@pytest.fixture
def doubted(toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge) -> Run:
    """The toy AC run graded by a judge unsure of what DOUBT says."""
    script.sure.update(DOUBT)
    run_grade(run=toy_ac_run, judge=judge)
    return toy_ac_run
