"""Quota refunds: a run whose grading failed for a platform reason
does not count against its team's quota; one charged to the run, by an organiser, does.
Withdrawn runs do not count either, and grants raise the limit; an R2C2 team's run
numbers grow with what does not count."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from campaign.models import Track
from submissions.checks import BAD_RUN_NUMBER, TOO_MANY_RUNS
from submissions.models import FailureKind, Run, RunActionKind, RunStatus
from submissions.overrides import run_action_record
from submissions.quota import QUOTA_COUNTED, QUOTA_REFUNDED, QUOTA_WITHDRAWN, quota_standing
from tests.grading.rounds import round_failed, round_graded
from tests.support import Personas, Upload, example, make_zip

pytestmark = pytest.mark.django_db

JUDGE_DOWN = "the judge at http://127.0.0.1:9/v1 did not answer: connection refused"


def fail_grading(run: Run, reason: str = JUDGE_DOWN) -> None:
    """End a grading of `run` in failure, as a worker whose judge went down does."""
    round_failed(run, reason)
    assert run.status == RunStatus.FAILED


@pytest.fixture
def one_ac_run_each(toy_ac_run: Run, tracks: dict[str, Track]) -> Run:
    """The AC track allows one run per team; WASEDA's is WASEDA-AC-1."""
    Track.objects.filter(pk=tracks["ac"].pk).update(max_runs_per_team=1)
    return toy_ac_run


def refused_number(name: str, highest: int, why: str = "") -> str:
    return BAD_RUN_NUMBER.format(name=name, number=int(name.rsplit("-", 1)[1]),
                                 max_runs=highest, track="ac") + why


def test_without_a_failure_the_next_number_is_refused_as_before(
    one_ac_run_each: Run, upload: Upload
) -> None:
    response = upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1"))
    assert response.status_code == 400
    assert response.json()["detail"] == refused_number("WASEDA-AC-2", 1)


def test_a_run_failed_by_the_platform_lets_the_team_upload_one_more(
    one_ac_run_each: Run, upload: Upload
) -> None:
    fail_grading(one_ac_run_each)
    assert one_ac_run_each.failure_kind == FailureKind.PLATFORM

    second = upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1"))
    third = upload("participant_a", "WASEDA-AC-3", example("WASEDA-AC-1"))

    assert second.status_code == 201, second.json()
    why = (" (" + QUOTA_COUNTED.format(count=1, limit=1, max_runs=1, granted=0) + "; "
           + QUOTA_REFUNDED.format(count=1, runs=f"WASEDA-AC-1 ({JUDGE_DOWN})") + ")")
    assert third.status_code == 400
    assert third.json()["detail"] == refused_number("WASEDA-AC-3", 2, why)
    assert set(Run.objects.current().filter(track__slug="ac").values_list("name", flat=True)) \
        == {"WASEDA-AC-1", "WASEDA-AC-2"}


def test_the_refund_is_used_up_so_replacing_the_failed_run_is_refused(
    one_ac_run_each: Run, upload: Upload
) -> None:
    fail_grading(one_ac_run_each)
    assert upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1")).status_code == 201

    again = upload("participant_a", "WASEDA-AC-1", example("WASEDA-AC-1"))

    why = (" (" + QUOTA_COUNTED.format(count=1, limit=1, max_runs=1, granted=0) + "; "
           + QUOTA_REFUNDED.format(count=1, runs=f"WASEDA-AC-1 ({JUDGE_DOWN})") + ")")
    assert again.status_code == 409
    assert again.json()["detail"] == TOO_MANY_RUNS.format(
        team="WASEDA", count=1, track="ac", names="WASEDA-AC-2", max_runs=1) + why


def test_a_failure_charged_to_the_run_counts_against_the_quota(
    one_ac_run_each: Run, upload: Upload, personas: Personas
) -> None:
    fail_grading(one_ac_run_each)
    run_action_record(run=one_ac_run_each, action=RunActionKind.CHARGE,
                      user=personas.organiser, reason="Its answers break the prompt on purpose.")

    response = upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1"))

    assert response.status_code == 400
    assert response.json()["detail"] == refused_number("WASEDA-AC-2", 1)


def test_a_refund_given_back_after_a_charge_frees_the_number_again(
    one_ac_run_each: Run, upload: Upload, personas: Personas
) -> None:
    fail_grading(one_ac_run_each)
    for action in (RunActionKind.CHARGE, RunActionKind.REFUND):
        run_action_record(run=one_ac_run_each, action=action, user=personas.organiser,
                          reason="Second thoughts.")
    assert upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1")).status_code == 201


def test_a_run_graded_again_successfully_counts_again(
    one_ac_run_each: Run, personas: Personas
) -> None:
    fail_grading(one_ac_run_each)
    track, team = one_ac_run_each.track, one_ac_run_each.team
    assert quota_standing(track=track, team=team).counted == ()

    round_graded(one_ac_run_each, token="task-2")

    standing = quota_standing(track=track, team=team)
    assert standing.counted == ("WASEDA-AC-1",) and standing.refunded == ()
    assert standing.highest_number == 1


def test_a_withdrawn_run_does_not_count_until_it_is_restored(
    one_ac_run_each: Run, upload: Upload, personas: Personas
) -> None:
    run_action_record(run=one_ac_run_each, action=RunActionKind.WITHDRAW,
                      user=personas.organiser, reason="Sent by mistake, the team says.")
    standing = quota_standing(track=one_ac_run_each.track, team=one_ac_run_each.team)
    assert standing.withdrawn == ("WASEDA-AC-1",) and standing.highest_number == 2

    assert upload("participant_a", "WASEDA-AC-2", example("WASEDA-AC-1")).status_code == 201
    run_action_record(run=one_ac_run_each, action=RunActionKind.RESTORE,
                      user=personas.organiser, reason="Withdrawn in error.")
    third = upload("participant_a", "WASEDA-AC-3", example("WASEDA-AC-1"))

    # Both count now, over the limit of one: no number is free.
    assert third.status_code == 400
    assert third.json()["detail"] == refused_number("WASEDA-AC-3", 1)


def test_the_refusal_names_the_withdrawn_runs(
    one_ac_run_each: Run, upload: Upload, personas: Personas
) -> None:
    run_action_record(run=one_ac_run_each, action=RunActionKind.WITHDRAW,
                      user=personas.organiser, reason="Duplicate of another run.")
    response = upload("participant_a", "WASEDA-AC-3", example("WASEDA-AC-1"))
    why = (" (" + QUOTA_COUNTED.format(count=0, limit=1, max_runs=1, granted=0) + "; "
           + QUOTA_WITHDRAWN.format(count=1, names="WASEDA-AC-1") + ")")
    assert response.json()["detail"] == refused_number("WASEDA-AC-3", 2, why)


def test_another_teams_refund_is_not_yours(one_ac_run_each: Run, upload: Upload) -> None:
    fail_grading(one_ac_run_each)
    first = upload("participant_b", "KYOTO-AC-1", example("WASEDA-AC-1"))
    second = upload("participant_b", "KYOTO-AC-2", example("WASEDA-AC-1"))
    assert first.status_code == 201, first.json()
    assert second.status_code == 400
    assert second.json()["detail"] == refused_number("KYOTO-AC-2", 1)


def test_a_zip_is_held_to_the_same_numbers(one_ac_run_each: Run, personas: Personas) -> None:
    fail_grading(one_ac_run_each)
    content = make_zip({name: example("WASEDA-AC-1") for name in ("WASEDA-AC-2", "WASEDA-AC-3")})
    response = personas.client("participant_a").post(
        "/api/v1/campaigns/toy/runs/bulk/",
        {"file": SimpleUploadedFile("runs.zip", content)}, format="multipart")
    results = {r["member"]: r["status"] for r in response.json()["results"]}
    assert results == {"WASEDA-AC-2": 201, "WASEDA-AC-3": 400}
