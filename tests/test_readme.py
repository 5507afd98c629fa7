"""The README's walk-through, run as written: from an empty VAR_DIR to a published leaderboard.

The shell blocks marked `<!-- walkthrough: run -->` in README.md are typed, in order, into
one bash session, as a reader types them into a terminal; the block marked
`<!-- walkthrough: serve -->` runs in a second session with the first one's exported
variables, in the background, until the end. The blocks are read from README.md itself,
so the README and this test cannot drift apart. Only the values of a few variables are
ours (never the commands): a fresh VAR_DIR and CAMPAIGN_DIR, a free port on 127.0.0.1,
and a scripted OpenAI-compatible judge as GRADER_BASE_URL, so the leaderboard the
walk-through publishes has numbers worked out by hand below.

Every subprocess runs on the embedded defaults (SQLite and the filesystem task queue
under VAR_DIR): the service's own variables, DATABASE_URL and CELERY_BROKER_URL among
them, are removed from their environment, so CI's PostgreSQL and Redis are not used.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from math import log2
from pathlib import Path
from typing import IO, Any

import pytest

from tests.grading.scripted_server import ScriptedJudge, ScriptedServer
from tests.support import REPO, live_processes

README = REPO / "README.md"
MARKER = re.compile(r"^<!-- walkthrough: (?P<role>run|serve|same as (?P<path>\S+)) -->$")
FENCE = re.compile(r"^```(?P<info>[\w-]*)$")

BLOCK_SECONDS = 600  # one block, `make venv` included (it may install what changed)
READY_SECONDS = 180  # `make serve` until the site, the queue and the worker answer
HEALTH_TOKEN = "readme-walk-through-monitor"  # the deep health checks' token, as a monitor
STOP_SECONDS = 60  # Ctrl-C until every process of a session has gone


@dataclass(frozen=True)
class Block:
    role: str  # "run", "serve" or "same as PATH"
    info: str  # the fence's info string: sh, yaml, ...
    text: str
    line: int  # of the fence in README.md


def walkthrough_blocks(markdown: str) -> list[Block]:
    """The fenced blocks each preceded by a walkthrough marker, in README order."""
    lines = markdown.splitlines()
    blocks = []
    for number, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker:
            continue
        fence = FENCE.match(lines[number + 1]) if number + 1 < len(lines) else None
        assert fence, f"README.md line {number + 1}: a walkthrough marker must precede a fence"
        end = lines.index("```", number + 2)
        blocks.append(Block(role=marker["role"], info=fence["info"],
                            text="\n".join(lines[number + 2:end]) + "\n", line=number + 2))
    return blocks


def with_values(script: str, values: dict[str, str]) -> tuple[str, set[str]]:
    """`script` with the value of each assignment `NAME=...` of `values` replaced."""
    found = set()
    for name, value in values.items():
        script, count = re.subn(rf"(?<![\w$]){name}=\S+", f"{name}={shlex.quote(value)}",
                                script)
        if count:
            found.add(name)
    return script, found


def embedded_environment() -> dict[str, str]:
    """This process's environment without the service's settings (deploy/.env.example
    lists them all), make's and pytest-django's: what a fresh shell on the machine has."""
    example = (REPO / "deploy" / ".env.example").read_text(encoding="utf-8")
    names = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", example, flags=re.M))
    names |= {f"{name}_FILE" for name in names}
    names |= {"DJANGO_SETTINGS_MODULE", "MPLCONFIGDIR", "HOST", "PORT", "PY", "SITE",
              "CAMPAIGN_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}
    return {k: v for k, v in os.environ.items() if k not in names}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop_session(process: subprocess.Popen[Any], first: signal.Signals) -> None:
    """Send `first` to the session's whole process group, then SIGKILL what is left."""
    group = process.pid  # start_new_session: the leader's pid is the group's id
    for sig in (first, signal.SIGKILL):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + STOP_SECONDS
        while live_processes(group) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not live_processes(group):
            break
    process.wait(timeout=STOP_SECONDS)
    assert not live_processes(group), f"processes of group {group} outlived SIGKILL"


def tail(path: Path, lines: int = 60) -> str:
    if not path.exists():
        return f"({path.name}: not written)"
    return f"--- {path} ---\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class Terminal:
    """One bash session that the walk-through's blocks are typed into, in order.

    Each block is sourced from a file with stdin from /dev/null (so no command can read
    the blocks that follow), under `set -eu`: the first failing command ends the session.
    After each block the session writes a line to a pipe of ours; a session that dies
    closes the pipe instead.
    """

    def __init__(self, *, env: dict[str, str], folder: Path, log: IO[str]) -> None:
        self.folder = folder
        self.count = 0
        self._done, done_in_shell = os.pipe()
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=REPO, env=env, stdin=subprocess.PIPE,
            stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            pass_fds=(done_in_shell,),
        )
        os.close(done_in_shell)
        self._done_fd = done_in_shell  # its number inside the session
        self._type("set -eu")

    def _type(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def run(self, script: str, *, what: str) -> None:
        self.count += 1
        path = self.folder / f"block-{self.count}.sh"
        path.write_text(f"set -x\n{script}set +x\n", encoding="utf-8")
        self._type(f"source {shlex.quote(str(path))} < /dev/null")
        self._type(f"echo ok >&{self._done_fd}")
        ready, _, _ = select.select([self._done], [], [], BLOCK_SECONDS)
        assert ready, f"{what} still running after {BLOCK_SECONDS} s"
        assert os.read(self._done, 64) == b"ok\n", f"{what} failed (the session ended)"

    def environment(self) -> dict[str, str]:
        """The session's exported variables now (what a second terminal is told to export)."""
        dump = self.folder / "environment"
        self.run(f"env -0 > {shlex.quote(str(dump))}\n", what="dumping the environment")
        pairs = [pair.partition("=") for pair in dump.read_bytes().decode().split("\0")]
        return {name: value for name, equals, value in pairs if equals}

    def close(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # the session died already
            self.process.stdin.close()
        os.close(self._done)
        stop_session(self.process, signal.SIGTERM)


def get_json(url: str, token: str | None = None,
             headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                   **(headers or {})})
    if token:
        request.add_header("Authorization", f"Token {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def wait_until_served(site: str, serve: subprocess.Popen[Any]) -> None:
    """Poll /healthz?worker=1 (database, queue, storage and a worker answer) until 200,
    as a monitor does: with the health token (anonymous callers get the database only)."""
    deadline = time.monotonic() + READY_SECONDS
    while True:
        assert serve.poll() is None, f"make serve exited with {serve.returncode}"
        try:
            if get_json(f"{site}/healthz?worker=1",
                        headers={"X-Health-Token": HEALTH_TOKEN})["status"] == "ok":
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
            pass
        assert time.monotonic() < deadline, f"{site} not ready after {READY_SECONDS} s"
        time.sleep(0.25)


# --- what the judge says, and what the leaderboard must then show -------------------------

def planets_judge() -> ScriptedJudge:
    """The judge of the walk-through, as a marked run would say it (demo/walkthrough/runs).

    Every nugget is entailed: including nugget 3 of ALPHA-AC-1 on P001, which the
    walk-through's first edit makes bogus. Correct answers, with their relevant nuggets:
    ALPHA "Jupiter" [1, 3], "Mars" [1]; BETA "The planet Mars" [1, 2]. Wrong: ALPHA
    "Three", BETA "Saturn", and BETA "Two: Phobos and Deimos", which the second edit
    makes correct with nuggets [1, 2] relevant.
    """
    return ScriptedJudge(
        correct={"Jupiter": True, "Mars": True, "The planet Mars": True, "Three": False,
                 "Saturn": False, "Two: Phobos and Deimos": False},
        relevant={
            "Jupiter": ["Jupiter is the largest planet in the Solar System.",
                        "Jupiter has the most moons of any planet."],
            "Mars": ["Mars is called the Red Planet."],
            "The planet Mars": ["Mars is often called the Red Planet.",
                                "Iron oxide gives the surface of Mars a reddish appearance."],
        },
    )


# After both edits (docs/measures.md; p = confidence / 100; N = 3 questions):
#
# ALPHA-AC-1  P001 Jupiter 90 correct, marks R N B (nugget 3 edited to bogus; the answer,
#             judged again, keeps only nugget 1), precision 1/3
#             P002 Mars 80 correct, R N: 1/2;  P003 Three 60 wrong, N: 0
#   accuracy 2/3, precision (1/3 + 1/2 + 0) / 3 = 5/18, R_O = 1 - 0.6/1 = 0.4,
#   R_U = 1 - (0.1 + 0.2)/2 = 0.85, HMR = 2 * 0.4 * 0.85 / 1.25 = 0.544,
#   ECE (each p alone in its bin) = (0.1 + 0.2 + 0.6) / 3 = 0.3,
#   Brier = (0.01 + 0.04 + 0.36) / 3 = 0.41 / 3
# BETA-AC-1   P001 Saturn 40 wrong, N: 0;  P002 The planet Mars 95 correct, R R: 1
#             P003 Two: Phobos and Deimos 85, edited to correct with R R: 1
#   accuracy 2/3, precision 2/3, R_O = 1 - 0.4 = 0.6, R_U = 1 - (0.05 + 0.15)/2 = 0.9,
#   HMR = 2 * 0.6 * 0.9 / 1.5 = 0.72, ECE = (0.4 + 0.05 + 0.15) / 3 = 0.2,
#   Brier = (0.16 + 0.0025 + 0.0225) / 3 = 0.185 / 3
EXPECTED_AC = [  # ranked by HMR
    {"run": "BETA-AC-1", "team": "BETA", "accuracy": 2 / 3, "nugget_precision": 2 / 3,
     "r_o": 0.6, "r_u": 0.9, "hmr": 0.72, "ece": 0.2, "brier": 0.185 / 3},
    {"run": "ALPHA-AC-1", "team": "ALPHA", "accuracy": 2 / 3, "nugget_precision": 5 / 18,
     "r_o": 0.4, "r_u": 0.85, "hmr": 0.544, "ece": 0.3, "brier": 0.41 / 3},
]
# Derived qrels (grade = R nuggets citing the PassageKey): P001 ALPHA-PO-1:1 1;
# P002 ALPHA-PO-1:2 2 (ALPHA #1, BETA #2), BETA-PG-1:1 1; P003 BETA-PG-1:1 1, BETA-PG-1:2 1.
# nDCG@10, linear gain, log2(rank + 1) discount, mean over the three questions:
# ALPHA-PO-1  P001 [1, 0]: 1;  P002 [0, 2] vs ideal [2, 1];  P003 [0]: 0
# BETA-PG-1   P001 [0]: 0;  P002 [1, 0] vs ideal [2, 1];  P003 [1, 1]: 1
IDEAL_P002 = 2 + 1 / log2(3)
EXPECTED_NDCG = {"ALPHA-PO-1": (1 + (2 / log2(3)) / IDEAL_P002 + 0) / 3,
                 "BETA-PG-1": (0 + 1 / IDEAL_P002 + 1) / 3}


# --- the tests -----------------------------------------------------------------------------

@pytest.fixture
def blocks() -> list[Block]:
    return walkthrough_blocks(README.read_text(encoding="utf-8"))


def test_the_walkthrough_goes_from_an_empty_machine_to_a_published_leaderboard(
    blocks: list[Block],
) -> None:
    runs = [block.text for block in blocks if block.role == "run"]
    script = "".join(runs)
    steps = ["make venv", "manage.py migrate", "manage.py load_campaign",
             "manage.py drf_create_token", "GRADER_BASE_URL=", "-F track=pr", "-F track=ac",
             "manage.py grade", "-X PATCH", "manage.py score",
             "manage.py publish_leaderboards"]
    assert [step for step in steps if step not in script] == []
    positions = [script.index(step) for step in steps]
    assert positions == sorted(positions), "the steps are out of order"
    assert "/leaderboards/" in runs[-1]  # it ends reading the published leaderboards
    assert [block.text for block in blocks if block.role == "serve"] == ["make serve\n"]


def test_the_readme_shows_the_walkthroughs_files_as_they_are(blocks: list[Block]) -> None:
    shown = [block for block in blocks if block.role.startswith("same as ")]
    assert shown, "the README shows the campaign's YAML"
    for block in shown:
        path = REPO / block.role.removeprefix("same as ")
        assert block.text == path.read_text(encoding="utf-8"), (
            f"README.md line {block.line} differs from {path.relative_to(REPO)}")


# --- every command and address the README and the serve script name is real ------------

# A page or API address: after the site's origin as the README and the serve script write
# it, or alone in backticks (`GET /api/v1/runs/ID/`). Placeholders stand for any value.
SITE_PATH = re.compile(r"(?:http://127\.0\.0\.1:8000|http://\$HOST:\$PORT|\$SITE)(/[^\s`'\"),]*)")
BARE_PATH = re.compile(
    r"`(?:(?:GET|POST|PATCH|DELETE) )?(/(?:api|campaigns|runs|judgments)/[^\s`]*)`")
PLACEHOLDERS = {"SLUG": "placeholder", "TRACK": "placeholder", "$ID": "1", "ID": "1"}


def named_paths(text: str) -> set[str]:
    """The paths `text` names, placeholders filled in, without their query strings."""
    found = {match[1] for pattern in (SITE_PATH, BARE_PATH) for match in pattern.finditer(text)}
    paths = set()
    for path in found:
        path = path.split("?")[0].rstrip(".")
        for placeholder, value in PLACEHOLDERS.items():
            path = re.sub(rf"(?<=/){re.escape(placeholder)}(?=/|$)", value, path)
        paths.add(path)
    return paths


def site_route(path: str) -> str | None:
    """The name of the page or API view `path` reaches; None for none, or for the API's
    catch-all (a JSON 404). A path the README keeps in a variable to append `/?...` to
    (JUDGMENTS=$SITE/.../judgments) is tried with that slash too."""
    from django.urls import Resolver404, resolve

    for candidate in (path, f"{path}/"):
        try:
            name = resolve(candidate).url_name
        except Resolver404:
            continue
        if name:
            return name
    return None


def test_every_command_the_readme_names_exists() -> None:
    from django.core.management import get_commands

    readme = README.read_text(encoding="utf-8")
    commands = set(re.findall(r"manage\.py (\w+)", readme))
    assert {"load_campaign", "testbank_generate", "grade", "score"} <= commands
    assert sorted(commands - set(get_commands())) == []
    targets = set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(encoding="utf-8"),
                             flags=re.M))
    # `make X` in prose, or a line of a shell block ("apt-get install ... make curl" is no target).
    made = set(re.findall(r"(?:^|`)make (\w+)", readme, flags=re.M))
    assert {"demo", "test", "serve"} <= made
    assert sorted(made - targets) == []


@pytest.mark.parametrize("source", ["README.md", "deploy/serve-local.sh"])
def test_every_address_the_readme_and_the_serve_script_name_is_a_route(source: str) -> None:
    paths = named_paths((REPO / source).read_text(encoding="utf-8"))
    # Both demo campaigns' pages are among them: the results, the test bank, the grid.
    assert {"/campaigns/demo-movies/results/", "/campaigns/demo-rubric/results/",
            "/campaigns/demo-rubric/testbank/",
            "/campaigns/demo-rubric/tracks/ranking/grid/"} <= paths
    assert sorted(path for path in paths if site_route(path) is None) == []


def test_a_path_that_is_no_route_is_caught() -> None:
    # The check above can fail: the API's catch-all and a missing page count as no route.
    assert site_route("/api/v1/campaigns/x/no-such-thing/") is None
    assert site_route("/campaigns/x/no-such-page/") is None
    assert site_route("/api/v1/runs/1/") == "api-run"
    assert named_paths("see `GET /api/v1/runs/ID/` and $SITE/campaigns/SLUG/runs/?x=1.") == {
        "/api/v1/runs/1/", "/campaigns/placeholder/runs/"}


def test_the_demo_target_loads_grades_and_publishes_both_campaigns() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    demo = makefile[makefile.index("\ndemo:"):makefile.index("\nserve:")]
    for slug, steps in (("demo-movies", ["submit_runs", "grade", "publish_leaderboards"]),
                        ("demo-rubric", ["testbank_generate", "submit_runs", "grade",
                                         "publish_leaderboards"])):
        positions = [demo.index(f"manage.py {step} {slug}") for step in steps]
        assert positions == sorted(positions), slug
    assert "load_campaign demo/rubric/campaign.yaml" in demo
    assert demo.index("publish_leaderboards demo-rubric") < demo.index("serve-local.sh")


@pytest.fixture
def scripted_judge() -> Iterator[ScriptedServer]:
    with ScriptedServer(planets_judge()) as server:
        yield server


@pytest.mark.worker
def test_the_readme_walkthrough_runs_as_written(
    blocks: list[Block], scripted_judge: ScriptedServer, tmp_path: Path
) -> None:
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    var_dir = tmp_path / "var"
    values = {"VAR_DIR": str(var_dir), "CAMPAIGN_DIR": str(tmp_path / "my-campaign"),
              "HOST": "127.0.0.1", "PORT": str(port), "GRADER_BASE_URL": scripted_judge.base_url}
    substituted: set[str] = set()
    logs = tmp_path / "logs"
    logs.mkdir()
    terminal_log, serve_log = logs / "terminal.log", logs / "serve.log"
    serve: subprocess.Popen[Any] | None = None
    with terminal_log.open("w") as log:
        terminal = Terminal(env=embedded_environment(), folder=logs, log=log)
    try:
        for block in blocks:
            if block.role.startswith("same as "):
                continue
            script, found = with_values(block.text, values)
            substituted |= found
            what = f"README.md block at line {block.line}"
            if block.role == "run":
                terminal.run(script, what=what)
                continue
            # The second terminal: the first one's exported variables, then the block.
            with serve_log.open("w") as log:
                serve = subprocess.Popen(
                    ["bash", "--noprofile", "--norc", "-euc", script], cwd=REPO,
                    env={**terminal.environment(), "HEALTH_TOKEN": HEALTH_TOKEN},
                    stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True)
            wait_until_served(site, serve)
        assert substituted == set(values), "the walk-through sets these variables"
        assert serve is not None and serve.poll() is None, "the site is still served"
        tokens = terminal.environment()

        published = get_json(f"{site}/api/v1/campaigns/planets/leaderboards/",
                             tokens["ANN_TOKEN"])["leaderboards"]
        public = get_json(f"{site}/api/v1/campaigns/planets/leaderboards/")["leaderboards"]
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n{tail(terminal_log)}\n{tail(serve_log)}\n"
                             f"{tail(var_dir / 'log' / 'worker.log')}") from None
    finally:
        if serve is not None:
            stop_session(serve, signal.SIGINT)  # Ctrl-C, as the README says
        terminal.close()

    ac, pr = published
    assert (ac["track"], ac["published"], ac["edited_judgments"]) == ("ac", True, 2)
    assert [(row["run"], row["team"]) for row in ac["rows"]] == [
        (row["run"], row["team"]) for row in EXPECTED_AC]
    measures = [key for key in EXPECTED_AC[0] if key not in ("run", "team")]
    for row, expected in zip(ac["rows"], EXPECTED_AC, strict=True):
        assert {key: row[key] for key in measures} == pytest.approx(
            {key: expected[key] for key in measures}, abs=1e-12), row["run"]
    assert (pr["track"], pr["published"]) == ("pr", True)
    assert {row["run"]: row["ndcg@10"] for row in pr["rows"]} == pytest.approx(
        EXPECTED_NDCG, abs=1e-9)
    assert public == []  # results_release is in 2099
    # Everything was written under the walk-through's VAR_DIR, the serve script's log too.
    assert (var_dir / "db.sqlite3").is_file() and (var_dir / "log" / "worker.log").is_file()


def test_no_document_sends_its_reader_to_a_file_the_repository_does_not_have() -> None:
    """A clone has no design notes beside it: the READMEs, docs and demo files explain
    themselves, or point to the repository's own docs."""
    documents = [REPO / "README.md", *(REPO / "docs").glob("*.md"),
                 *(REPO / "demo").rglob("*.md"), *(REPO / "demo").rglob("*.yaml"),
                 REPO / "tests" / "data" / "README.md"]
    outside = [f"{path.relative_to(REPO)}:{number}"
               for path in documents
               for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               if re.search(r"DESIGN\.md|STYLE\.md|\.\./shared", line)]
    assert len(documents) >= 6 and outside == []
