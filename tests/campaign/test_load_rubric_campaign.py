"""`manage.py load_campaign` for a RUBRIC campaign: ranking and
response tracks, the corpus streamed into the database, the test bank with its audit
trail, and every refusal leaving nothing behind."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.utils import timezone

from campaign import testbank
from campaign.campaign_file import read_campaign_file
from campaign.corpus import corpus_load
from campaign.models import (
    Campaign,
    CorpusPassage,
    TestBankEdit,
    TestBankItem,
    Track,
    TrackKind,
)
from campaign.selectors import campaign_timeline, corpus_missing
from campaign.services import campaign_load
from submissions.formats.test_bank import default_item_id
from tests.campaign.test_load_campaign import load, load_error
from tests.factories import UserFactory
from tests.support import REPO

RUBRIC = REPO / "tests" / "data" / "rubric"


def rubric_folder(tmp_path: Path, **overrides: Any) -> Path:
    """A copy of tests/data/rubric with the YAML's top-level keys overridden."""
    folder = tmp_path / "rubric"
    shutil.copytree(RUBRIC, folder, dirs_exist_ok=True)
    path = folder / "campaign.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc.update(overrides)
    # Dates as text: the campaign reader parses them itself (with their offset).
    path.write_text(yaml.safe_dump(_dates_as_text(doc), sort_keys=False), encoding="utf-8")
    return path


def _dates_as_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _dates_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(item) for item in value]
    return value.isoformat() if hasattr(value, "isoformat") else value


def tracks(**changes: Any) -> list[dict[str, Any]]:
    """The two tracks of the rubric campaign, the first one changed."""
    return [
        {"slug": "dl", "kind": "ranking", "due": "2026-09-01T23:59:59+00:00", **changes},
        {"slug": "gen", "kind": "response", "due": "2026-09-08T23:59:59+00:00"},
    ]


def bank_line(qid: str, items: list[dict[str, Any]]) -> str:
    """One test-bank line (workbench JSONL) of query `qid`."""
    return json.dumps({"query_id": qid, "query_text": "?", "items": items}) + "\n"


def rubric_state() -> list[Any]:
    return [
        list(Campaign.objects.values_list("slug", "title")),
        list(Track.objects.values_list("slug", "kind", "own_due", "depth", "min_grade")),
        list(CorpusPassage.objects.values_list("docid", "text")),
        list(TestBankItem.objects.values_list("item_id", "text", "answers", "status")),
        list(TestBankEdit.objects.values_list("item__item_id", "action", "previous_text")),
    ]


@pytest.mark.django_db
class TestLoadingARubricCampaign:
    def test_it_loads_tracks_corpus_and_test_bank_without_pr_or_ac_deadlines(self) -> None:
        output = load(RUBRIC / "campaign.yaml")

        assert "Campaign movie-rubric created" in output
        assert "4 passages" in output and "3 test-bank items" in output
        dl, gen = Track.objects.order_by("slug")
        assert (dl.kind, dl.depth, dl.min_grade, dl.label, dl.cover_k, dl.answer_check) == (
            TrackKind.RANKING, 20, 4, "max", 10, "key")
        assert dl.due().isoformat() == "2026-09-01T23:59:59+00:00"
        assert (gen.kind, gen.answer_check, gen.min_grade) == (TrackKind.RESPONSE, "none", 4)
        assert gen.due().isoformat() == "2026-09-08T23:59:59+00:00"
        assert dict(CorpusPassage.objects.values_list("docid", "text"))["d4"] == (
            "Pixar made Toy Story;\nit was released by Disney.")

    def test_the_test_bank_keeps_the_workbench_ids_and_defaults_the_missing_ones(self) -> None:
        load(RUBRIC / "campaign.yaml")

        items = {item.item_id: item for item in TestBankItem.objects.select_related("question")}
        released = default_item_id("q1", "When was Alien released?")
        assert set(items) == {"q1/director", released, "q2/cgi"}
        assert (items["q1/director"].question.qid, items["q1/director"].target,
                items["q1/director"].answers, items["q1/director"].status) == (
            "q1", "questions", ["Ridley Scott"], "active")
        assert (items["q2/cgi"].target, items["q2/cgi"].answers) == ("nuggets", [])
        assert set(TestBankEdit.objects.values_list("item__item_id", "action", "note")) == {
            (item_id, "add", "loaded from testbank.jsonl") for item_id in items}

    def test_the_timeline_shows_each_tracks_own_deadline_and_no_pr_or_ac_deadline(
        self,
    ) -> None:
        load(RUBRIC / "campaign.yaml")
        campaign = Campaign.objects.get()

        entries = campaign_timeline(campaign=campaign, now=timezone.now())

        assert [entry.key for entry in entries] == [
            "topics_release", "track:dl", "track:gen", "results_release"]

    def test_the_api_shows_no_pr_or_ac_deadline_for_it(self, client: Any) -> None:
        load(RUBRIC / "campaign.yaml")
        body = client.get("/api/v1/campaigns/movie-rubric/").json()
        assert (body["phases"]["pr_due"], body["phases"]["ac_due"]) == (None, None)
        assert [(t["slug"], t["due"], t["cover_k"]) for t in body["tracks"]] == [
            ("dl", "2026-09-01T23:59:59Z", 10), ("gen", "2026-09-08T23:59:59Z", 10)]

    def test_loading_it_twice_changes_nothing(self) -> None:
        load(RUBRIC / "campaign.yaml")
        before = rubric_state()
        output = load(RUBRIC / "campaign.yaml")
        assert "0 new passages" in output and "0 changed test-bank items" in output
        assert rubric_state() == before

    def test_a_reload_overwrites_an_organisers_edit_but_keeps_it_in_the_history(
        self, tmp_path: Path
    ) -> None:
        path = rubric_folder(tmp_path)
        load(path)
        olga = UserFactory.create(username="olga")
        item = TestBankItem.objects.get(item_id="q1/director")
        testbank.testbank_edit(item=item, user=olga, note="shorter",
                               change=testbank.ItemChange(text="Who made Alien?"))

        load(path)

        item.refresh_from_db()
        assert item.text == "Who directed Alien?"
        assert list(item.edits.values_list("action", "previous_text", "note")) == [
            ("add", "", "loaded from testbank.jsonl"),
            ("edit", "Who directed Alien?", "shorter"),
            ("edit", "Who made Alien?", "loaded from testbank.jsonl"),
        ]

    def test_a_reload_adds_new_passages_and_keeps_dropped_ones(self, tmp_path: Path) -> None:
        path = rubric_folder(tmp_path)
        load(path)
        (path.parent / "corpus.jsonl").write_text(
            '{"docid": "d1", "text": "Alien (1979) was directed by Ridley Scott."}\n'
            '{"docid": "d5", "text": "A new passage."}\n', encoding="utf-8")

        output = load(path)

        assert "1 new passages" in output
        assert "3 passage(s) of the stored corpus are no longer in corpus.jsonl" in output
        assert CorpusPassage.objects.count() == 5


@pytest.mark.django_db
def test_an_r2c2_campaign_with_a_ranking_track_still_needs_pr_and_ac_deadlines(
    tmp_path: Path,
) -> None:
    path = rubric_folder(tmp_path, tracks=[*tracks(), {"slug": "ac", "kind": "ac"}])
    problems = load_error(path)
    assert f"{path}: missing required key 'phases.pr_due'" in problems
    assert f"{path}: missing required key 'phases.ac_due'" in problems


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("overrides", "files", "expected"),
    [
        pytest.param(
            {"tracks": tracks(dpeth=20)}, {},
            "{yaml}: unknown key 'tracks[0].dpeth' (expected one of: slug, kind, "
            "max_runs_per_team, answer_check, second_judge, due, depth, min_grade, label, "
            "cover_k, significance_tests)",
            id="unknown track key",
        ),
        pytest.param(
            {"tracks": tracks(answer_check="gold")}, {},
            "{yaml}: tracks[0].answer_check: 'gold' is not allowed (expected one of: none, "
            "key, llm)",
            id="an AC answer check on a ranking track",
        ),
        pytest.param(
            {"tracks": [*tracks(), {"slug": "ac", "kind": "ac", "answer_check": "key"}],
             "phases": {"topics_release": "2026-08-01T00:00:00+00:00",
                        "pr_due": "2026-08-10T00:00:00+00:00",
                        "ac_due": "2026-08-20T00:00:00+00:00"}}, {},
            "{yaml}: tracks[2].answer_check: 'key' is not allowed (expected one of: nuggets, "
            "gold, both)",
            id="a rubric answer check on an AC track",
        ),
        pytest.param(
            {"tracks": [*tracks(), {"slug": "pr", "kind": "pr", "depth": 20}],
             "phases": {"topics_release": "2026-08-01T00:00:00+00:00",
                        "pr_due": "2026-08-10T00:00:00+00:00",
                        "ac_due": "2026-08-20T00:00:00+00:00"}}, {},
            "{yaml}: tracks[2].depth: applies to ranking and response tracks only (a pr "
            "track is due by phases.pr_due)",
            id="a rubric setting on a PR track",
        ),
        pytest.param(
            {"tracks": [{"slug": "dl", "kind": "ranking"}]}, {},
            "{yaml}: missing required key 'tracks[0].due'",
            id="a ranking track without a deadline",
        ),
        pytest.param(
            {"tracks": tracks(min_grade=6)}, {},
            "{yaml}: tracks[0].min_grade: expected a whole number from 1 to 5, found 6",
            id="a grade past the scale",
        ),
        pytest.param(
            {"tracks": tracks(min_grade=0)}, {},
            "{yaml}: tracks[0].min_grade: expected a whole number from 1 to 5, found 0",
            id="a grade every item reaches",
        ),
        pytest.param(
            {"tracks": tracks(label="sum")}, {},
            "{yaml}: tracks[0].label: 'sum' is not allowed (expected one of: max, count)",
            id="an unknown label",
        ),
        pytest.param(
            {"tracks": tracks(due="2026-07-01T00:00:00+00:00")}, {},
            "{yaml}: tracks[0].due (2026-07-01T00:00:00+00:00) is before "
            "phases.topics_release (2026-08-01T00:00:00+00:00)",
            id="due before the topics",
        ),
        pytest.param(
            {"corpus": "missing.jsonl"}, {},
            "{yaml}: corpus: file 'missing.jsonl' not found (paths are relative to {folder})",
            id="missing corpus",
        ),
        pytest.param(
            {}, {"corpus.jsonl": '{"docid": "d1", "text": "A"}\n{"docid": "d 2", "text": "B"}\n'},
            "{folder}/corpus.jsonl: line 2, docid: found white space in docid 'd 2'; "
            "expected a docid without white space (TREC runs and qrels separate their "
            "fields with it)",
            id="bad corpus line",
        ),
        pytest.param(
            {}, {"corpus.jsonl": '{"docid": "d1", "text": "A"}\n{"docid": "' + "d" * 201
                 + '", "text": "B"}\n'},
            "{folder}/corpus.jsonl: line 2, docid: found a docid of 201 characters; "
            "expected at most 200",
            id="a docid too long to store",
        ),
        pytest.param(
            {}, {"testbank.jsonl": '{"query_id": "q9", "query_text": "?", "items": []}\n'},
            "{folder}/testbank.jsonl: line 1, query_id: found qid 'q9', which is not a query "
            "of this campaign; expected one of its query ids",
            id="bank line for an unknown query",
        ),
        # The test bank's items are held to the caps of the API's (campaign.bank_limits).
        pytest.param(
            {}, {"testbank.jsonl": bank_line("q1", [{"question_id": "q1/a",
                                                     "question_text": "x" * 4001}])},
            "{folder}/testbank.jsonl: line 1, items[0].question_text: found 4001 characters "
            "in the text; expected at most 4000",
            id="a bank item longer than the API takes",
        ),
        pytest.param(
            {}, {"testbank.jsonl": bank_line("q1", [{"question_id": "q1/a", "question_text": "?",
                                                     "answers": ["a"] * 21}])},
            "{folder}/testbank.jsonl: line 1, items[0].answers: found 21 answers; expected at "
            "most 20",
            id="more answers than the API takes",
        ),
        pytest.param(
            {}, {"testbank.jsonl": bank_line("q1", [{"question_id": "q1/a", "question_text": "?",
                                                     "gold_answers": ["a", "y" * 4001]}])},
            "{folder}/testbank.jsonl: line 1, items[0].gold_answers[1]: found 4001 characters "
            "in the answer; expected at most 4000",
            id="an answer longer than the API takes",
        ),
        pytest.param(
            {}, {"testbank.jsonl": bank_line("q1", [{"question_id": "q1/a", "question_text": "?"}])
                 + bank_line("q2", [{"nugget_id": "n" * 201, "nugget_text": "N."}])},
            "{folder}/testbank.jsonl: line 2, items[0].nugget_id: found an item id of 201 "
            "characters; expected at most 200",
            id="an item id too long to store",
        ),
    ],
)
def test_a_bad_rubric_campaign_is_refused_and_nothing_is_stored(
    tmp_path: Path, overrides: dict[str, Any], files: dict[str, str], expected: str
) -> None:
    path = rubric_folder(tmp_path, **overrides)
    for name, content in files.items():
        (path.parent / name).write_text(content, encoding="utf-8")
    problems = load_error(path)
    assert expected.format(yaml=path, folder=path.parent.resolve()) in problems
    assert rubric_state() == [[], [], [], [], []]


@pytest.mark.django_db
def test_a_corpus_is_checked_with_the_file_when_the_file_has_problems_too(
    tmp_path: Path,
) -> None:
    path = rubric_folder(tmp_path, colour="blue")
    (path.parent / "corpus.jsonl").write_text('{"docid": "d1"}\nnot json\n', encoding="utf-8")
    problems = load_error(path)
    assert [problem.split(": ", 1)[1][:24] for problem in problems] == [
        "unknown key 'colour' (ex", "line 1, text: found no '", "line 2, line: found text"]


@pytest.mark.django_db
def test_a_reload_that_changes_a_loaded_passage_is_refused_whole(tmp_path: Path) -> None:
    path = rubric_folder(tmp_path)
    load(path)
    before = rubric_state()
    rubric_folder(tmp_path, title="Renamed")  # the YAML changes too: nothing may apply
    corpus = path.parent / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("Ridley Scott later",
                                                                 "Scott later")
                      + '{"docid": "d9", "text": "New."}\n', encoding="utf-8")

    problems = load_error(path)

    assert problems == [
        f"{corpus.resolve()}: line 3, text: found a new text for docid 'd3'; expected the "
        "text already loaded (a loaded passage keeps its text: runs and grades cite it)"]
    assert rubric_state() == before


@pytest.mark.django_db
def test_a_bank_item_stored_for_another_query_is_refused(tmp_path: Path) -> None:
    path = rubric_folder(tmp_path)
    load(path)
    before = rubric_state()
    bank = path.parent / "testbank.jsonl"
    bank.write_text(json.dumps({
        "query_id": "q2", "query_text": "?", "info": {"prompt_target": "nuggets"},
        "items": [{"nugget_id": "q1/director", "nugget_text": "Moved."}]}) + "\n",
        encoding="utf-8")

    problems = load_error(path)

    assert problems == [f"{bank.resolve()}: line 1: item q1/director of query q2 is stored "
                        "for query q1; expected an item id of its own"]
    assert rubric_state() == before


@pytest.mark.django_db
def test_corpus_missing_answers_in_batched_queries(
    django_assert_num_queries: Any,
) -> None:
    load(RUBRIC / "campaign.yaml")
    campaign = Campaign.objects.get()
    asked = ["d1", "x1", "d4", *[f"y{n}" for n in range(1000)], "d1"]
    with django_assert_num_queries(2):  # 1,002 distinct docids, 900 a query
        missing = corpus_missing(campaign=campaign, docids=asked)
    assert missing == {"x1", *[f"y{n}" for n in range(1000)]}


@pytest.mark.django_db
def test_a_large_corpus_streams_into_the_database_in_flat_memory(tmp_path: Path) -> None:
    lines = 50_000
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as out:
        for n in range(lines):
            out.write(json.dumps({"docid": f"doc{n:06d}", "text": f"Passage {n}. " + "x" * 400})
                      + "\n")
    size = corpus.stat().st_size
    campaign = campaign_load(spec=read_campaign_file(RUBRIC / "campaign.yaml")).campaign

    tracemalloc.start()
    try:
        load_report = corpus_load(campaign=campaign, path=corpus, batch_size=2_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert load_report.problems == []
    assert CorpusPassage.objects.filter(campaign=campaign).count() == lines + 4
    # Held at once: one batch of passages and their rows, and the set of docids seen
    # (about 100 bytes each, submissions/formats/corpus.py): some 7 MB, where the file
    # is 21 MB and a list of all its passages would be more than that.
    assert peak < size / 2, (peak, size)


@pytest.mark.django_db
def test_a_problem_after_stored_batches_leaves_no_passage_and_no_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("campaign.corpus.CORPUS_BATCH", 7)  # 4 batches stored, then line 31
    path = rubric_folder(tmp_path)
    good = "".join(json.dumps({"docid": f"d{n}", "text": "t"}) + "\n" for n in range(30))
    corpus = path.parent / "corpus.jsonl"
    corpus.write_text(good + '{"docid": "d0", "text": "again"}\n', encoding="utf-8")

    problems = load_error(path)

    assert problems == [f"{corpus.resolve()}: line 31, docid: found docid 'd0' again; "
                        "expected each docid once in the corpus"]
    assert rubric_state() == [[], [], [], [], []]
