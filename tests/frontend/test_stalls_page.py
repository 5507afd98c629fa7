"""The organisers' stall list: runs not done yet by age in their state, and the workers'
heartbeats (grading.work.stalls); organisers only."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from grading.models import GradingJob, GradingPart, WorkerHeartbeat
from grading.work.rounds import rounds_start
from grading.work.workers import worker_heartbeat_record
from submissions.models import Run, RunStatus
from tests.grading.rounds import claimed_part
from tests.support import Personas, forget_other_workers, signed_in

pytestmark = pytest.mark.django_db

PAGE = "/campaigns/toy/dashboard/stalls/"


@pytest.mark.parametrize("who", ["participant_a", "participant_b", "outsider"])
def test_no_one_but_organisers_finds_the_stall_list(personas: Personas, who: str) -> None:
    assert signed_in(personas, who).get(PAGE).status_code == 404


def test_anonymous_visitors_are_sent_to_sign_in(personas: Personas) -> None:
    response = Client().get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.fixture(autouse=True)
def only_these_workers(db: None) -> None:
    forget_other_workers()


def rows(page: str, table: str) -> list[str]:
    body = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-(?:run|worker)="([^"]+)"', body)


def test_runs_not_done_are_listed_oldest_in_their_state_first_with_heartbeats_and_requeues(
    personas: Personas, toy_ac_run: Run,
) -> None:
    now = timezone.now()
    # A second AC run, queued two hours ago and re-queued twice by the reaper.
    queued = Run.objects.get(pk=toy_ac_run.pk)
    queued.pk, queued.name = None, "WASEDA-AC-2"
    queued.save()
    rounds_start(run_ids=[queued.pk])
    GradingJob.objects.filter(run=queued).update(heartbeat=now - timedelta(hours=2))
    GradingPart.objects.filter(job__run=queued).update(heartbeat=now - timedelta(hours=2),
                                                       requeues=2)
    # WASEDA-AC-1 is being graded; its worker last beat an hour ago (silent).
    claimed_part(toy_ac_run, token="t")
    GradingJob.objects.filter(run=toy_ac_run).update(heartbeat=now - timedelta(hours=1))
    # Workers: one beating now, one that went quiet.
    worker_heartbeat_record(hostname="alive@host", queues=["celery", "grading", "scoring"],
                            started_at=now - timedelta(days=1))
    worker_heartbeat_record(hostname="quiet@host", queues=["grading"],
                            started_at=now - timedelta(days=1))
    WorkerHeartbeat.objects.filter(hostname="quiet@host").update(
        last_beat=now - timedelta(minutes=20))

    page = signed_in(personas, "organiser").get(PAGE).content.decode()

    # The PR runs are done (VALID is their end): only the two AC runs wait.
    assert rows(page, "runs-not-done") == ["WASEDA-AC-2", "WASEDA-AC-1"]
    second = page.split('data-run="WASEDA-AC-2"', 1)[1].split("</tr>", 1)[0]
    assert "Queued" in second and "a worker to take it" in second
    assert '<td class="requeues">2</td>' in second and "2 h 00 min" in second
    first = page.split('data-run="WASEDA-AC-1"', 1)[1].split("</tr>", 1)[0]
    assert "Grading" in first and "<strong>silent</strong>" in first
    assert rows(page, "workers") == ["alive@host", "quiet@host"]
    states = re.findall(r'<td class="worker-state">(\w+)</td>', page)
    assert states == ["alive", "silent"]


def test_the_dashboard_links_to_the_stall_list(personas: Personas) -> None:
    page = signed_in(personas, "organiser").get("/campaigns/toy/dashboard/").content.decode()
    assert f'href="{PAGE}"' in page


def test_with_every_run_done_the_list_says_so(personas: Personas, toy_ac_run: Run) -> None:
    Run.objects.filter(pk=toy_ac_run.pk).update(status=RunStatus.SCORED)
    page = signed_in(personas, "organiser").get(PAGE).content.decode()
    assert rows(page, "runs-not-done") == []
    assert "Every run has reached an end" in page
