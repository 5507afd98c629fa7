"""Staging: a campaign driven from upload to published leaderboard on
the production parts, while they fail.

The parts, all on 127.0.0.1 and all stopped at the end: gunicorn serving the site as
deployed (tests/security/live.py), two Celery workers and beat on the broker (Redis, then
RabbitMQ), the test run's PostgreSQL database, run files in S3 through django-storages
and boto3 against moto's S3 server, and a judge that fails a fifth of its calls (500,
429, timeouts, replies that are not JSON, bodies cut short: tests/staging/flaky_judge.py).

The campaign (tests/staging/campaign_files.py) goes through the REST API as its people
would: the teams upload their PR runs, the organiser closes the PR phase (the campaign
file loaded again), the teams upload their AC runs, the organiser asks for grading.
Meanwhile one worker is SIGKILLed while both are grading chunks (another worker is
started, as a supervisor would), and while the round's scoring writes its first
leaderboard every database connection of the workers is terminated
(pg_terminate_backend). Then the organiser publishes both tracks and a participant
reads them.

At the end: every run is terminal and scored; judgments match the distinct inputs of
the files exactly (none missing, none twice), every record linked once; the published
leaderboards equal those of the same runs graded in-process by the same judge without a
fault; every run file is in the bucket. The scenario prints what it injected and what
it counted.

PostgreSQL only (terminating backends is the fault; the embedded SQLite has none): on
SQLite, or without Redis or RabbitMQ on 127.0.0.1, it skips, saying why; under CI
(`CI` set, as .ci/run has it) a missing part fails it instead.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from pytest_django import Settings as SettingsWrapper
from rest_framework.authtoken.models import Token

from campaign.models import Campaign, Track
from grading.models import (
    AnswerEvaluation,
    GradingPart,
    JudgeSlot,
    Judgment,
    JudgmentKind,
    JudgmentStatus,
    NuggetEntailment,
    PartStatus,
)
from submissions.models import AnswerRecord, NuggetRecord, Run, RunStatus
from submissions.services import run_submit
from tests.grading.scripted_server import ScriptedServer
from tests.security.live import LiveSite, serving, site_environment
from tests.staging.campaign_files import (
    AC_RUNS,
    ORGANISER,
    PR_RUNS,
    TEAMS,
    Phases,
    expected_inputs,
    write_campaign_yaml,
    write_run_files,
)
from tests.staging.flaky_judge import FlakyJudge
from tests.staging.parts import (
    REDIS_CACHE,
    Broker,
    Celery,
    bucket_init,
    celery,
    empty_broker,
    kill,
    rabbitmq_broker,
    redis_broker,
    s3_server,
)

pytestmark = pytest.mark.django_db(transaction=True)

SLUG = "staging"
CLEAN_SLUG = "staging-clean"
API = "/api/v1"
JUDGE_MODEL = "flaky-judge"
#: Small chunks (5 questions of 8 nuggets), so that a run's chunks spread over workers.
CHUNK_NUGGETS = 40
#: A claim silent this long is dead: short, so the reaper takes a killed worker's chunk
#: over within the scenario; long enough for a batch that meets two timeouts.
STALE_SECONDS = 15
#: The judge's timeout per request; the flaky judge's timeouts answer after 3 s.
JUDGE_TIMEOUT = 2
#: The longest any step of the scenario may take before it counts as stalled.
STEP_SECONDS = 300


def require(ready: bool, why: str) -> None:
    """Skip where a part is missing; under CI, where every part must be, fail."""
    if ready:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{why}: CI must run the staging scenario")
    pytest.skip(why)


def test_database_url() -> str:
    """The test database's URL, for the site's and the workers' processes."""
    name = connection.settings_dict["NAME"]
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    return f"{base}/{name}"


test_database_url.__test__ = False  # type: ignore[attr-defined]  # not a test


def wait_until(condition: Callable[[], bool], what: str, *, seconds: float = STEP_SECONDS,
               every: float = 0.25, logs: Path | None = None) -> None:
    """Poll `condition` until it holds; fail naming `what` (and the logs) if it never does.

    Polling is the only way to watch processes of their own; no outcome depends on how
    long anything took.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"after {seconds:.0f} s, still waiting for {what}"
                        + (f" (logs in {logs})" if logs else ""))
        time.sleep(every)


# --- the API, as the campaign's people use it ------------------------------------------


@dataclass
class People:
    site: LiveSite
    tokens: dict[str, str] = field(default_factory=dict)

    def call(self, who: str, method: str, path: str, *, payload: Any = None,
             expect: int = 200) -> Any:
        body, headers = None, {"Accept": "application/json"}
        if payload is not None:
            body = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        answer = self.site.send(method, f"{API}{path}", body=body, headers=headers,
                                token=self.tokens[who])
        assert answer.status == expect, (method, path, answer.status, answer.body[:2000])
        return answer.json() if answer.body else None

    def upload(self, who: str, slug: str, track: str, path: Path) -> dict[str, Any]:
        boundary = f"staging-{secrets.token_hex(8)}"
        parts = [(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                  f"{value}\r\n").encode() for name, value in
                 (("track", track), ("name", path.name))]
        parts.append((f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                      f'filename="{path.name}"\r\nContent-Type: text/plain\r\n\r\n').encode()
                     + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode())
        answer = self.site.send(
            "POST", f"{API}/campaigns/{slug}/runs/", body=b"".join(parts),
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                     "Accept": "application/json"}, token=self.tokens[who])
        assert answer.status == 201, (path.name, answer.status, answer.body[:2000])
        run: dict[str, Any] = answer.json()
        assert run["status"] == RunStatus.VALID, run["validation_report"][:5]
        return run


# --- the faults -------------------------------------------------------------------------


class ScoringDrop:
    """Drops the workers' database connections once, while scoring writes.

    A transaction of ours holds a lock on the leaderboards' table that lets everyone read
    it but no one write it: the round's scoring, once it has read every judgment and
    computed the first track, waits on it (visible in pg_stat_activity). Then every
    backend of the workers (named by PGAPPNAME) is terminated and the lock let go.
    """

    TABLE = "scoring_evaluation"

    def __init__(self, database_url: str) -> None:
        self.holder = psycopg.connect(database_url)
        self.terminated: list[str] = []

    def hold(self) -> None:
        self.holder.execute(f"LOCK TABLE {self.TABLE} IN SHARE ROW EXCLUSIVE MODE")

    def scoring_waits(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name LIKE 'staging-worker%%' AND wait_event_type = 'Lock' "
                "AND query ILIKE %s", [f"%{self.TABLE}%"])
            (waiting,) = cursor.fetchone() or (0,)
        return bool(waiting)

    def drop(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT application_name, pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() "
                "AND application_name LIKE 'staging-worker%%'")
            self.terminated = [name for name, done in cursor.fetchall() if done]
        self.holder.rollback()

    def close(self) -> None:
        self.holder.close()


# --- the clean reference ----------------------------------------------------------------


def clean_leaderboards(*, folder: Path, runs: dict[str, Path], judge_url: str,
                       settings: SettingsWrapper, now: datetime) -> dict[str, list[Any]]:
    """The same runs graded and scored in this process (`manage.py grade`) by the same
    judge without faults, in a campaign of their own; its leaderboards' rows by track."""
    settings.GRADER_BASE_URL = judge_url
    settings.GRADER_MODEL = JUDGE_MODEL
    path = write_campaign_yaml(folder, slug=CLEAN_SLUG,
                               phases=Phases(pr_shared=True, results_out=True), now=now)
    call_command("load_campaign", str(path), stdout=io.StringIO())
    organiser = User.objects.get(username=ORGANISER)
    for name in (*PR_RUNS, *AC_RUNS):
        track = Track.objects.get(campaign__slug=CLEAN_SLUG, slug="ac" if "-AC-" in name else "pr")
        with runs[name].open("rb") as file:
            run = run_submit(track=track, user=organiser, name=name, file=file,
                             size=runs[name].stat().st_size, filename=name)
        assert run.status == RunStatus.VALID, run.validation_report[:5]
    call_command("grade", CLEAN_SLUG, stdout=io.StringIO(), stderr=io.StringIO())
    from scoring.selectors import evaluation_latest, leaderboard

    boards: dict[str, list[Any]] = {}
    for track in Track.objects.filter(campaign__slug=CLEAN_SLUG):
        evaluation = evaluation_latest(track=track)
        assert evaluation is not None, f"the clean reference did not score {track.slug}"
        boards[track.slug] = leaderboard(evaluation=evaluation).as_json()["rows"]
    return boards


# --- the scenario -----------------------------------------------------------------------


@pytest.fixture
def postgres() -> str:
    require(connection.vendor == "postgresql",
            "the staging scenario runs on PostgreSQL (it terminates database connections): "
            "set DATABASE_URL=postgres://... as .ci/run does")
    return test_database_url()


@pytest.fixture(params=[redis_broker(), rabbitmq_broker()], ids=lambda broker: broker.name)
def broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    wanted: Broker = request.param
    require(wanted.reachable(), f"no {wanted.name} on 127.0.0.1 for the staging scenario")
    with empty_broker(wanted) as ready:
        yield ready


@dataclass
class Tally:
    """What the scenario did and saw, printed at the end."""

    capsys: pytest.CaptureFixture[str]
    started: float = field(default_factory=time.monotonic)

    def note(self, line: str) -> None:
        """Print `line` at once, past pytest's capture: the scenario's account shows
        in CI's log whether it passes or not."""
        with self.capsys.disabled():
            print(f"  [{time.monotonic() - self.started:6.1f} s] {line}", flush=True)


def test_a_campaign_reaches_its_leaderboards_through_lost_workers_dropped_connections_and_a_flaky_judge(  # noqa: E501
    postgres: str, broker: Broker, tmp_path: Path, settings: SettingsWrapper,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tally = Tally(capsys=capsys)
    tally.note(f"staging scenario on {broker.name}")
    logs = tmp_path / "logs"
    logs.mkdir()
    folder = tmp_path / "campaign"
    folder.mkdir()
    runs = write_run_files(folder)
    expected = expected_inputs(runs)
    start = timezone.now()

    def load(phases: Phases) -> None:
        path = write_campaign_yaml(folder, slug=SLUG, phases=phases, now=timezone.now())
        call_command("load_campaign", str(path), stdout=io.StringIO())

    load(Phases(pr_shared=False, results_out=False))
    campaign = Campaign.objects.get(slug=SLUG)
    beat_scheduled = bool(getattr(settings, "CELERY_BEAT_SCHEDULE", None))

    judge = FlakyJudge()
    scoring_drop = ScoringDrop(postgres)
    with (s3_server(logs / "s3.log") as s3, ScriptedServer(judge) as judge_server):
        env = site_environment(os.environ, database_url=postgres, var_dir=tmp_path / "var",
                               media=tmp_path / "media", secret_key=settings.SECRET_KEY)
        env.update(s3.settings(), CELERY_BROKER_URL=broker.url, CACHE_URL=REDIS_CACHE,
                   GRADER_BASE_URL=judge_server.base_url, GRADER_MODEL=JUDGE_MODEL,
                   GRADER_TIMEOUT=str(JUDGE_TIMEOUT),
                   GRADING_CHUNK_NUGGETS=str(CHUNK_NUGGETS),
                   GRADING_STALE_SECONDS=str(STALE_SECONDS))
        bucket_init(env, logs / "bucket-init.log")
        with (serving(env, log=logs / "gunicorn.log") as site, celery(env, logs) as workers):
            workers.start_worker("worker-a")
            workers.start_worker("worker-b")
            if beat_scheduled:
                workers.start_beat()
            tally.note(f"up: gunicorn, moto S3, workers a and b"
                       f"{', beat' if beat_scheduled else ' (no beat schedule to run)'}, "
                       f"broker {broker.name}")
            people = People(site=site)
            for username in (ORGANISER, *TEAMS.values()):
                token, _ = Token.objects.get_or_create(user=User.objects.get(username=username))
                people.tokens[username] = token.key

            member_of = {team: member for team, member in TEAMS.items()}
            for name in PR_RUNS:
                people.upload(member_of[name.split("-")[0]], SLUG, "pr", runs[name])
            load(Phases(pr_shared=True, results_out=False))  # the PR phase closes
            for name in AC_RUNS:
                people.upload(member_of[name.split("-")[0]], SLUG, "ac", runs[name])
            tally.note(f"uploaded {len(PR_RUNS)} PR and {len(AC_RUNS)} AC runs through the API")

            scoring_drop.hold()
            asked = people.call(ORGANISER, "POST", f"/campaigns/{SLUG}/grading/", expect=202)
            assert sorted(asked["runs"]) == sorted(AC_RUNS)

            kill_worker_mid_grading(workers, campaign, tally, logs)
            wait_until(scoring_drop.scoring_waits, "the round's scoring to write", logs=logs)
            scoring_drop.drop()
            tally.note(f"scoring waiting on its first write: terminated "
                       f"{len(scoring_drop.terminated)} database connections of the workers "
                       f"({', '.join(sorted(set(scoring_drop.terminated)))})")
            scoring_drop.close()

            def every_run_terminal() -> bool:
                listed = people.call(ORGANISER, "GET", f"/campaigns/{SLUG}/runs/")
                return all(run["status"] in (RunStatus.SCORED, RunStatus.FAILED)
                           for run in listed if run["kind"] == "ac")

            wait_until(every_run_terminal, "every AC run to be scored or failed", every=1,
                       logs=logs)
            listed = people.call(ORGANISER, "GET", f"/campaigns/{SLUG}/runs/")
            tally.note("every AC run terminal: " + ", ".join(
                f"{run['name']} {run['status']}" for run in sorted(listed, key=by_name)))

            for track in ("ac", "pr"):
                people.call(ORGANISER, "POST",
                            f"/campaigns/{SLUG}/leaderboards/{track}/publish/",
                            payload={"force": False})
            load(Phases(pr_shared=True, results_out=True))  # results day
            published = people.call("ben", "GET", f"/campaigns/{SLUG}/leaderboards/")
            tally.note("published both tracks; a participant reads them")
            bucket_keys = s3.keys()
        stats = judge.summary()

    # --- what is left behind ---
    tally.note(stats)
    statuses = {run["name"]: run["status"] for run in listed}
    assert statuses == {**dict.fromkeys(PR_RUNS, RunStatus.VALID),
                        **dict.fromkeys(AC_RUNS, RunStatus.SCORED)}, \
        [(run["name"], run["status"], run["failure_reason"]) for run in listed]

    counted = count_judgments(campaign)
    tally.note(
        f"judgments: entailment {counted.entailment} of {expected.entailment_inputs} distinct "
        f"(passage, nugget) inputs, linked to {counted.nugget_links} of "
        f"{expected.nugget_records} nugget records; answer {counted.answer} of "
        f"{expected.answer_inputs} distinct answers, linked to {counted.answer_links} of "
        f"{expected.answer_records} answer records; not done: {counted.not_done}")
    assert counted.entailment == expected.entailment_inputs
    assert counted.answer == expected.answer_inputs
    assert counted.nugget_links == expected.nugget_records == counted.nugget_records
    assert counted.answer_links == expected.answer_records == counted.answer_records
    assert counted.not_done == 0

    clean_judge = FlakyJudge(fault_rate=0.0)
    with ScriptedServer(clean_judge) as clean_server:
        clean = clean_leaderboards(folder=folder, runs=runs,
                                   judge_url=clean_server.base_url, settings=settings,
                                   now=start)
    boards = {board["track"]: board["rows"] for board in published["leaderboards"]}
    assert set(boards) == {"ac", "pr"}
    assert {track: comparable(rows) for track, rows in boards.items()} == \
        {track: comparable(rows) for track, rows in clean.items()}
    tally.note(f"published leaderboards equal the clean reference's ({len(boards['ac'])} AC, "
               f"{len(boards['pr'])} PR rows); the clean judge answered {clean_judge.calls} "
               f"calls")

    stored = set(Run.objects.filter(track__campaign=campaign).values_list("file", flat=True))
    missing = sorted(stored - bucket_keys)
    tally.note(f"bucket {len(bucket_keys)} objects; the campaign's {len(stored)} run files "
               f"all there: {not missing}")
    assert len(stored) == len(PR_RUNS) + len(AC_RUNS) and not missing, missing


def by_name(run: dict[str, Any]) -> str:
    return str(run["name"])


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A leaderboard's rows by run name, without the run's id (another campaign's run)."""
    return sorted(({k: v for k, v in row.items() if k != "run_id"} for row in rows),
                  key=lambda row: str(row["run"]))


def kill_worker_mid_grading(workers: Celery, campaign: Campaign, tally: Tally,
                            logs: Path) -> None:
    """SIGKILL worker a once both workers hold a chunk (each runs one task at a time, so
    two chunks being graded means a's is one of them) and some judgments are stored;
    then start worker c, as a supervisor restarts a lost worker."""
    chunks = GradingPart.objects.filter(job__run__track__campaign=campaign)

    def both_grading() -> bool:
        return (chunks.filter(status=PartStatus.GRADING).count() >= 2
                and chunks.filter(status=PartStatus.QUEUED).exists()
                and Judgment.objects.filter(campaign=campaign).exists())

    wait_until(both_grading, "both workers to be grading chunks", every=0.05, logs=logs)
    held = sorted(chunks.filter(status=PartStatus.GRADING).values_list("pk", flat=True))
    judged = Judgment.objects.filter(campaign=campaign).count()
    kill(workers.workers["worker-a"])
    workers.start_worker("worker-c")
    tally.note(f"SIGKILLed worker a while chunks {held} were being graded ({judged} judgments "
               f"stored, {chunks.filter(status=PartStatus.QUEUED).count()} chunks queued); "
               f"started worker c")


@dataclass(frozen=True)
class Counted:
    entailment: int
    answer: int
    nugget_records: int
    nugget_links: int
    answer_records: int
    answer_links: int
    not_done: int


def count_judgments(campaign: Campaign) -> Counted:
    judgments = Judgment.objects.filter(campaign=campaign)
    runs = Run.objects.filter(track__campaign=campaign)
    return Counted(
        entailment=judgments.filter(kind=JudgmentKind.ENTAILMENT).count(),
        answer=judgments.filter(kind=JudgmentKind.ANSWER).count(),
        nugget_records=NuggetRecord.objects.filter(run__in=runs).count(),
        nugget_links=NuggetEntailment.objects.filter(
            nugget__run__in=runs, slot=JudgeSlot.OFFICIAL).count(),
        answer_records=AnswerRecord.objects.filter(run__in=runs).count(),
        answer_links=AnswerEvaluation.objects.filter(
            answer__run__in=runs, slot=JudgeSlot.OFFICIAL).count(),
        not_done=judgments.exclude(status=JudgmentStatus.DONE).count(),
    )
