"""`manage.py load_campaign`: create, reload, and every bad-file message."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command

from campaign.models import Campaign, GoldAnswer, Membership, Question, Role, Team, Track
from tests.support import example

QUESTIONS = "D001;Who directed Alien?\nD002;When was Toy Story released?\n"


def campaign_doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "slug": "ntcir19-r2c2",
        "title": "NTCIR-19 R2C2",
        "timezone": "Asia/Tokyo",
        "phases": {
            "topics_release": "2026-03-13T00:00:00+09:00",
            "pr_due": "2026-04-17T23:59:59+09:00",
            "ac_due": "2026-05-15T23:59:59+09:00",
            "results_release": "2026-08-01T00:00:00+09:00",
        },
        "tracks": [
            {"slug": "pr", "kind": "pr", "max_runs_per_team": 4},
            {"slug": "ac", "kind": "ac", "max_runs_per_team": 4, "answer_check": "nuggets"},
        ],
        "questions": "questions.txt",
        "gold_answers": "gold.txt",
        "organisers": ["olga"],
        "teams": [{"name": "WASEDA", "members": ["alice"]}, {"name": "KYOTO", "members": ["bob"]}],
    }
    doc.update(overrides)
    return doc


def write_campaign(
    folder: Path, doc: dict[str, Any] | None = None, questions: str = QUESTIONS,
    gold: str = "D001;Ridley Scott\nD002;1995\nD002;November 1995\n",
) -> Path:
    (folder / "questions.txt").write_text(questions, encoding="utf-8")
    (folder / "gold.txt").write_text(gold, encoding="utf-8")
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(doc or campaign_doc(), sort_keys=False), encoding="utf-8")
    return path


def load(path: Path) -> str:
    out = StringIO()
    call_command("load_campaign", str(path), stdout=out, stderr=out)
    return out.getvalue()


def load_error(path: Path) -> list[str]:
    with pytest.raises(CommandError) as raised:
        load(path)
    lines = str(raised.value).splitlines()
    assert "not loaded, nothing changed" in lines[0]
    return [line.strip() for line in lines[1:]]


def database_state() -> list[Any]:
    return [
        list(Campaign.objects.values("slug", "title", "timezone", "topics_release", "pr_due",
                                     "ac_due", "results_release", "updated_at")),
        list(Track.objects.values_list("slug", "kind", "max_runs_per_team", "answer_check")),
        list(Question.objects.values_list("id", "qid", "text", "position")),
        list(GoldAnswer.objects.values_list("question__qid", "text")),
        list(Team.objects.values_list("id", "name")),
        list(Membership.objects.values_list("id", "user__username", "role", "team__name")),
    ]


@pytest.mark.django_db
class TestLoadingAGoodFile:
    def test_it_creates_the_campaign_with_everything_the_file_names(self, tmp_path: Path) -> None:
        output = load(write_campaign(tmp_path))

        campaign = Campaign.objects.get(slug="ntcir19-r2c2")
        assert "Campaign ntcir19-r2c2 created" in output
        assert campaign.timezone == "Asia/Tokyo"
        assert campaign.pr_due.isoformat() == "2026-04-17T14:59:59+00:00"
        assert sorted(campaign.tracks.values_list("slug", "kind")) == [("ac", "ac"), ("pr", "pr")]
        assert list(campaign.questions.values_list("qid", "text")) == [
            ("D001", "Who directed Alien?"), ("D002", "When was Toy Story released?"),
        ]
        gold = GoldAnswer.objects.filter(question__qid="D002").values_list("text", flat=True)
        assert list(gold) == ["1995", "November 1995"]
        roles = set(Membership.objects.values_list("user__username", "role", "team__name"))
        assert roles == {("olga", Role.ORGANISER, None), ("alice", Role.PARTICIPANT, "WASEDA"),
                         ("bob", Role.PARTICIPANT, "KYOTO")}

    def test_a_track_may_name_a_second_judge(self, tmp_path: Path) -> None:
        doc = campaign_doc()
        doc["tracks"][1]["second_judge"] = {"base_url": "http://vllm-b:8000/v1",
                                            "model": "Qwen/Qwen2.5-7B-Instruct"}
        load(write_campaign(tmp_path, doc))
        track = Track.objects.get(slug="ac")
        assert (track.second_judge_base_url, track.second_judge_model) == (
            "http://vllm-b:8000/v1", "Qwen/Qwen2.5-7B-Instruct")

    def test_a_track_may_pick_measures_to_test_besides_its_ranking_measure(
        self, tmp_path: Path
    ) -> None:
        doc = campaign_doc()
        doc["tracks"][1]["significance_tests"] = ["nugget_precision", "accuracy"]
        load(write_campaign(tmp_path, doc))
        assert Track.objects.get(slug="ac").significance_tests == ["nugget_precision",
                                                                   "accuracy"]
        assert Track.objects.get(slug="pr").significance_tests == []

    def test_new_users_cannot_sign_in_until_given_a_password(self, tmp_path: Path) -> None:
        load(write_campaign(tmp_path))
        alice = Membership.objects.get(user__username="alice").user
        assert not alice.has_usable_password()

    def test_loading_the_same_file_twice_changes_nothing(self, tmp_path: Path) -> None:
        path = write_campaign(tmp_path)
        load(path)
        before = database_state()
        output = load(path)
        assert "updated" in output and "0 new questions, 0 changed questions" in output
        after = database_state()
        assert after[1:] == before[1:]
        # Only the campaign's own "updated_at" stamp may move.
        for row in after[0] + before[0]:
            row.pop("updated_at")
        assert after[0] == before[0]

    def test_a_reload_updates_what_changed_and_keeps_what_the_file_dropped(
        self, tmp_path: Path
    ) -> None:
        load(write_campaign(tmp_path))
        question_ids = dict(Question.objects.values_list("qid", "id"))
        doc = campaign_doc(title="NTCIR-19 R2C2 (revised)", teams=[
            {"name": "WASEDA", "members": ["alice", "bob"]},
        ])
        doc["phases"]["ac_due"] = "2026-05-22T23:59:59+09:00"
        doc["tracks"][1]["max_runs_per_team"] = 2
        path = write_campaign(tmp_path, doc, questions="D001;Who directed Alien (1979)?\n",
                              gold="D001;Ridley Scott\n")

        out = StringIO()
        call_command("load_campaign", str(path), stdout=out, stderr=out)

        campaign = Campaign.objects.get()
        assert campaign.title == "NTCIR-19 R2C2 (revised)"
        assert campaign.ac_due.isoformat() == "2026-05-22T14:59:59+00:00"
        assert Track.objects.get(slug="ac").max_runs_per_team == 2
        # Same rows updated in place, so runs citing them keep their references.
        assert Question.objects.get(qid="D001").id == question_ids["D001"]
        assert Question.objects.get(qid="D001").text == "Who directed Alien (1979)?"
        assert Question.objects.filter(qid="D002").exists()
        assert "question D002 is no longer in the questions file" in out.getvalue()
        assert "team KYOTO is no longer in the file" in out.getvalue()
        assert Team.objects.filter(name="KYOTO").exists()
        bob = Membership.objects.select_related("team").get(user__username="bob")
        assert bob.team is not None and bob.team.name == "WASEDA"

    def test_a_member_dropped_from_the_file_loses_the_role(self, tmp_path: Path) -> None:
        load(write_campaign(tmp_path))
        load(write_campaign(tmp_path, campaign_doc(organisers=[])))
        assert not Membership.objects.filter(user__username="olga").exists()

    def test_a_failure_while_writing_leaves_nothing_half_applied(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        load(write_campaign(tmp_path))
        before = database_state()

        def fail(*args: Any) -> None:
            raise RuntimeError("disk full")

        monkeypatch.setattr("campaign.services._load_people", fail)
        doc = campaign_doc(title="Changed")
        with pytest.raises(RuntimeError):
            load(write_campaign(tmp_path, doc, questions=QUESTIONS + "D003;New?\n"))
        assert database_state() == before


PHASES = campaign_doc()["phases"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            {"doc": campaign_doc(colour="blue")},
            "{yaml}: unknown key 'colour' (expected one of: slug, title, description, timezone, "
            "phases, tracks, questions, categories, gold_answers, organisers, teams, "
            "review_below, judge_thresholds, agreement_target, agreement_risk, corpus, test_bank)",
            id="unknown key",
        ),
        pytest.param(
            {"doc": campaign_doc(review_below=1.5)},
            "{yaml}: review_below: expected a number from 0 to 1, found 1.5",
            id="review threshold over 1",
        ),
        pytest.param(
            {"doc": campaign_doc(judge_thresholds={"entailment_accuracy": "high",
                                                   "accuracy": 0.9})},
            "{yaml}: judge_thresholds.entailment_accuracy: expected a number from 0 to 1, "
            "found 'high'",
            id="judge threshold not a number",
        ),
        pytest.param(
            {"doc": campaign_doc(judge_thresholds={"accuracy": 0.9})},
            "{yaml}: unknown key 'judge_thresholds.accuracy' (expected one of: "
            "entailment_accuracy, entailment_kappa, bogus_recall, answer_gold_accuracy, "
            "answer_gold_exact_relevant_set, answer_nuggets_accuracy, "
            "answer_nuggets_exact_relevant_set)",
            id="judge threshold unknown",
        ),
        pytest.param(
            {"doc": campaign_doc(phases={**PHASES, "pr_due": "2026-04-31T23:59:59+09:00"})},
            "{yaml}: phases.pr_due: '2026-04-31T23:59:59+09:00' is not an ISO 8601 date-time "
            "with a UTC offset (expected e.g. 2026-03-13T00:00:00+09:00)",
            id="bad date",
        ),
        pytest.param(
            {"doc": campaign_doc(phases={**PHASES, "ac_due": "2026-05-15T23:59:59"})},
            "{yaml}: phases.ac_due: '2026-05-15T23:59:59' is not an ISO 8601 date-time "
            "with a UTC offset (expected e.g. 2026-03-13T00:00:00+09:00)",
            id="date without offset",
        ),
        pytest.param(
            {"doc": campaign_doc(phases={**PHASES, "pr_due": "2026-06-01T00:00:00+09:00"})},
            "{yaml}: phases: ac_due (2026-05-15T23:59:59+09:00) is before pr_due "
            "(2026-06-01T00:00:00+09:00)",
            id="phases out of order",
        ),
        pytest.param(
            {"doc": campaign_doc(questions="topics/missing.txt")},
            "{yaml}: questions: file 'topics/missing.txt' not found (paths are relative to "
            "{folder})",
            id="missing questions file",
        ),
        pytest.param(
            {"questions": "D001;Who directed Alien?\nD002;Q2\nD001;Again?\n"},
            "{folder}/questions.txt: line 3: duplicate qID 'D001' (first on line 1)",
            id="duplicate qID",
        ),
        pytest.param(
            {"questions": "D001;Who directed Alien?\nD002 When was Toy Story released?\n"},
            "{folder}/questions.txt: line 2: expected '[qID];[Question]', found "
            "'D002 When was Toy Story released?'",
            id="malformed question line",
        ),
        pytest.param(
            {"questions": "D001;Who directed Alien?\nD 2;Spaces?\n"},
            "{folder}/questions.txt: line 2: qID 'D 2' must be 1-64 characters without spaces "
            "or ';'",
            id="qID with a space",
        ),
        pytest.param(
            {"gold": "D009;Ridley Scott\n"},
            "{folder}/gold.txt: line 1: qID 'D009' is not in questions.txt",
            id="gold answer for an unknown question",
        ),
        pytest.param(
            {"doc": campaign_doc(timezone="Tokyo/Japan")},
            "{yaml}: timezone: 'Tokyo/Japan' is not an IANA time zone (expected e.g. Asia/Tokyo)",
            id="unknown time zone",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "pr", "kind": "passages"}])},
            "{yaml}: tracks[0].kind: 'passages' is not allowed (expected one of: pr, ac, ranking, "
            "response)",
            id="unknown track kind",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "ac", "kind": "ac", "max_runs_per_team": 0}])},
            "{yaml}: tracks[0].max_runs_per_team: expected a whole number of at least 1, found 0",
            id="zero runs per team",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "ac", "kind": "ac", "answer_check": "llm"}])},
            "{yaml}: tracks[0].answer_check: 'llm' is not allowed (expected one of: nuggets, "
            "gold, both)",
            id="unknown answer check",
        ),
        pytest.param(
            {"doc": campaign_doc(teams=[{"name": "A", "members": ["x"]},
                                        {"name": "B", "members": ["x"]}])},
            "{yaml}: teams: user 'x' is in both A and B",
            id="user in two teams",
        ),
        pytest.param(
            {"doc": campaign_doc(teams=[{"name": "WASEDA 1", "members": []}])},
            "{yaml}: teams[0].name: 'WASEDA 1' is not a team name (expected letters, digits, "
            "'_' and '-', starting with a letter or digit, at most 64)",
            id="team name with a space",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "ac", "kind": "ac", "second_judge": {
                "base_url": "vllm:8000", "model": "m"}}])},
            "{yaml}: tracks[0].second_judge.base_url: 'vllm:8000' is not an http(s) URL "
            "(expected e.g. http://vllm:8000/v1)",
            id="second judge without a URL scheme",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "ac", "kind": "ac",
                                          "significance_tests": ["ece"]}])},
            "{yaml}: tracks[0].significance_tests: 'ece' cannot be tested on an ac track "
            "(expected one of: accuracy, nugget_precision, r_o, r_u; hmr, the ranking "
            "measure, always is)",
            id="a measure no randomised test can take",
        ),
        pytest.param(
            {"doc": campaign_doc(tracks=[{"slug": "pr", "kind": "pr",
                                          "significance_tests": "ndcg@20"}])},
            "{yaml}: tracks[0].significance_tests: expected a list of measure names, found "
            "text",
            id="significance tests not a list",
        ),
        pytest.param(
            {"doc": {k: v for k, v in campaign_doc().items() if k != "title"}},
            "{yaml}: missing required key 'title'",
            id="missing title",
        ),
    ],
)
def test_a_bad_file_is_refused_with_a_message_naming_the_problem(
    tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    path = write_campaign(tmp_path, **change)
    problems = load_error(path)
    assert expected.format(yaml=path, folder=tmp_path.resolve()) in problems
    assert not Campaign.objects.exists()


@pytest.mark.django_db
def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    doc = campaign_doc(colour="blue", timezone="Nowhere")
    path = write_campaign(tmp_path, doc, questions="D001;A\nD001;B\nbroken\nD002;C\n")
    problems = load_error(path)
    assert [p.split(": ", 1)[1][:24] for p in problems] == [
        "unknown key 'colour' (ex",
        "timezone: 'Nowhere' is n",
        "line 2: duplicate qID 'D",
        "line 3: expected '[qID];",
    ]


@pytest.mark.django_db
def test_a_bad_reload_leaves_the_loaded_campaign_untouched(tmp_path: Path) -> None:
    load(write_campaign(tmp_path))
    before = database_state()
    load_error(write_campaign(tmp_path, campaign_doc(title="New"), questions="D001;A\nD001;B\n"))
    assert database_state() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("slug: [unclosed\n", "{yaml}: line 2: not valid YAML (expected ',' or ']', but got "
                              "'<stream end>')"),
        ("- just\n- a list\n", "{yaml}: expected a mapping of campaign settings, found a list"),
    ],
    ids=["yaml syntax", "not a mapping"],
)
def test_a_file_that_is_not_a_campaign_is_refused(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "campaign.yaml"
    path.write_text(content, encoding="utf-8")
    assert load_error(path) == [expected.format(yaml=path)]


@pytest.mark.django_db
def test_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert load_error(path) == [f"{path}: no such file"]


@pytest.mark.django_db
def test_the_toy_campaigns_questions_and_gold_answers_load(tmp_path: Path) -> None:
    # tests/data/toy is in the official formats; its gold.txt accepts two answers for D001.
    load(write_campaign(tmp_path, questions=example("questions.txt").decode(),
                        gold=example("gold.txt").decode()))
    assert list(Question.objects.values_list("qid", "text")) == [
        ("D001", "Which space agency made the first soft landing on the far side of the Moon?"),
        ("D002", "Who was the first person to walk on the Moon?"),
        ("D003", "Which planet has the larger diameter: Mars or Mercury?"),
    ]
    assert list(GoldAnswer.objects.order_by("question__qid", "id")
                .values_list("question__qid", "text")) == [
        ("D001", "China National Space Administration"), ("D001", "CNSA"),
        ("D002", "Neil Armstrong"), ("D003", "Mars"),
    ]


@pytest.mark.django_db
def test_the_demo_campaign_loads(tmp_path: Path) -> None:
    demo = Path(__file__).resolve().parents[2] / "demo" / "campaign.yaml"
    load(demo)
    campaign = Campaign.objects.get(slug="demo-movies")
    assert campaign.questions.count() == 10
    assert set(campaign.questions.values_list("category", flat=True)) == {
        "simple", "multi-hop", "comparison", "aggregation",
    }
