"""What `evalctl` says when something goes wrong: the server's `detail` and
`errors` word for word, a non-zero exit status, and never a traceback (`Cli` checks that
every command's stderr has none)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from submissions.models import Run
from tests.client.conftest import RUN_MAX_BYTES, SIGN_INS_PER_USERNAME, Cli
from tests.security.live import WORKERS
from tests.support import TOY, Personas

pytestmark = pytest.mark.django_db(transaction=True)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_site_that_cannot_be_reached_is_named(cli_of: Callable[[str], Cli]) -> None:
    site = f"http://127.0.0.1:{closed_port()}"
    outcome = cli_of("alice")("status", "toy",
                              env={"EVALCTL_SITE": site, "EVALCTL_TOKEN": "anything"})
    assert outcome.code == 1
    assert outcome.err.startswith(f"error: cannot reach {site}: ")


def test_a_token_the_site_does_not_know_is_refused_and_not_kept(
    personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    outcome = alice("login", "--site", alice.site.base_url, "--token", "0" * 40)
    assert outcome.code == 1
    assert outcome.err.splitlines() == [
        "error: Invalid token. (HTTP 401)",
        "  the token was refused: sign in again with `evalctl login`"]
    assert not alice.config_file.exists()


def test_a_wrong_password_is_refused_in_the_servers_words(
    personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    outcome = alice("login", "--site", alice.site.base_url, "--username", "alice",
                    "--password-stdin", stdin="not-the-password\n")
    assert outcome.code == 1
    assert outcome.err == "error: Unable to log in with provided credentials. (HTTP 400)\n"


def test_password_guessing_ends_in_a_429_that_says_how_long_to_wait(
    personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    # A user name of its own: the site's counts outlive the test (gunicorn's processes
    # count in their own memory unless CACHE_URL points them at Redis).
    oscar = cli_of("oscar")
    answers = []
    # Each process counts on its own: past WORKERS * rate failures, one has seen more
    # than the rate, whichever process answers.
    for _ in range(WORKERS * SIGN_INS_PER_USERNAME + 1):
        outcome = oscar("login", "--site", oscar.site.base_url, "--username", "oscar",
                        "--password-stdin", stdin="guess\n")
        answers.append(outcome)
        if "(HTTP 429)" in outcome.err:
            break
    throttled = answers[-1]
    assert throttled.code == 1 and "(HTTP 429)" in throttled.err, [a.err for a in answers]
    [wait] = [line for line in throttled.err.splitlines() if "Retry-After" in line]
    seconds = wait.split("wait ")[1].split(" s ")[0]
    assert wait == f"  the server asks to wait {seconds} s before trying again (Retry-After)"
    assert seconds.isdigit() and int(seconds) > 0
    assert not oscar.config_file.exists()


def test_a_file_over_the_sites_limit_passes_the_check_and_gets_the_servers_413(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    big = alice.home / "WASEDA-PG-1"
    passage = "A long passage about the far side of the Moon. " * 10
    big.write_text("".join(f"{qid};{rank};doc-{rank};{passage}\n"
                           for qid in ("D001", "D002", "D003") for rank in range(1, 21)))
    size = big.stat().st_size
    assert size > RUN_MAX_BYTES

    outcome = alice("submit", "toy", "pr", str(big))
    assert outcome.code == 1
    assert "the format check found no problem" in outcome.err
    assert f"error: the file is {size} bytes; the limit is {RUN_MAX_BYTES} bytes (HTTP 413)" \
        in outcome.err
    assert f"100% {size / 1000:.1f} KB/{size / 1000:.1f} KB" in outcome.err
    assert not Run.objects.filter(name="WASEDA-PG-1").exists()


def test_an_unknown_campaign_or_track_is_named(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    run = str(TOY / "WASEDA-PO-1")

    no_campaign = alice("submit", "no-such-campaign", "pr", run)
    assert (no_campaign.code, no_campaign.err) == (
        1, "error: no campaign 'no-such-campaign' that you take part in; yours: toy "
           "(HTTP 404)\n")
    no_track = alice("submit", "toy", "prr", run)
    assert (no_track.code, no_track.err) == (
        1, "error: campaign toy has no track 'prr'; expected one of: ac, pr\n")
    # Without the check, the server says the same.
    unchecked = alice("submit", "toy", "prr", run, "--no-check")
    assert unchecked.code == 1
    assert "error: campaign toy has no track 'prr'; expected one of: ac, pr (HTTP 400)" \
        in unchecked.err


def test_without_signing_in_it_says_how(cli_of: Callable[[str], Cli]) -> None:
    outcome = cli_of("nobody")("status")
    assert (outcome.code, outcome.err) == (
        1, "error: no site to talk to: sign in with `evalctl login --site URL` (or set "
           "EVALCTL_SITE and EVALCTL_TOKEN)\n")


def test_the_environment_overrides_the_kept_site_and_token(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    kept = json.loads(alice.config_file.read_text())
    assert kept == {"site": alice.site.base_url, "token": kept["token"]}
    assert alice.file_mode() == 0o600

    # The kept token never goes to another site.
    elsewhere = f"http://127.0.0.1:{closed_port()}"
    outcome = alice("status", "toy", env={"EVALCTL_SITE": elsewhere})
    assert outcome.err == (f"error: no token for {elsewhere}: sign in with `evalctl login "
                           f"--site {elsewhere}` (or set EVALCTL_TOKEN)\n")
    # With no login at all, the environment alone: bob sees his team's runs, not alice's.
    assert alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1")).code == 0
    as_alice = alice("status", "toy")
    as_bob = cli_of("bob")("status", "toy", env={
        "EVALCTL_SITE": alice.site.base_url, "EVALCTL_TOKEN": token_of(personas, "participant_b")})
    assert as_alice.code == as_bob.code == 0
    assert "WASEDA-PO-1" in as_alice.out
    assert as_bob.out == "toy:\n  no runs yet\n"


def test_status_wait_gives_up_after_its_timeout_and_says_on_what(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    assert alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1")).code == 0
    # Queued with no task for it: nothing will ever move it.
    Run.objects.filter(name="WASEDA-PO-1").update(status="queued")

    outcome = alice("status", "--wait", "--timeout", "1", "--interval", "0.2")
    assert outcome.code == 3
    assert outcome.err.splitlines() == ["waiting for WASEDA-PO-1 (queued)",
                                        "error: still not settled after 1 s: "
                                        "WASEDA-PO-1 (queued)"]
    assert outcome.out.splitlines()[0] == "toy:"  # the runs as they stood


def token_of(personas: Personas, who: str) -> str:
    token, _ = Token.objects.get_or_create(user=getattr(personas, who))
    return token.key


def test_status_wait_says_that_a_valid_ac_run_waits_for_the_organisers(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    assert alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1")).code == 0
    # An AC run accepted and not queued: the organisers have not started grading.
    Run.objects.filter(name="WASEDA-PO-1").update(status="valid")
    Run.objects.filter(name="WASEDA-PO-1").update(track=tracks["ac"])

    outcome = alice("status", "--wait", "--timeout", "1", "--interval", "0.2")
    assert outcome.code == 0
    assert outcome.err.splitlines() == [
        "WASEDA-PO-1: valid, and graded once the organisers start grading; --wait waits "
        "only while a run is received, queued or grading"]
    assert "graded once the organisers start grading" in outcome.out


def tokyo_minute(moment: datetime) -> str:
    """How the toy campaign's messages write a moment (its zone is Asia/Tokyo)."""
    return f"{moment.astimezone(ZoneInfo('Asia/Tokyo')):%Y-%m-%d %H:%M}"


def uploads_answered(cli: Cli) -> int:
    """The run uploads the site has answered so far, by gunicorn's access log."""
    return cli.site.log.read_text(errors="replace").count('"POST /api/v1/campaigns/toy/runs/ ')


def wait_for_uploads(cli: Cli, count: int) -> int:
    """`uploads_answered`, once it reaches `count` (the log is written after the answer)."""
    deadline = time.monotonic() + 10
    while uploads_answered(cli) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return uploads_answered(cli)


def test_a_closed_track_is_refused_in_the_campaigns_time_before_the_file_is_sent(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice, olga = cli_of("alice"), cli_of("olga")
    alice.sign_in_with_token(personas, "participant_a")
    olga.sign_in_with_token(personas, "organiser")
    campaign = personas.campaign
    campaign.pr_due = timezone.now() - timedelta(days=2, seconds=17, microseconds=405178)
    campaign.save()
    answered = uploads_answered(alice)

    for options in ([], ["--no-check"]):  # --no-check skips the format check, not this
        before = timezone.now()
        late = alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1"), *options)
        after = timezone.now()
        assert late.code == 1
        assert late.err in {
            f"error: track pr closed at {tokyo_minute(campaign.pr_due)} (Asia/Tokyo); it is "
            f"{tokyo_minute(now)} there now: uploads are refused\n"
            "  checked before the upload, by the site's clock: nothing was sent\n"
            for now in (before, after)}, late.err
    assert not Run.objects.exists()

    # Organisers may enter a run after the deadline: theirs is sent, and the log shows it.
    entered = olga("submit", "toy", "pr", str(TOY / "WASEDA-PO-1"))
    assert entered.code == 0, entered.err
    assert "WASEDA-PO-1 accepted (valid)" in entered.out
    assert wait_for_uploads(alice, answered + 1) == answered + 1  # olga's alone


def test_a_track_not_open_yet_is_refused_before_the_file_is_sent(
    tracks: dict[str, Any], personas: Personas, cli_of: Callable[[str], Cli],
) -> None:
    alice = cli_of("alice")
    alice.sign_in_with_token(personas, "participant_a")
    campaign = personas.campaign
    campaign.topics_release = timezone.now() + timedelta(hours=5, seconds=42)
    campaign.save()
    answered = uploads_answered(alice)

    before = timezone.now()
    early = alice("submit", "toy", "ac", str(TOY / "WASEDA-AC-1"))
    after = timezone.now()
    assert early.code == 1
    assert early.err in {
        f"error: track ac opens at {tokyo_minute(campaign.topics_release)} (Asia/Tokyo, with "
        f"the questions); it is {tokyo_minute(now)} there now\n"
        "  checked before the upload, by the site's clock: nothing was sent\n"
        for now in (before, after)}, early.err
    assert uploads_answered(alice) == answered
    assert not Run.objects.exists()
