"""`passages_to_grade`: what rubric grading rates of a ranking or response run."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaign.models import CorpusPassage, Question, Track
from submissions.models import Run
from submissions.selectors import CORPUS_TEXT_LOST, PassageToGrade, passages_to_grade
from tests.grading.rubric_support import rubric_run
from tests.support import Personas, Upload, example

pytestmark = pytest.mark.django_db

# tests/data/rubric/corpus.jsonl
ALIEN = "Alien (1979) was directed by Ridley Scott."
TOY_STORY = "Toy Story (1995) was the first feature film made entirely with computer animation."
BLADE_RUNNER = "Ridley Scott later directed Blade Runner."
PIXAR = "Pixar made Toy Story;\nit was released by Disney."


def stored(upload: Upload, who: str, name: str, content: bytes, track: str) -> Run:
    response = upload(who, name, content, track=track)
    assert response.status_code == 201, response.json()
    return Run.objects.select_related("track").get(pk=response.json()["id"])


def test_a_ranking_run_gives_the_top_depth_of_each_query_in_trec_evals_order_with_corpus_text(
    rubric: Personas, rubric_upload: Upload
) -> None:
    Track.objects.filter(slug="dl").update(depth=2)
    run = stored(rubric_upload, "participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"), "dl")

    assert passages_to_grade(run=run) == [
        PassageToGrade(qid="q1", docid="d1", rank=1, text=ALIEN),
        PassageToGrade(qid="q1", docid="d3", rank=2, text=BLADE_RUNNER),
        # q1's d2 (rank 3) is below the depth.
        PassageToGrade(qid="q2", docid="d4", rank=1, text=PIXAR),
        PassageToGrade(qid="q2", docid="d2", rank=2, text=TOY_STORY),
    ]


def test_a_response_run_gives_every_segment_whatever_the_depth(
    rubric: Personas, rubric_upload: Upload
) -> None:
    Track.objects.filter(slug="gen").update(depth=1)
    run = stored(rubric_upload, "participant_b", "KYOTO-llm", rubric_run("KYOTO-llm"), "gen")

    assert passages_to_grade(run=run) == [
        PassageToGrade("q1", "KYOTO-llm:q1:1", 1,
                       "Ridley Scott directed Alien, released in 1979. He later directed "
                       "Blade Runner."),
        PassageToGrade("q2", "KYOTO-llm:q2:1", 1,
                       "Toy Story was the first fully computer-animated feature film."),
        PassageToGrade("q2", "KYOTO-llm:q2:2", 2, "Pixar made it; Disney released it."),
    ]


def test_it_asks_the_database_once_however_many_queries_and_passages(
    rubric: Personas, rubric_upload: Upload
) -> None:
    campaign = rubric.campaign
    Question.objects.bulk_create(Question(campaign=campaign, qid=f"x{i}", text=f"Query {i}?",
                                          position=10 + i) for i in range(30))
    CorpusPassage.objects.bulk_create(CorpusPassage(campaign=campaign, docid=f"p{i}",
                                                    text=f"Passage {i}.") for i in range(40))
    big = "".join(f"x{q} Q0 p{d} {d} {100 - d} big\n" for q in range(30) for d in range(40))
    small = stored(rubric_upload, "participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"), "dl")
    large = stored(rubric_upload, "participant_a", "WASEDA-big", big.encode(), "dl")

    counts = []
    for run in (small, large):
        with CaptureQueriesContext(connection) as queries:
            graded = passages_to_grade(run=run)
        counts.append((len(queries), len(graded)))

    # depth 20 (the campaign file's): 5 passages of the small run, 30 x 20 of the large.
    assert counts == [(1, 5), (1, 600)]
    assert passages_to_grade(run=large)[:2] == [
        PassageToGrade("x0", "p0", 1, "Passage 0."), PassageToGrade("x0", "p1", 2, "Passage 1.")]


def test_a_docid_gone_from_the_corpus_is_an_error_not_an_empty_passage(
    rubric: Personas, rubric_upload: Upload
) -> None:
    run = stored(rubric_upload, "participant_a", "WASEDA-bm25", rubric_run("WASEDA-bm25"), "dl")
    CorpusPassage.objects.filter(docid="d3").delete()  # the loader never does this

    with pytest.raises(LookupError) as raised:
        passages_to_grade(run=run)
    assert str(raised.value) == CORPUS_TEXT_LOST.format(docid="d3", run="WASEDA-bm25")


def test_pr_and_ac_runs_have_nothing_to_grade_here(
    personas: Personas, upload: Upload
) -> None:
    response = upload("participant_a", "WASEDA-PO-1", example("WASEDA-PO-1"))
    run = Run.objects.select_related("track").get(pk=response.json()["id"])
    assert run.records == 7 and passages_to_grade(run=run) == []
