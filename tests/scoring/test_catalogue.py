"""The measure catalogue: one entry makes a measure appear in scoring, the API, the CSV
and LaTeX exports, the results page and the drill-down; the built-in entries are exactly
what the scoring functions compute."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from scoring.measures import JudgedAnswer, QuestionScores, catalogue, score_ac_run, score_pr_run
from scoring.measures.catalogue import Measure, measures_of, per_question_measures
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.models import Run
from tests.scoring.support import boards
from tests.support import Personas

pytestmark = pytest.mark.django_db


def built_in(kind: str, *, per_question: bool = False) -> set[str]:
    chosen = per_question_measures(kind) if per_question else measures_of(kind)
    return {m.key for m in chosen if m.compute is None}


def test_the_built_in_pr_entries_are_what_score_pr_run_computes() -> None:
    scores = score_pr_run(qrels={"Q1": {"d1": 1}}, rankings={"Q1": ["d2", "d1"]})
    assert set(scores.leaderboard_row()) == built_in("pr")
    assert set(scores.per_question()) == built_in("pr", per_question=True)


def test_the_built_in_ac_entries_are_what_score_ac_run_computes() -> None:
    scores = score_ac_run(qids=["Q1"], answers={"Q1": JudgedAnswer(True, 80, ("R",))})
    assert set(scores.leaderboard_row()) == built_in("ac")
    assert set(scores.per_question()) == built_in("ac", per_question=True)


def precision_at_1(*, qrels: Mapping[str, Mapping[str, int]],
                   rankings: Mapping[str, Sequence[str]]) -> QuestionScores:
    """A toy measure: is the first passage relevant? Over questions with a relevant one."""
    return QuestionScores.from_values({
        qid: float(bool(rankings.get(qid)) and judged.get(rankings[qid][0], 0) > 0)
        for qid, judged in qrels.items() if any(grade > 0 for grade in judged.values())})


TOY = Measure("p@1", "pr", "P@1", "whether the first passage is relevant",
              per_question=True, compute=precision_at_1)


@pytest.fixture
def with_toy_measure(monkeypatch: pytest.MonkeyPatch, graded_toy_run: Run
                     ) -> Iterator[list[Evaluation]]:
    """The toy campaign scored with one more catalogue entry, and nothing else added."""
    monkeypatch.setattr(catalogue, "CATALOGUE", [*catalogue.CATALOGUE, TOY])
    cache.clear()
    yield campaign_score(campaign=graded_toy_run.track.campaign)
    cache.clear()


def test_one_catalogue_entry_puts_a_measure_everywhere(
    personas: Personas, with_toy_measure: list[Evaluation]
) -> None:
    # tests/data/README.md: WASEDA-PO-1 ranks a relevant passage first for both questions
    # with relevant passages; KYOTO-PG-1 for one of the two.
    rows = {row["run"]: row for row in boards(personas, "organiser")["pr"]["rows"]}
    assert (rows["WASEDA-PO-1"]["p@1"], rows["KYOTO-PG-1"]["p@1"]) == (1.0, 0.5)

    organiser = personas.client("organiser")
    csv = organiser.get("/api/v1/campaigns/toy/leaderboards/?format=csv").content.decode()
    header, *lines = csv.splitlines()
    column = header.split(",").index("p@1")
    assert {line.split(",")[1]: line.split(",")[column] for line in lines
            if line.startswith("pr,")} == {"WASEDA-PO-1": "1.0", "KYOTO-PG-1": "0.5"}

    tex = organiser.get("/api/v1/campaigns/toy/exports/leaderboards.tex").content.decode()
    assert "P@1" in tex and " & 1.0000 & " in tex

    browser = Client()
    browser.force_login(User.objects.get(pk=personas.organiser.pk))
    page = browser.get("/campaigns/toy/results/").content.decode()
    assert "whether the first passage is relevant" in page and 'data-label="P@1"' in page
    drill_down = browser.get("/campaigns/toy/results/KYOTO-PG-1/").content.decode()
    assert 'data-label="P@1"' in drill_down


def test_a_bounded_measures_interval_stays_inside_its_bounds(
    scored: list[Evaluation]
) -> None:
    # Three toy questions: a t interval of nDCG@10 runs past 1 (1.2762 before the
    # bootstrap); the bootstrap's bounds are means of observed scores.
    pr = next(e for e in scored if e.track.kind == "pr")
    intervals = pr.statistics["intervals"]
    assert set(intervals) == {"ndcg@10", "ndcg@20"}
    for by_run in intervals.values():
        for ci in by_run.values():
            assert 0.0 <= ci["lower"] <= ci["mean"] <= ci["upper"] <= 1.0
    assert pr.statistics["ci"] == intervals["ndcg@10"]
    assert pr.statistics["interval_method"].startswith("bootstrap percentile")
