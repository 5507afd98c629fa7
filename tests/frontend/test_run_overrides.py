"""Organiser overrides of runs and quotas, by persona, on the pages
and in the API: the organiser acts, the run's team cannot but reads the audit line,
another team sees nothing of it, the anonymous are sent to sign in (401 in the API)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks

from campaign.models import Track
from submissions.models import FailureKind, QuotaGrant, Run, RunAction, RunStatus
from submissions.overrides import ALREADY_WITHDRAWN, NOT_GRADED
from tests.grading.rounds import round_failed
from tests.support import Personas, Upload, example, signed_in

pytestmark = pytest.mark.django_db

REASON = "The judge was swapped mid-run; grading it again on the new one."


def api_override(personas: Personas, who: str, run: Run, action: str,
                 reason: str = REASON) -> Any:
    return personas.client(who).post(f"/api/v1/runs/{run.pk}/overrides/",
                                     {"action": action, "reason": reason}, format="json")


def page_override(client: Client, run: Run, action: str, reason: str = REASON) -> Any:
    return client.post(f"/runs/{run.pk}/overrides/", {"action": action, "reason": reason})


# --- the pages ---------------------------------------------------------------------------
def test_an_organiser_withdraws_a_run_on_its_page_and_the_team_reads_why(
    personas: Personas, toy_ac_run: Run
) -> None:
    organiser = signed_in(personas, "organiser")
    form = organiser.get(f"/runs/{toy_ac_run.pk}/overrides/")
    assert form.status_code == 200 and 'name="csrfmiddlewaretoken"' in form.content.decode()

    response = page_override(organiser, toy_ac_run, "withdraw", "Breaks rule 3: a human wrote it.")

    assert response.status_code == 302
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.withdrawn
    line = RunAction.objects.get(run=toy_ac_run)
    assert (line.action, line.by, line.reason) == ("withdraw", personas.organiser,
                                                   "Breaks rule 3: a human wrote it.")
    team_view = signed_in(personas, "participant_a").get(f"/runs/{toy_ac_run.pk}/").content.decode()
    assert "Breaks rule 3: a human wrote it." in team_view and "olga" in team_view
    assert "Withdrawn by the organisers" in team_view
    team_page = signed_in(personas, "participant_a").get("/campaigns/toy/team/").content.decode()
    assert "Breaks rule 3: a human wrote it." in team_page


def test_the_team_cannot_override_its_own_run_on_the_page(
    personas: Personas, toy_ac_run: Run
) -> None:
    client = signed_in(personas, "participant_a")
    assert client.get(f"/runs/{toy_ac_run.pk}/overrides/").status_code == 404
    assert page_override(client, toy_ac_run, "withdraw").status_code == 404
    toy_ac_run.refresh_from_db()
    assert not toy_ac_run.withdrawn and not RunAction.objects.exists()


def test_another_team_sees_no_audit_line_of_a_shared_pr_run(
    personas: Personas, toy_ac_run: Run
) -> None:
    # KYOTO-PG-1 is shared (the toy AC run cites it): team WASEDA sees the run itself.
    shared = Run.objects.get(name="KYOTO-PG-1")
    page_override(signed_in(personas, "organiser"), shared, "withdraw", "Duplicate upload.")

    own = signed_in(personas, "participant_b").get(f"/runs/{shared.pk}/").content.decode()
    other = signed_in(personas, "participant_a").get(f"/runs/{shared.pk}/")
    team_page = signed_in(personas, "participant_a").get("/campaigns/toy/team/").content.decode()

    assert "Duplicate upload." in own
    assert other.status_code == 200 and "Duplicate upload." not in other.content.decode()
    assert "Duplicate upload." not in team_page


def test_another_team_cannot_even_see_an_ac_run_it_does_not_own(
    personas: Personas, toy_ac_run: Run
) -> None:
    client = signed_in(personas, "participant_b")
    assert client.get(f"/runs/{toy_ac_run.pk}/").status_code == 404
    assert page_override(client, toy_ac_run, "withdraw").status_code == 404


def test_the_anonymous_are_sent_to_sign_in(personas: Personas, toy_ac_run: Run) -> None:
    for response in (Client().get(f"/runs/{toy_ac_run.pk}/overrides/"),
                     page_override(Client(), toy_ac_run, "withdraw"),
                     Client().get("/campaigns/toy/quota/")):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    assert not RunAction.objects.exists()


def test_the_page_form_needs_its_csrf_token(personas: Personas, toy_ac_run: Run) -> None:
    organiser = personas.organiser
    assert isinstance(organiser, User)
    client = Client(enforce_csrf_checks=True)
    client.force_login(organiser)
    assert page_override(client, toy_ac_run, "withdraw").status_code == 403
    assert not RunAction.objects.exists()


def test_the_page_refuses_an_empty_reason_beside_the_field(
    personas: Personas, toy_ac_run: Run
) -> None:
    response = page_override(signed_in(personas, "organiser"), toy_ac_run, "withdraw", "  ")
    # The form trims white space, so a blank reason is a missing one.
    assert response.status_code == 400
    assert "Reason (the team reads it): This field is required." in response.content.decode()
    assert not RunAction.objects.exists()


def test_the_page_refuses_a_reason_with_a_control_character(
    personas: Personas, toy_ac_run: Run
) -> None:
    response = page_override(signed_in(personas, "organiser"), toy_ac_run, "withdraw",
                             "bad\x00reason")
    assert response.status_code == 400 and "control character" in response.content.decode()
    assert not RunAction.objects.exists()


def test_an_organiser_grants_extra_runs_on_the_quota_page(
    personas: Personas, toy_ac_run: Run, tracks: dict[str, Track], upload: Upload
) -> None:
    Track.objects.filter(pk=tracks["ac"].pk).update(max_runs_per_team=1)
    organiser = signed_in(personas, "organiser")
    response = organiser.post("/campaigns/toy/quota/", {
        "team": "WASEDA", "track": "ac", "extra_runs": 1, "reason": "Lost a day to our outage."})
    assert response.status_code == 302

    assert upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1")).status_code == 201
    team_a = signed_in(personas, "participant_a").get("/campaigns/toy/team/").content.decode()
    team_b = signed_in(personas, "participant_b").get("/campaigns/toy/team/").content.decode()
    assert "Lost a day to our outage." in team_a and "+1" in team_a
    assert "Lost a day to our outage." not in team_b
    assert signed_in(personas, "participant_a").get("/campaigns/toy/quota/").status_code == 404
    assert signed_in(personas, "participant_a").post("/campaigns/toy/quota/", {
        "team": "WASEDA", "track": "ac", "extra_runs": 5, "reason": "Myself."}
    ).status_code == 404
    assert QuotaGrant.objects.count() == 1


def test_the_dashboard_links_to_the_quota_page(personas: Personas) -> None:
    page = signed_in(personas, "organiser").get("/campaigns/toy/dashboard/").content.decode()
    assert '<a href="/campaigns/toy/quota/" id="quota-link">' in page


# --- the API -----------------------------------------------------------------------------
def test_an_organiser_reruns_a_failed_run_through_the_api(
    personas: Personas, toy_ac_run: Run,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    round_failed(toy_ac_run, "worker went silent")
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = api_override(personas, "organiser", toy_ac_run, "rerun")

    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["run"]["status"] == "queued" and len(body["tasks"]) == 1
    assert body["action"]["by"] == "olga" and body["action"]["reason"] == REASON
    assert len(sent) == 1  # the grading task, sent once the transaction commits
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.status == RunStatus.QUEUED


def test_withdraw_and_restore_queue_scoring_and_flip_the_run(
    personas: Personas, toy_ac_run: Run,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as sent:
        withdrawn = api_override(personas, "organiser", toy_ac_run, "withdraw")
        twice = api_override(personas, "organiser", toy_ac_run, "withdraw")
    assert withdrawn.status_code == 202 and withdrawn.json()["run"]["withdrawn"] is True
    assert twice.status_code == 409
    assert twice.json()["detail"] == ALREADY_WITHDRAWN.format(name="WASEDA-AC-1")
    assert len(sent) == 1  # one scoring: the refused second withdrawal queued nothing

    restored = api_override(personas, "organiser", toy_ac_run, "restore")
    assert restored.status_code == 202 and restored.json()["run"]["withdrawn"] is False
    assert list(RunAction.objects.values_list("action", flat=True)) == ["withdraw", "restore"]


def test_charge_and_refund_need_a_failed_run(personas: Personas, toy_ac_run: Run) -> None:
    not_failed = api_override(personas, "organiser", toy_ac_run, "charge")
    assert not_failed.status_code == 409

    round_failed(toy_ac_run, "judge refused: 400")
    charged = api_override(personas, "organiser", toy_ac_run, "charge")
    refunded = api_override(personas, "organiser", toy_ac_run, "refund")

    assert charged.status_code == 200 and charged.json()["run"]["failure_kind"] == "run"
    assert refunded.status_code == 200
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.failure_kind == FailureKind.PLATFORM


def test_a_pr_run_is_not_rerun(personas: Personas, toy_ac_run: Run) -> None:
    pr_run = Run.objects.get(name="WASEDA-PO-1")
    response = api_override(personas, "organiser", pr_run, "rerun")
    assert response.status_code == 409
    assert response.json()["detail"] == NOT_GRADED.format(name="WASEDA-PO-1")


@pytest.mark.parametrize(("reason", "field_message"), [
    ("", "This field may not be blank."),
    ("a\x07b", "control character"),
    ("x" * 2001, "2001"),
])
def test_the_api_refuses_a_bad_reason(personas: Personas, toy_ac_run: Run, reason: str,
                                      field_message: str) -> None:
    response = api_override(personas, "organiser", toy_ac_run, "withdraw", reason)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "reason"
    assert field_message in response.json()["errors"][0]["message"]
    assert not RunAction.objects.exists()


@pytest.mark.parametrize(("who", "post_status", "get_status"), [
    ("participant_a", 403, 200),  # the team: sees the line, may not act
    ("participant_b", 404, 404),  # another team: as if the run were not there
    ("outsider", 404, 404),
    ("anonymous", 401, 401),
])
def test_only_organisers_override_through_the_api(
    personas: Personas, toy_ac_run: Run, who: str, post_status: int, get_status: int
) -> None:
    api_override(personas, "organiser", toy_ac_run, "withdraw", "Withdrawn for the test.")

    refused = api_override(personas, who, toy_ac_run, "restore")
    lines = personas.client(who).get(f"/api/v1/runs/{toy_ac_run.pk}/overrides/")

    assert refused.status_code == post_status
    assert lines.status_code == get_status
    if get_status == 200:
        assert [(line["action"], line["by"], line["reason"]) for line in lines.json()] == [
            ("withdraw", "olga", "Withdrawn for the test.")]
    toy_ac_run.refresh_from_db()
    assert toy_ac_run.withdrawn and RunAction.objects.count() == 1


def test_another_team_reads_no_override_of_a_shared_pr_run_in_the_api(
    personas: Personas, toy_ac_run: Run
) -> None:
    shared = Run.objects.get(name="KYOTO-PG-1")
    api_override(personas, "organiser", shared, "withdraw", "Duplicate upload.")
    assert personas.client("participant_a").get(f"/api/v1/runs/{shared.pk}/").status_code == 200
    assert personas.client("participant_a").get(
        f"/api/v1/runs/{shared.pk}/overrides/").status_code == 404
    assert personas.client("participant_b").get(
        f"/api/v1/runs/{shared.pk}/overrides/").json()[0]["reason"] == "Duplicate upload."


@pytest.mark.parametrize(("who", "status"), [
    ("participant_a", 403), ("participant_b", 403), ("outsider", 403), ("anonymous", 401)])
def test_only_organisers_grant_extra_runs(personas: Personas, tracks: dict[str, Track],
                                          who: str, status: int) -> None:
    response = personas.client(who).post("/api/v1/campaigns/toy/quota/", {
        "team": "WASEDA", "track": "ac", "extra_runs": 2, "reason": "Please."}, format="json")
    assert response.status_code == status
    assert not QuotaGrant.objects.exists()


def test_the_quota_api_shows_each_team_its_own_standing_and_grants(
    personas: Personas, tracks: dict[str, Track]
) -> None:
    granted = personas.client("organiser").post("/api/v1/campaigns/toy/quota/", {
        "team": "WASEDA", "track": "ac", "extra_runs": 2, "reason": "Our outage."},
        format="json")
    assert granted.status_code == 201, granted.json()
    assert granted.json()["standing"]["limit"] == 6

    def seen(who: str) -> Any:
        return personas.client(who).get("/api/v1/campaigns/toy/quota/")

    organiser, team_a, team_b = seen("organiser").json(), seen("participant_a").json(), \
        seen("participant_b").json()
    assert {(s["team"], s["track"]) for s in organiser["standings"]} == {
        ("KYOTO", "ac"), ("KYOTO", "pr"), ("WASEDA", "ac"), ("WASEDA", "pr")}
    assert [(s["team"], s["track"], s["limit"]) for s in team_a["standings"]] == [
        ("WASEDA", "ac", 6), ("WASEDA", "pr", 4)]
    assert [g["reason"] for g in team_a["grants"]] == ["Our outage."]
    assert {s["team"] for s in team_b["standings"]} == {"KYOTO"} and team_b["grants"] == []
    assert seen("outsider").status_code == 404 and seen("anonymous").status_code == 401


@pytest.mark.parametrize(("body", "field"), [
    ({"team": "NOSUCH", "track": "ac", "extra_runs": 1, "reason": "x"}, "team"),
    ({"team": "WASEDA", "track": "nosuch", "extra_runs": 1, "reason": "x"}, "track"),
    ({"team": "WASEDA", "track": "ac", "extra_runs": 0, "reason": "x"}, "extra_runs"),
    ({"team": "WASEDA", "track": "ac", "extra_runs": 1, "reason": "\x00"}, "reason"),
])
def test_a_bad_grant_is_refused_naming_the_field(
    personas: Personas, tracks: dict[str, Track], body: dict[str, Any], field: str
) -> None:
    response = personas.client("organiser").post("/api/v1/campaigns/toy/quota/", body,
                                                 format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert not QuotaGrant.objects.exists()
