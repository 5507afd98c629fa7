"""The campaign-file reader on its own (no database): each problem's message names the file,
the key path or line, and what was expected; problems come in the order of the keys."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.exceptions import ErrorDetail

from campaign.campaign_file import (
    CampaignFileError,
    TeamSpec,
    TrackSpec,
    read_campaign_file,
)
from campaign.campaign_file.problems import SECTION, UNKNOWN, WHOLE, problems_in
from tests.campaign.test_load_campaign import PHASES, campaign_doc, write_campaign
from tests.campaign.test_load_rubric_campaign import RUBRIC, rubric_folder, tracks


def problems_of(path: Path) -> list[str]:
    with pytest.raises(CampaignFileError) as raised:
        read_campaign_file(path)
    return raised.value.problems


def with_track(index: int, **changes: Any) -> dict[str, Any]:
    doc = campaign_doc()
    doc["tracks"][index].update(changes)
    return doc


R2C2_CASES = [
    pytest.param(campaign_doc(slug="bad slug!"),
                 "slug: 'bad slug!' is not a slug (expected letters, digits, '-' or '_')",
                 id="slug"),
    pytest.param(campaign_doc(slug=5), "slug: expected text, found a number", id="slug type"),
    pytest.param(campaign_doc(description=["a"]), "description: expected text, found a list",
                 id="description type"),
    pytest.param(campaign_doc(phases="soon"), "phases: expected a mapping, found text",
                 id="phases type"),
    pytest.param(campaign_doc(phases=None), "missing required key 'phases'", id="phases null"),
    pytest.param(campaign_doc(phases={**PHASES, "kickoff": "2026-01-01T00:00:00+00:00"}),
                 "unknown key 'phases.kickoff' (expected one of: topics_release, pr_due, ac_due, "
                 "results_release)", id="unknown phase"),
    pytest.param(campaign_doc(phases={**PHASES, "pr_due": None}),
                 "missing required key 'phases.pr_due'", id="pr_due null"),
    pytest.param(campaign_doc(tracks=[]),
                 "tracks: expected a non-empty list of tracks, found a list", id="no tracks"),
    pytest.param(campaign_doc(tracks=["pr"]), "tracks[0]: expected a mapping, found text",
                 id="track type"),
    pytest.param(campaign_doc(tracks=[{"slug": None, "kind": "ac"}]),
                 "missing required key 'tracks[0].slug'", id="track slug null"),
    pytest.param(campaign_doc(tracks=[{"slug": "ac", "kind": 4}]),
                 "tracks[0].kind: expected text, found a number", id="track kind type"),
    pytest.param(campaign_doc(tracks=[{"slug": "ac", "kind": "ac"}, {"slug": "ac", "kind": "pr"}]),
                 "tracks: duplicate track slug 'ac'", id="duplicate track"),
    pytest.param(with_track(0, answer_check="nuggets"),
                 "tracks[0].answer_check: answer_check applies to AC, ranking and response "
                 "tracks only", id="answer check on pr"),
    pytest.param(with_track(0, cover_k=5),
                 "tracks[0].cover_k: applies to ranking and response tracks only (a pr track is "
                 "due by phases.pr_due)", id="rubric setting on pr"),
    pytest.param(with_track(1, max_runs_per_team=True),
                 "tracks[1].max_runs_per_team: expected a whole number of at least 1, found True",
                 id="runs per team a bool"),
    pytest.param(with_track(1, second_judge="vllm"),
                 "tracks[1].second_judge: expected a mapping with base_url and model, found text",
                 id="second judge type"),
    pytest.param(with_track(1, second_judge={"base_url": "http://a"}),
                 "missing required key 'tracks[1].second_judge.model'", id="second judge model"),
    pytest.param(with_track(1, second_judge={"base_url": "", "model": "m"}),
                 "missing required key 'tracks[1].second_judge.base_url'",
                 id="second judge empty url"),
    pytest.param(with_track(1, second_judge={"base_url": "http://a", "model": "m", "key": 1}),
                 "unknown key 'tracks[1].second_judge.key' (expected one of: base_url, model)",
                 id="second judge key"),
    pytest.param(campaign_doc(organisers="olga"),
                 "organisers: expected a list of usernames, found text", id="organisers type"),
    pytest.param(campaign_doc(organisers=["olga", "a b"]),
                 "organisers: 'a b' is not a username (expected letters, digits and @.+-_)",
                 id="organiser name"),
    pytest.param(campaign_doc(teams={"name": "A"}), "teams: expected a list of teams, found a "
                 "mapping", id="teams type"),
    pytest.param(campaign_doc(teams=["A"]), "teams[0]: expected a mapping, found text",
                 id="team type"),
    pytest.param(campaign_doc(teams=[{"members": ["x"]}]), "missing required key 'teams[0].name'",
                 id="team without name"),
    pytest.param(campaign_doc(teams=[{"name": 5}]), "teams[0].name: expected text, found a number",
                 id="team name type"),
    pytest.param(campaign_doc(teams=[{"name": "A", "captain": "x"}]),
                 "unknown key 'teams[0].captain' (expected one of: name, members)",
                 id="team key"),
    pytest.param(campaign_doc(teams=[{"name": "A", "members": ["a b"]}]),
                 "teams[0].members: 'a b' is not a username (expected letters, digits and @.+-_)",
                 id="member name"),
    pytest.param(campaign_doc(teams=[{"name": "A"}, {"name": "A"}]),
                 "teams: duplicate team name 'A'", id="duplicate team"),
    pytest.param(campaign_doc(teams=[{"name": "A", "members": ["olga"]}]),
                 "teams: user 'olga' is an organiser and cannot be in team A",
                 id="organiser in a team"),
    pytest.param(campaign_doc(judge_thresholds=["x"]),
                 "judge_thresholds: expected a mapping, found a list", id="thresholds type"),
    pytest.param(campaign_doc(judge_thresholds={"bogus_recall": None}),
                 "judge_thresholds.bogus_recall: expected a number from 0 to 1, found None",
                 id="threshold null"),
    pytest.param(campaign_doc(agreement_target=2),
                 "agreement_target: expected a number from 0 to 1, found 2", id="target"),
    pytest.param(campaign_doc(agreement_risk=True),
                 "agreement_risk: expected a number from 0 to 1, found True", id="risk a bool"),
    pytest.param(campaign_doc(questions=5), "questions: expected a file path, found a number",
                 id="questions type"),
    pytest.param(campaign_doc(categories="cats.txt"),
                 "categories: file 'cats.txt' not found (paths are relative to {folder})",
                 id="categories missing"),
]


@pytest.mark.parametrize(("doc", "expected"), R2C2_CASES)
def test_a_problem_names_its_key_and_what_was_expected(
    tmp_path: Path, doc: dict[str, Any], expected: str
) -> None:
    path = write_campaign(tmp_path, doc)
    assert f"{path}: {expected.format(folder=tmp_path)}" in problems_of(path)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param({"depth": "20"},
                     "tracks[0].depth: expected a whole number from 1 to 1000, found '20'",
                     id="depth as text"),
        pytest.param({"cover_k": 1001},
                     "tracks[0].cover_k: expected a whole number from 1 to 1000, found 1001",
                     id="cover_k too deep"),
        pytest.param({"label": None},
                     "tracks[0].label: 'None' is not allowed (expected one of: max, count)",
                     id="label null"),
        pytest.param({"due": "soon"},
                     "tracks[0].due: 'soon' is not an ISO 8601 date-time with a UTC offset "
                     "(expected e.g. 2026-03-13T00:00:00+09:00)", id="due not a date"),
        pytest.param({"due": "2026-11-01T00:00:00+00:00"},
                     "tracks[0].due (2026-11-01T00:00:00+00:00) is after "
                     "phases.results_release (2026-10-01T00:00:00+00:00)", id="due after results"),
    ],
)
def test_a_ranking_tracks_problem_names_its_key(
    tmp_path: Path, changes: dict[str, Any], expected: str
) -> None:
    path = rubric_folder(tmp_path, tracks=tracks(**changes))
    assert f"{path}: {expected}" in problems_of(path)


def test_a_tracks_deadline_is_named_by_its_index_after_an_unreadable_track(
    tmp_path: Path,
) -> None:
    path = rubric_folder(tmp_path, tracks=[{"slug": "x", "kind": "passages"},
                                           *tracks(due="2026-07-01T00:00:00+00:00")])
    assert problems_of(path)[-1] == (
        f"{path}: tracks[1].due (2026-07-01T00:00:00+00:00) is before phases.topics_release "
        "(2026-08-01T00:00:00+00:00)")


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"corpus": None}, "{yaml}: corpus: expected a file path, found nothing",
                     id="corpus null"),
        pytest.param({"test_bank": "bank.jsonl"},
                     "{yaml}: test_bank: file 'bank.jsonl' not found (paths are relative to "
                     "{folder})", id="test bank missing"),
    ],
)
def test_a_rubric_data_file_problem_names_its_key(
    tmp_path: Path, overrides: dict[str, Any], expected: str
) -> None:
    path = rubric_folder(tmp_path, **overrides)
    assert expected.format(yaml=path, folder=path.parent) in problems_of(path)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param({"questions.txt": "\n"},
                     ["{folder}/questions.txt: no questions (expected '[qID];[Question]' lines)"],
                     id="no questions"),
        pytest.param({"gold.txt": b"D001;\xff\n"},
                     ["{folder}/gold.txt: not UTF-8 text (invalid start byte)"], id="gold bytes"),
        pytest.param({"cats.txt": "D009;simple\nD001 simple\n"},
                     ["{folder}/cats.txt: line 1: qID 'D009' is not in questions.txt",
                      "{folder}/cats.txt: line 2: expected '[qID];[category]', found "
                      "'D001 simple'"], id="category lines"),
    ],
)
def test_a_question_files_problem_names_its_file_and_line(
    tmp_path: Path, files: dict[str, str | bytes], expected: list[str]
) -> None:
    path = write_campaign(tmp_path, campaign_doc(categories="cats.txt"),
                          gold="D001;x\nD002;y\n")
    (tmp_path / "cats.txt").write_text("D001;simple\n", encoding="utf-8")
    for name, content in files.items():
        if isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content, encoding="utf-8")
    problems = problems_of(path)
    for message in expected:
        assert message.format(folder=tmp_path.resolve()) in problems


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "{yaml}: expected a mapping of campaign settings, found nothing"),
        (b"slug: \xff\n", "{yaml}: not UTF-8 text (invalid start byte)"),
    ],
    ids=["empty", "not UTF-8"],
)
def test_a_file_that_is_no_campaign_is_one_problem(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    path = tmp_path / "campaign.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    assert problems_of(path) == [expected.format(yaml=path)]


def test_problems_come_in_the_order_of_the_keys(tmp_path: Path) -> None:
    doc = campaign_doc(colour="blue", slug="a b", review_below=3,
                       tracks=[{"slug": "pr", "kind": "pr", "label": "max"},
                               {"slug": "pr", "kind": "ac"}],
                       teams=[{"name": "A", "members": ["olga", "x"]}, {"name": "B",
                                                                         "members": ["x"]}])
    doc.pop("title")
    path = write_campaign(tmp_path, doc, questions="D001;A\nD001;B\nbroken\n")
    assert [problem.split(": ", 1)[1] for problem in problems_of(path)] == [
        "unknown key 'colour' (expected one of: slug, title, description, timezone, phases, "
        "tracks, questions, categories, gold_answers, organisers, teams, review_below, "
        "judge_thresholds, agreement_target, agreement_risk, corpus, test_bank)",
        "slug: 'a b' is not a slug (expected letters, digits, '-' or '_')",
        "missing required key 'title'",
        "tracks[0].label: applies to ranking and response tracks only (a pr track is due by "
        "phases.pr_due)",
        "tracks: duplicate track slug 'pr'",
        "line 2: duplicate qID 'D001' (first on line 1)",
        "line 3: expected '[qID];[Question]', found 'broken'",
        "line 2: qID 'D002' is not in questions.txt",
        "line 3: qID 'D002' is not in questions.txt",
        "teams: user 'olga' is an organiser and cannot be in team A",
        "teams: user 'x' is in both A and B",
        "review_below: expected a number from 0 to 1, found 3",
    ]


def test_the_test_banks_text_cap_is_the_apis_setting(tmp_path: Path) -> None:
    path = rubric_folder(tmp_path)
    with override_settings(MAX_ANSWER_CHARS=20):
        problems = problems_of(path)
    assert problems == [f"{path.parent.resolve()}/testbank.jsonl: line {line}, items[{index}]."
                        f"{key}: found {length} characters in the text; expected at most 20"
                        for line, index, key, length in ((1, 1, "question_text", 24),
                                                         (2, 0, "nugget_text", 61))]


def test_a_good_file_reads_into_its_spec() -> None:
    spec = read_campaign_file(RUBRIC / "campaign.yaml")
    assert spec.tracks == (
        TrackSpec(slug="dl", kind="ranking", max_runs_per_team=5, answer_check="key",
                  due=datetime(2026, 9, 1, 23, 59, 59, tzinfo=UTC)),
        TrackSpec(slug="gen", kind="response", max_runs_per_team=5, answer_check="none",
                  due=datetime(2026, 9, 8, 23, 59, 59, tzinfo=UTC)),
    )
    assert spec.phases["pr_due"] is None and spec.organisers == ("olga",)
    assert spec.teams == (TeamSpec("WASEDA", ("alice",)), TeamSpec("KYOTO", ("bob",)))
    assert (spec.review_below, spec.agreement_target, spec.judge_thresholds) == (0.8, 0.9, {})
    assert spec.test_bank_file == (RUBRIC / "testbank.jsonl").resolve()
    assert [bank.query_id for bank in spec.test_bank] == ["q1", "q2"]


def test_serializer_errors_are_laid_out_with_their_key_paths() -> None:
    detail = {
        "colour": [ErrorDetail("slug, title", code=UNKNOWN)],
        "tracks": {2: {"cover_k": [ErrorDetail("expected a whole number", code="invalid")],
                       "due": [ErrorDetail("This field is required.", code="required")]},
                   SECTION: [ErrorDetail("duplicate track slug 'ac'", code="invalid")]},
        "questions": [ErrorDetail("q.txt: line 3: duplicate qID 'D1'", code=WHOLE)],
        SECTION: [ErrorDetail("expected a mapping", code="invalid")],
    }
    assert problems_in(detail, Path("c.yaml")) == [
        "c.yaml: unknown key 'colour' (expected one of: slug, title)",
        "c.yaml: tracks[2].cover_k: expected a whole number",
        "c.yaml: missing required key 'tracks[2].due'",
        "c.yaml: tracks: duplicate track slug 'ac'",
        "q.txt: line 3: duplicate qID 'D1'",
        "c.yaml: expected a mapping",
    ]
