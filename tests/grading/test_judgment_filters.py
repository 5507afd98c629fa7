"""The judgments list, for the API and the review page: filtered in the database, a page
at a time, in as many queries for a long list as for a short one."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from campaign.models import Team, Track
from grading.api import JudgmentPagination
from grading.models import Judgment
from grading.selectors import grading_progress
from scoring.models import Evaluation, RunScore
from submissions.models import Run
from tests.grading.judged_rows import judged_answers, judged_run
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

JUDGMENTS = "/api/v1/campaigns/toy/judgments/"
QUEUE = "/campaigns/toy/judgments/"
FLAGS = ["label", "edited", "needs_review", "doubtful", "disagreement"]


@pytest.fixture
def waseda(personas: Personas) -> Team:
    return Team.objects.get(campaign=personas.campaign, name="WASEDA")


@pytest.fixture
def run(tracks: dict[str, Track], waseda: Team) -> Run:
    return judged_run(track=tracks["ac"], team=waseda, name="WASEDA-AC-1")


def counted(fetch: Callable[[], Any]) -> tuple[int, Any]:
    """How many queries `fetch` makes, and what it returns."""
    with CaptureQueriesContext(connection) as queries:
        result = fetch()
    return len(queries), result


def listed(page: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<h2 id="j(\d+)-h">', page)]


class TestQueriesDoNotGrowWithTheList:
    def test_the_api_lists_ten_disagreements_in_the_queries_of_two(
        self, personas: Personas, run: Run
    ) -> None:
        client = personas.client("organiser")
        # Every filter that reads labels or the second judge at once.
        url = f"{JUDGMENTS}?disagreement=true&label=true&edited=false&needs_review=false"
        judged_answers(run=run, count=2, second_judge_disagrees=True)
        two, short = counted(lambda: client.get(url).json())
        judged_answers(run=run, start=3, count=8, second_judge_disagrees=True)
        ten, long = counted(lambda: client.get(url).json())

        # Only the nuggets have a second judge; it calls each of them bogus.
        assert [(i["kind"], i["qid"]) for i in short["results"]] == [
            ("entailment", "Q0001"), ("entailment", "Q0002")]
        assert long["count"] == len(long["results"]) == 10
        assert ten == two

    def test_the_review_page_lists_ten_in_the_queries_of_two(
        self, personas: Personas, run: Run
    ) -> None:
        client = signed_in(personas, "organiser")
        url = f"{QUEUE}?disagreement=true"
        judged_answers(run=run, count=2, second_judge_disagrees=True)
        two, short = counted(lambda: client.get(url).content.decode())
        judged_answers(run=run, start=3, count=8, second_judge_disagrees=True)
        ten, long = counted(lambda: client.get(url).content.decode())

        assert len(listed(short)) == 2 and len(listed(long)) == 10
        assert ten == two

    def test_grading_progress_counts_ten_runs_in_the_queries_of_two(
        self, personas: Personas, tracks: dict[str, Track], waseda: Team
    ) -> None:
        def make_runs(numbers: range) -> None:
            for n in numbers:
                judged_answers(run=judged_run(track=tracks["ac"], team=waseda,
                                              name=f"WASEDA-AC-{n}"), count=n)

        make_runs(range(1, 3))
        two, short = counted(lambda: grading_progress(campaign=personas.campaign))
        make_runs(range(3, 11))
        ten, long = counted(lambda: grading_progress(campaign=personas.campaign))

        assert [(p.run.name, p.done, p.total) for p in short] == [
            ("WASEDA-AC-1", 2, 2), ("WASEDA-AC-2", 4, 4)]
        # Run n answers n questions with one nugget each: 2n judgments.
        assert {p.run.name: p.total for p in long} == {
            f"WASEDA-AC-{n}": 2 * n for n in range(1, 11)}
        assert ten == two

    def test_the_team_page_shows_ten_runs_scores_in_the_queries_of_two(
        self, personas: Personas, tracks: dict[str, Track], waseda: Team
    ) -> None:
        evaluation = Evaluation.objects.create(track=tracks["ac"], fingerprint="f",
                                               published_at=timezone.now() - timedelta(hours=1))

        def make_runs(numbers: range) -> None:
            for n in numbers:
                scored = judged_run(track=tracks["ac"], team=waseda, name=f"WASEDA-AC-{n}")
                RunScore.objects.create(evaluation=evaluation, run=scored,
                                        aggregates={"accuracy": n / 100}, per_question={})

        client = signed_in(personas, "participant_a")
        make_runs(range(1, 3))
        two, short = counted(lambda: client.get("/campaigns/toy/team/").content.decode())
        make_runs(range(3, 11))
        ten, long = counted(lambda: client.get("/campaigns/toy/team/").content.decode())

        assert "accuracy 0.0200" in short and "accuracy 0.0300" not in short
        assert all(f"accuracy {n / 100:.4f}" in long for n in range(1, 11))
        assert ten == two


class TestFilters:
    def test_the_label_that_counts_is_the_organisers_edit(
        self, personas: Personas, run: Run
    ) -> None:
        judged_answers(run=run, count=3)
        entailments = {j.input["nugget"]: j for j in Judgment.objects.filter(kind="entailment")}
        edited = entailments["WASEDA-AC-1 Q0001 nugget"]
        edited.edited_label = {"entailed": False}  # the judge said entailed
        edited.save()
        unlabelled = entailments["WASEDA-AC-1 Q0002 nugget"]
        unlabelled.llm_label = None  # the reply never parsed
        unlabelled.save()
        client = personas.client("organiser")

        def qids(query: str) -> list[str]:
            body = client.get(f"{JUDGMENTS}?kind=entailment&{query}").json()
            return [item["qid"] for item in body["results"]]

        assert qids("label=false") == ["Q0001"]
        assert qids("label=true") == ["Q0003"]
        assert qids("needs_review=yes") == ["Q0002"]
        assert qids("edited=1") == ["Q0001"]

    @pytest.mark.parametrize("flag", FLAGS)
    def test_the_api_names_a_yes_no_parameter_it_cannot_read(
        self, personas: Personas, run: Run, flag: str
    ) -> None:
        response = personas.client("organiser").get(f"{JUDGMENTS}?{flag}=maybe")
        assert response.status_code == 400
        assert response.json() == {
            "detail": "expected true or false, found 'maybe'",
            "errors": [{"field": flag, "message": "expected true or false, found 'maybe'"}]}

    def test_the_review_page_says_which_filter_it_cannot_read_and_lists_nothing(
        self, personas: Personas, run: Run
    ) -> None:
        judged_answers(run=run, count=1)
        response = signed_in(personas, "organiser").get(f"{QUEUE}?label=maybe")
        page = response.content.decode()
        assert response.status_code == 400
        assert escape("Label (entailed / correct): expected true or false, found 'maybe'") in page
        assert listed(page) == []


class TestPages:
    def test_following_next_gives_the_whole_list_in_its_order(
        self, personas: Personas, run: Run
    ) -> None:
        judged_answers(run=run, count=5)
        client = personas.client("organiser")
        whole = client.get(f"{JUDGMENTS}?order=run").json()
        assert (whole["count"], whole["next"], whole["previous"]) == (10, None, None)

        pages = [client.get(f"{JUDGMENTS}?order=run&page_size=4").json()]
        while pages[-1]["next"]:
            pages.append(client.get(pages[-1]["next"]).json())

        assert [len(page["results"]) for page in pages] == [4, 4, 2]
        assert all(page["count"] == 10 for page in pages)
        assert pages[0]["previous"] is None and pages[-1]["previous"] is not None
        assert [i["id"] for page in pages for i in page["results"]] == [
            i["id"] for i in whole["results"]]

    def test_a_page_past_the_end_is_not_found_and_named(
        self, personas: Personas, run: Run
    ) -> None:
        judged_answers(run=run, count=1)
        response = personas.client("organiser").get(f"{JUDGMENTS}?page=9")
        assert response.status_code == 404
        assert response.json()["detail"] == "page '9': That page contains no results"

    def test_a_client_may_not_ask_for_pages_beyond_the_cap(self) -> None:
        request = Request(APIRequestFactory().get("/", {"page_size": "5000"}))
        assert JudgmentPagination().get_page_size(request) == JudgmentPagination.max_page_size

    def test_the_review_page_shows_fifty_a_page(self, personas: Personas, run: Run) -> None:
        judged_answers(run=run, count=30)  # 60 uses
        client = signed_in(personas, "organiser")
        first = client.get(f"{QUEUE}?order=run").content.decode()
        second = client.get(f"{QUEUE}?order=run&page=2").content.decode()
        assert "60 judgment use(s) match." in first and "Page 1 of 2" in first
        assert len(listed(first)) == 50 and len(listed(second)) == 10
        assert not set(listed(first)) & set(listed(second))
