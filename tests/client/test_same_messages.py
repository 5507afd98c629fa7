"""The check before an upload says what the server says, line for line.

For each kind of run file, a file with many of the common mistakes is submitted twice
through `evalctl`: once as a participant does (the client's check refuses it and sends
nothing), once with --no-check (the server validates it and stores the invalid run with
its report). Both print their problems the same way; the lists must be equal.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from submissions.models import Run, RunStatus
from tests.client.conftest import Cli
from tests.grading.rubric_support import movie_rubric
from tests.support import TOY

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Case:
    campaign: str
    track: str
    run: str
    content: bytes
    problems: int  # how many the file has


PR_RUN = Case("toy", "pr", "WASEDA-PO-2", (
    b"D001;1;doc-a;A passage.\n"
    b"D001;1;doc-b;The same rank again.\n"
    b"D001;x;doc-c;A rank that is no number.\n"
    b"D009;1;doc-d;Not a question of the campaign.\n"
    b"D002;2;doc-e\n"
    b"\n"
    b"D002;3;  ;A blank docID.\n"
    b"D002;4;doc-f;A control\x01character.\n"
    b"D003;21;doc-g;A rank past 20.\n"
    b"D003;1;doc-h;Not UTF-8: \xff.\n"
    b"D003;2;doc-i;A carriage\rreturn.\n"), 10)

# Every PassageKey that looks like one names a rank WASEDA-PO-1 returned for its question:
# whether it does is the server's to check, not the client's.
AC_RUN = Case("toy", "ac", "WASEDA-AC-2", (
    b"<D001>\n"
    b"China National Space Administration;75\n"
    b"1;WASEDA-PO-1;1;A nugget.\n"
    b"1;WASEDA-PO-1;2;The same NuggetNum again.\n"
    b"11;WASEDA-PO-1;3;A NuggetNum past 10.\n"
    b"2;not-a-run;1;A PRrunname that is no PR run name.\n"
    b"3;WASEDA-PO-1;1\n"
    b"</D001>\n"
    b"<D002>\n"
    b"Buzz Aldrin;101\n"
    b"</D002>\n"
    b"<D009>\n"
    b"Somebody;50\n"
    b"</D009>\n"
    b"A line outside any block.\n"
    b"<D003>\n"
    b"Mars\n"
    b"</D002>\n"), 9)

# tests/data/rubric: queries q1 and q2, docids d1 to d4 in the corpus.
TREC_RUN = Case("movie-rubric", "dl", "WASEDA-bad", (
    b"q1 Q0 d1 1 12.5 bm25\n"
    b"q1 Q0 d1 2 11.0 bm25\n"
    b"q1 Q0 d2 3 high bm25\n"
    b"q1 Q0 d3 4 10.0 other\n"
    b"q9 Q0 d4 1 9.0 bm25\n"
    b"q2 Q0 d2 1 9.0\n"
    b"q2 Q0 d3 x 8.0 bm25\n"
    b"q2 Q0 d4 3 7.0 bm25\x01\n"), 7)

RESPONSE_RUN = Case("movie-rubric", "gen", "WASEDA-badgen", (
    b'{"qid": "q1", "text": "Ridley Scott directed it."}\n'
    b'{"qid": "q1", "text": "A second response."}\n'
    b'{"qid": "q9", "text": "An unknown query."}\n'
    b'{"qid": "q2", "txt": "A misspelt key."}\n'
    b"not JSON\n"
    b'{"qid": "q2", "text": "Empty passages.", "passages": []}\n'
    b"[1, 2]\n"
    b"\n"
    b'{"qid": "q2", "text": "x", "text": "y"}\n'), 10)


@pytest.mark.parametrize("case", [PR_RUN, AC_RUN, TREC_RUN, RESPONSE_RUN],
                         ids=["PR run", "AC run", "TREC run", "response run"])
def test_the_check_before_upload_says_what_the_server_says(
    case: Case, request: pytest.FixtureRequest, cli_of: Callable[[str], Cli],
) -> None:
    if case.campaign == "toy":
        request.getfixturevalue("tracks")
    else:
        movie_rubric()
    alice = cli_of("alice")
    token = alice_token()
    assert alice("login", "--site", alice.site.base_url, "--token", token).code == 0
    if case.track == "ac":
        assert alice("submit", "toy", "pr", str(TOY / "WASEDA-PO-1")).code == 0
    bad = alice.home / case.run
    bad.write_bytes(case.content)

    checked = alice("submit", case.campaign, case.track, str(bad))
    assert checked.code == 1
    assert f"error: {bad}: {case.problems} problem(s) found before upload; nothing was " \
           "sent" in checked.err
    assert not Run.objects.filter(name=case.run).exists()

    validated = alice("submit", case.campaign, case.track, str(bad), "--no-check")
    assert validated.code == 1
    assert f"error: {case.run} was not accepted: {case.problems} problem(s) in the file; " \
           "nothing was stored (HTTP 400)" in validated.err
    assert checked.problem_lines() == validated.problem_lines()
    assert len(checked.problem_lines()) == case.problems
    assert Run.objects.get(name=case.run).status == RunStatus.INVALID

    # The invalid upload is where `status` shows it.
    shown = alice("status", case.campaign)
    [row] = [line.split() for line in shown.out.splitlines() if case.run in line]
    assert row[3] == "invalid" and f"{case.problems} problem(s)" in " ".join(row)


#: Loads the server's parsers of every kind as `evalctl` does, then says which of the
#: server's libraries the interpreter could import, and where the parsers came from.
PROBE = """
import importlib.util
from evalctl.server_formats import formats_module
parsers = [formats_module(name) for name in ("pr_run", "ac_run", "trec_run", "response_run")]
print([name for name in ("numpy", "sentencex", "django") if importlib.util.find_spec(name)])
print(parsers[0].__file__)
"""


def test_the_client_runs_where_the_servers_libraries_are_not(
    cli_of: Callable[[str], Cli],
) -> None:
    """What the checks above ran with: the client installed on its own, its parsers the
    copy in the install, and neither numpy nor sentencex nor Django to be had."""
    alice = cli_of("alice")
    probe = subprocess.run([sys.executable, "-S", "-c", PROBE], capture_output=True,
                           text=True, env=alice.environment(), check=False, timeout=60)
    assert probe.returncode == 0, probe.stderr
    importable, parsers = probe.stdout.splitlines()
    assert importable == "[]"
    assert parsers == str(alice.install / "evalctl" / "formats" / "pr_run.py")


def alice_token() -> str:
    token, _ = Token.objects.get_or_create(user=User.objects.get(username="alice"))
    return token.key
