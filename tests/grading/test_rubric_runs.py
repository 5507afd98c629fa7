"""Ranking and response runs graded through the one grading path: the
same claim, Celery task, `grade` command, progress, heartbeat, failure handling and
"the last run of a round queues scoring" as AC runs, on tests/data/rubric.

What each run rates (docs/rubric.md; tests/data/rubric/runs/README.md), with the
test bank's items (q1: two questions, q2: one nugget):
- WASEDA-bm25 (ranking, depth 20): q1 d1, d3, d2; q2 d4, d2: 5 passages, 3x2 + 2x1 = 8 pairs;
- KYOTO-llm (response): q1 one segment, q2 two: 3 passages, 1x2 + 2x1 = 4 pairs.
No two of these 12 pairs share both a passage text and an item, so grading costs 12 calls.
"""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from campaign import testbank
from campaign.models import TestBankItem, Track
from grading.judge import JudgeUnavailable
from grading.llm.schemas import RUBRIC_SCHEMA_NAME
from grading.models import GradingPart, Judgment, JudgmentKind, PartStatus, PassageItemGrade
from grading.review.edits import judgment_edit
from grading.review.queue import doubt_counts, official_judgments
from grading.rubric import drafting as testbank_generation
from grading.rubric.grades import RubricGradeReport, rubric_run_grade
from grading.selectors import grading_progress
from grading.tasks import grade_part, grade_testbank_items
from grading.work.claims import part_claim
from grading.work.part_grading import part_grading
from grading.work.rounds import campaign_grading_queue, rounds_start
from submissions.models import Run, RunStatus
from tests.grading.fixtures import make_judge
from tests.grading.rounds import claimed_part, part_of, queued_part
from tests.grading.rubric_support import (
    MODEL,
    SLUG,
    ScriptedRubric,
    grade,
    movie_rubric,
    rubric_run,
    submit,
)
from tests.grading.scripted_server import BAD_API_KEY, ScriptedServer, Status
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]
JUDGMENTS = f"/api/v1/campaigns/{SLUG}/judgments/"

ALIEN = "Alien (1979) was directed by Ridley Scott."  # d1
DIRECTOR, RELEASE = "Who directed Alien?", "When was Alien released?"
#: The bank gives no id to the release question: it is query_id/md5 of its text.
RELEASE_ID = f"q1/{hashlib.md5(RELEASE.encode()).hexdigest()}"

#: (qid, docid, item) of every pair each run rates; item ids as the bank names them.
WASEDA_PAIRS = {(qid, docid, item) for qid, docids, items in (
    ("q1", ("d1", "d3", "d2"), ("q1/director", RELEASE_ID)),
    ("q2", ("d4", "d2"), ("q2/cgi",))) for docid in docids for item in items}
KYOTO_PAIRS = {("q1", "KYOTO-llm:q1:1", "q1/director"), ("q1", "KYOTO-llm:q1:1", RELEASE_ID),
               ("q2", "KYOTO-llm:q2:1", "q2/cgi"), ("q2", "KYOTO-llm:q2:2", "q2/cgi")}


@pytest.fixture
def movie(db: None) -> Personas:
    return movie_rubric()


@pytest.fixture
def runs(movie: Personas) -> dict[str, Run]:
    return {"WASEDA-bm25": submit(movie, "participant_a", "WASEDA-bm25", "dl"),
            "KYOTO-llm": submit(movie, "participant_b", "KYOTO-llm", "gen")}


@pytest.fixture
def scripted() -> ScriptedRubric:
    # d1 answers the director question; elsewhere the judge says 2.
    return ScriptedRubric(grades={(ALIEN, DIRECTOR): (5, "Ridley Scott")})


@pytest.fixture
def unparsed(scripted: ScriptedRubric) -> None:
    """One pair's reply never parses (grade 1, needs review): d1 on the release question,
    which only WASEDA-bm25 retrieves. (The client asks again before it gives up, so the
    requests are no longer one per pair.)"""
    scripted.garbage.add((ALIEN, RELEASE))


@pytest.fixture
def server(scripted: ScriptedRubric) -> Iterator[ScriptedServer[ScriptedRubric]]:
    with ScriptedServer(scripted) as running:
        yield running


def listed(personas: Personas, **query: str) -> list[dict[str, Any]]:
    response = personas.client("organiser").get(JUDGMENTS, {"page_size": "100", **query})
    assert response.status_code == 200, response.json()
    results: list[dict[str, Any]] = response.json()["results"]
    return results


class TestTheGradeCommand:
    def test_it_grades_ranking_and_response_runs_once_per_distinct_pair(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr("sys.stderr", io.StringIO())

        out = grade(server)

        assert "WASEDA-bm25: 5 passages, 8 pairs, 8 judge calls in " in out, out
        assert "KYOTO-llm: 3 passages, 4 pairs, 4 judge calls in " in out, out
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12
        assert PassageItemGrade.objects.count() == 12
        for run in runs.values():
            run.refresh_from_db()
            assert run.status in RunStatus.JUDGED and run.failure_reason == ""

    def test_a_second_grading_of_every_run_costs_no_call(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr("sys.stderr", io.StringIO())
        grade(server)

        out = grade(server, "--all")

        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12
        assert "WASEDA-bm25: 5 passages, 8 pairs, 0 judge calls in " in out, out
        assert "KYOTO-llm: 3 passages, 4 pairs, 0 judge calls in " in out, out

    def test_a_run_retrieving_graded_passages_costs_no_call(
        self, movie: Personas, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr("sys.stderr", io.StringIO())
        grade(server)
        # KYOTO's ranking retrieves exactly WASEDA's passages.
        submit(movie, "participant_b", "KYOTO-bm25", "dl", content=rubric_run("WASEDA-bm25"))

        out = grade(server)

        graded = out.split("\nTrack ", 1)[0]  # what follows is the scoring of every run
        assert "KYOTO-bm25: 5 passages, 8 pairs, 0 judge calls in " in graded, out
        assert "WASEDA-bm25" not in graded  # graded already: not pending
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12


class TestTheGradingPath:
    def test_the_queue_takes_ranking_and_response_runs(self, runs: dict[str, Run]) -> None:
        ids = sorted(run.pk for run in runs.values())

        assert campaign_grading_queue(campaign=runs["KYOTO-llm"].track.campaign) == ids
        assert len(rounds_start(run_ids=ids)) == 2
        assert set(Run.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
            RunStatus.QUEUED}

    def test_the_last_graded_run_of_the_round_queues_scoring(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric], unparsed: None,
        django_capture_on_commit_callbacks: Capture,
    ) -> None:
        judge = make_judge(server)
        rounds_start(run_ids=[run.pk for run in runs.values()])

        def taken(run: Run, token: str) -> GradingPart:
            part = part_claim(part_id=part_of(run).pk, token=token)
            assert part is not None
            return part

        with django_capture_on_commit_callbacks(execute=False) as first:
            waseda = part_grading(part=taken(runs["WASEDA-bm25"], "task-1"), token="task-1",
                                  judge=judge)
        with django_capture_on_commit_callbacks(execute=False) as last:
            kyoto = part_grading(part=taken(runs["KYOTO-llm"], "task-2"), token="task-2",
                                 judge=judge)

        assert isinstance(waseda.report, RubricGradeReport)
        assert (waseda.report.passages, waseda.report.pairs, waseda.report.judge_calls,
                waseda.report.needs_review) == (5, 8, 8, 1)
        # KYOTO-llm was still QUEUED: the round was not over.
        assert waseda.scoring_task is None and first == []
        assert kyoto.scoring_task is not None and len(last) == 1
        for run in runs.values():
            run.refresh_from_db()
            assert (run.status, part_of(run).status) == (RunStatus.GRADED, PartStatus.GRADED)

    def test_the_task_grades_a_response_run(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
    ) -> None:
        with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL=MODEL,
                               GRADER_TIMEOUT=30):
            result = grade_part.apply(args=(queued_part(runs["KYOTO-llm"]),))

        assert result.state == "SUCCESS", result.result
        summary = result.result
        assert isinstance(summary, dict)
        assert {k: summary[k] for k in ("passages", "pairs", "judge_calls")} == {
            "passages": 3, "pairs": 4, "judge_calls": 4}
        runs["KYOTO-llm"].refresh_from_db()
        assert runs["KYOTO-llm"].status in RunStatus.JUDGED

    def test_a_refusing_judge_fails_the_run_at_once_and_says_why(
        self, movie: Personas, runs: dict[str, Run],
    ) -> None:
        run = runs["WASEDA-bm25"]
        with ScriptedServer([Status(401, BAD_API_KEY)]) as refusing, override_settings(
            GRADER_BASE_URL=refusing.base_url, GRADER_MODEL=MODEL, GRADER_TIMEOUT=30,
        ):
            result = grade_part.apply(args=(queued_part(run),))

        # One request per pair, no retry by the client or the task.
        assert len(refusing.requests) == 8
        assert result.state == "FAILURE" and isinstance(result.result, JudgeUnavailable)
        assert result.result.permanent
        run.refresh_from_db()
        assert run.status == RunStatus.FAILED
        assert run.failure_reason.startswith("8 of 8 rubric judge call(s) failed; the first: ")
        assert "(HTTP 401)" in run.failure_reason and BAD_API_KEY in run.failure_reason
        # Nothing graded, and the team sees why.
        assert PassageItemGrade.objects.count() == 0
        body = movie.client("participant_a").get(f"/api/v1/runs/{run.pk}/").json()
        assert (body["status"], body["failure_reason"]) == ("failed", run.failure_reason)

    def test_a_track_s_second_judge_does_not_grade_rubric_runs(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric,
    ) -> None:
        run = runs["WASEDA-bm25"]
        with ScriptedServer(ScriptedRubric()) as second:
            Track.objects.filter(pk=run.track_id).update(
                second_judge_base_url=second.base_url, second_judge_model="second-judge")
            outcome = part_grading(part=claimed_part(run), token="task-1",
                                   judge=make_judge(server))

        assert outcome.failure is None and second.requests == []
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 8

    def test_a_grader_whose_run_was_taken_over_links_nothing_and_ends_nothing(
        self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric,
    ) -> None:
        run = runs["WASEDA-bm25"]
        part = claimed_part(run, "task-1")
        # task-1's worker looks dead (no heartbeat for long): task-2 takes the part over.
        GradingPart.objects.filter(pk=part.pk).update(
            heartbeat=timezone.now() - timedelta(days=1))
        again = part_claim(part_id=part.pk, token="task-2")
        assert again is not None

        outcome = part_grading(part=part, token="task-1", judge=make_judge(server))

        assert outcome.lost and outcome.report is None
        assert not PassageItemGrade.objects.exists()
        run.refresh_from_db()
        assert (run.status, part_of(run).token) == (RunStatus.GRADING, "task-2")
        # What task-1 judged is cached: the new owner grades the run with no call.
        assert Judgment.objects.filter(kind=JudgmentKind.RUBRIC).count() == 8
        assert part_grading(part=again, token="task-2", judge=make_judge(server)).failure is None
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 8
        assert PassageItemGrade.objects.count() == 8


class TestJudgmentsOfARun:
    @pytest.fixture
    def graded(self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric]) -> None:
        judge = make_judge(server)
        for run in runs.values():
            rubric_run_grade(run=run, judge=judge)

    def test_run_lists_the_grades_of_the_passages_it_retrieved(
        self, movie: Personas, graded: None
    ) -> None:
        for name, pairs in (("WASEDA-bm25", WASEDA_PAIRS), ("KYOTO-llm", KYOTO_PAIRS)):
            items = listed(movie, kind="rubric", run=name)

            assert {(i["qid"], i["docid"], i["item_id"]) for i in items} == pairs
            assert len(items) == len(pairs)
            # A grade is the passage's, shared by every run that retrieved it.
            assert {i["run"] for i in items} == {None}
        assert listed(movie, kind="rubric", run="WASEDA-nothing") == []

    def test_passages_below_the_track_s_depth_are_not_the_run_s(
        self, movie: Personas, runs: dict[str, Run], graded: None
    ) -> None:
        Track.objects.filter(pk=runs["WASEDA-bm25"].track_id).update(depth=2)

        items = listed(movie, kind="rubric", run="WASEDA-bm25")

        # q1's third passage in trec_eval's order (d2, score 3) is below the depth now.
        assert {(i["qid"], i["docid"], i["item_id"]) for i in items} == {
            pair for pair in WASEDA_PAIRS if pair[:2] != ("q1", "d2")}


class TestProgressAndReview:
    def test_progress_counts_pairs_graded_and_to_review_per_run(
        self, movie: Personas, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        unparsed: None,
    ) -> None:
        def progress() -> dict[str, tuple[int, int, int, int]]:
            return {p.run.name: (p.passages, p.done, p.total, p.needs_review)
                    for p in grading_progress(campaign=movie.campaign)}

        assert progress() == {"KYOTO-llm": (3, 0, 4, 0), "WASEDA-bm25": (5, 0, 8, 0)}
        rubric_run_grade(run=runs["WASEDA-bm25"], judge=make_judge(server))

        assert progress() == {"KYOTO-llm": (3, 0, 4, 0), "WASEDA-bm25": (5, 8, 8, 1)}
        body = movie.client("organiser").get(f"/api/v1/campaigns/{SLUG}/grading/").json()
        waseda = next(r for r in body["runs"] if r["run"] == "WASEDA-bm25")
        assert (waseda["passages"], waseda["pairs"], waseda["needs_review"]) == (
            5, {"done": 8, "total": 8}, 1)
        page = signed_in(movie, "organiser").get(f"/campaigns/{SLUG}/dashboard/")
        html = page.content.decode()
        assert '<tr data-run="WASEDA-bm25">' in html and '<tr data-run="KYOTO-llm">' in html
        assert '<span class="count">8/8</span> <span class="unit">pairs (5 passages)' in html
        # Graded by the service alone, not the grading path: both runs are still VALID.
        assert "<p>2 run(s) wait for grading.</p>" in html

    def test_progress_counts_ten_runs_in_the_queries_of_two(
        self, movie: Personas, server: ScriptedServer[ScriptedRubric], unparsed: None,
    ) -> None:
        content = rubric_run("WASEDA-bm25")

        def make_runs(numbers: range) -> None:
            for n in numbers:
                for who, team in (("participant_a", "WASEDA"), ("participant_b", "KYOTO")):
                    submit(movie, who, f"{team}-r{n}", "dl", content=content)

        make_runs(range(1, 2))
        rubric_run_grade(run=Run.objects.get(name="WASEDA-r1"), judge=make_judge(server))
        with CaptureQueriesContext(connection) as two:
            short = grading_progress(campaign=movie.campaign)
        make_runs(range(2, 6))
        with CaptureQueriesContext(connection) as ten:
            long = grading_progress(campaign=movie.campaign)

        # Every run retrieves WASEDA-r1's passages, whose grades are theirs too.
        assert [(p.run.name, p.done, p.total) for p in short] == [
            ("KYOTO-r1", 8, 8), ("WASEDA-r1", 8, 8)]
        assert len(long) == 10 and {(p.done, p.total, p.needs_review) for p in long} == {
            (8, 8, 1)}
        assert len(ten.captured_queries) == len(two.captured_queries)

    def test_the_publishing_gate_counts_the_runs_unparsed_grades_until_reviewed(
        self, movie: Personas, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
        unparsed: None,
    ) -> None:
        rubric_run_grade(run=runs["WASEDA-bm25"], judge=make_judge(server))
        campaign = movie.campaign

        counts = doubt_counts(campaign=campaign)
        assert (counts.judgments, counts.doubtful, counts.unreviewed) == (8, 1, 1)
        # Only the grades the runs use: KYOTO-llm's are not made yet.
        kyoto = Run.objects.filter(pk=runs["KYOTO-llm"].pk)
        assert official_judgments(campaign=campaign, runs=kyoto).count() == 0

        unlabelled = Judgment.objects.get(kind=JudgmentKind.RUBRIC, llm_label__isnull=True)
        judgment_edit(judgment=unlabelled, user=movie.organiser, changes={"grade": 0},
                      reason="", note="d1 gives no release date")

        counts = doubt_counts(campaign=campaign)
        assert (counts.judgments, counts.doubtful, counts.unreviewed) == (8, 1, 0)


class TestTestBankChanges:
    """Editing an item's text makes its earlier grades stale, and re-grades only that
    item's pairs. Once runs are graded,
    a change to the bank queues the grading of the items it changed (on what the graded
    runs rated for their queries) and then scoring; nothing else is judged again."""

    @pytest.fixture
    def graded(self, runs: dict[str, Run], server: ScriptedServer[ScriptedRubric],
               scripted: ScriptedRubric, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr("sys.stderr", io.StringIO())
        grade(server)
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12

    @staticmethod
    def item(qid_item: str) -> TestBankItem:
        return TestBankItem.objects.get(item_id=qid_item)

    @staticmethod
    def reword(personas: Personas, item: TestBankItem) -> None:
        """An organiser gives `item` a new text through the API."""
        response = personas.client("organiser").patch(
            f"/api/v1/testbank/{item.pk}/",
            {"text": "In which year was Alien first released?", "note": "say 'first'"},
            format="json")
        assert response.status_code == 200, response.json()

    @staticmethod
    def queued_items(callbacks: list[Callable[[], Any]]) -> list[Any]:
        """The (campaign id, item ids) of each grading task the changes would send."""
        return [callback.keywords["args"] for callback in callbacks
                if isinstance(callback, functools.partial)
                and callback.func == grade_testbank_items.apply_async]

    @staticmethod
    def run_task(server: ScriptedServer[Any], args: Any,
                 capture: Capture) -> dict[str, Any]:
        with override_settings(GRADER_BASE_URL=server.base_url, GRADER_MODEL=MODEL,
                               GRADER_TIMEOUT=30), capture(execute=False) as scoring:
            result = grade_testbank_items.apply(args=args)
        assert result.state == "SUCCESS", result.result
        summary = result.result
        assert isinstance(summary, dict)
        summary["scoring_sent"] = len(scoring)
        return summary

    def test_editing_an_item_through_the_api_regrades_only_its_pairs(
        self, movie: Personas, graded: None, server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, django_capture_on_commit_callbacks: Capture,
    ) -> None:
        release = self.item(RELEASE_ID)
        kept = dict(PassageItemGrade.objects.exclude(item=release)
                    .values_list("pk", "judgment_id"))
        with django_capture_on_commit_callbacks(execute=False) as sent:
            self.reword(movie, release)
        assert self.queued_items(sent) == [(movie.campaign.pk, [release.pk])]

        summary = self.run_task(server, self.queued_items(sent)[0],
                                django_capture_on_commit_callbacks)

        # q1's passages the runs rated: WASEDA's d1, d3, d2 and KYOTO's one segment.
        assert (summary["passages"], summary["pairs"], summary["judge_calls"]) == (4, 4, 4)
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12 + 4
        assert summary["scoring_task"] is not None and summary["scoring_sent"] == 1
        release.refresh_from_db()
        assert set(PassageItemGrade.objects.filter(item=release).values_list(
            "item_text_hash", flat=True)) == {release.text_hash}
        # The other items' pairs still point at the judgments they had.
        assert dict(PassageItemGrade.objects.exclude(item=release)
                    .values_list("pk", "judgment_id")) == kept

    def test_an_item_added_on_the_page_is_graded_on_its_query_s_passages(
        self, movie: Personas, graded: None, server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, django_capture_on_commit_callbacks: Capture,
    ) -> None:
        with django_capture_on_commit_callbacks(execute=False) as sent:
            response = signed_in(movie, "organiser").post(
                f"/campaigns/{SLUG}/testbank/",
                {"qid": "q2", "target": "nuggets", "text": "Pixar made Toy Story.",
                 "answers": "", "note": "a second nugget"}, follow=True)
        assert response.status_code == 200
        assert "Its pairs are being graded" in response.content.decode()
        [args] = self.queued_items(sent)

        summary = self.run_task(server, args, django_capture_on_commit_callbacks)

        # q2: WASEDA's d4 and d2, KYOTO's two segments.
        assert (summary["pairs"], summary["judge_calls"]) == (4, 4)
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12 + 4

    def test_a_retired_item_costs_no_call_and_scores_again(
        self, movie: Personas, graded: None, server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, django_capture_on_commit_callbacks: Capture,
    ) -> None:
        cgi = self.item("q2/cgi")
        with django_capture_on_commit_callbacks(execute=False) as sent:
            response = movie.client("organiser").delete(
                f"/api/v1/testbank/{cgi.pk}/?note=too+vague")
        assert response.status_code == 200, response.json()

        summary = self.run_task(server, self.queued_items(sent)[0],
                                django_capture_on_commit_callbacks)

        assert (summary["pairs"], summary["judge_calls"], summary["scoring_sent"]) == (0, 0, 1)
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12

    def test_a_change_of_status_costs_no_call(
        self, movie: Personas, graded: None, server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, django_capture_on_commit_callbacks: Capture,
    ) -> None:
        director = self.item("q1/director")
        with django_capture_on_commit_callbacks(execute=False) as sent:
            response = movie.client("organiser").patch(
                f"/api/v1/testbank/{director.pk}/",
                {"status": "draft", "note": "to be reviewed again"}, format="json")
        assert response.status_code == 200, response.json()

        summary = self.run_task(server, self.queued_items(sent)[0],
                                django_capture_on_commit_callbacks)

        # Drafts are graded as active items are, on the same inputs: all cached.
        assert (summary["pairs"], summary["judge_calls"]) == (4, 0)
        assert scripted.count(RUBRIC_SCHEMA_NAME) == 12

    def test_before_any_run_is_graded_a_change_queues_nothing(
        self, movie: Personas, runs: dict[str, Run],
        django_capture_on_commit_callbacks: Capture,
    ) -> None:
        release = self.item(RELEASE_ID)
        with django_capture_on_commit_callbacks(execute=False) as sent:
            self.reword(movie, release)

        # Grading the runs grades every current item: nothing to do before.
        assert self.queued_items(sent) == []

    def test_items_drafted_after_runs_are_graded_are_graded_too(
        self, movie: Personas, graded: None, server: ScriptedServer[ScriptedRubric],
        scripted: ScriptedRubric, django_capture_on_commit_callbacks: Capture,
    ) -> None:
        testbank.testbank_retire(item=self.item("q2/cgi"), user=None, note="too vague")
        with django_capture_on_commit_callbacks(execute=False) as sent:
            report = testbank_generation.testbank_generate(
                campaign=movie.campaign, judge=make_judge(server), n=1)

        assert report.drafted == {"q2": 1} and report.grading_task is not None
        drafted = TestBankItem.objects.get(question__qid="q2", status="draft")
        [args] = self.queued_items(sent)
        assert args == (movie.campaign.pk, [drafted.pk])
        summary = self.run_task(server, args, django_capture_on_commit_callbacks)
        assert (summary["pairs"], summary["judge_calls"]) == (4, 4)
