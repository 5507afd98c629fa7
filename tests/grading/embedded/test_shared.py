"""One embedded judge per machine, found through its record (grading.embedded.shared).

The servers here are the stand-in of `standin_judge.py` (the real child's start-up
protocol, no model), so each start takes a Python start-up, not a model load. Every
start appends the stand-in's pid to a file, which counts the servers started whatever
process started them.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from grading.embedded import shared
from grading.embedded.shared import (
    SharedJudge,
    find_judge,
    record_path,
    shared_judge,
    stop_started_judges,
)
from tests.grading.embedded.standin_judge import standin_launch

REPO = Path(__file__).resolve().parents[3]
MODEL = "standin-judge"

# A process that waits for a line on stdin (the starting gun), asks for the judge,
# prints what it got and its own pid, then keeps running (and keeps a server it
# started alive) until its stdin closes.
CONTENDER = """
import json, os, sys
from dataclasses import asdict
from pathlib import Path
from grading.embedded.shared import shared_judge
from tests.grading.embedded.standin_judge import standin_launch
var_dir, starts = Path(sys.argv[1]), Path(sys.argv[2])
sys.stdin.readline()
judge = shared_judge(sys.argv[3], var_dir=var_dir, launch=standin_launch(starts))
print(json.dumps({"me": os.getpid(), **asdict(judge)}), flush=True)
sys.stdin.read()
"""

# The Celery case without Celery: a process starts the judge, then forks a child that
# drops what it inherited (as a prefork child does on worker_process_init) and tries to
# stop the judge anyway; the parent reports, then waits for its stdin to close while the
# child lives on, waiting for its own stdin (inherited) to close.
FORKER = """
import json, os, sys
from pathlib import Path
from grading.embedded import shared
from tests.grading.embedded.standin_judge import standin_launch
var_dir, starts = Path(sys.argv[1]), Path(sys.argv[2])
judge = shared.shared_judge(sys.argv[3], var_dir=var_dir, launch=standin_launch(starts))
child = os.fork()
if child == 0:
    shared.forget_inherited_judges()
    shared.stop_started_judges()
    sys.stdin.read()
    os._exit(0)
print(json.dumps({"judge": judge.pid, "child": child}), flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def starts(tmp_path: Path) -> Path:
    return tmp_path / "starts"


@pytest.fixture
def var_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "var"
    stop_started_judges()  # whatever this test process started


def contender(var_dir: Path, starts: Path, model: str = MODEL) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CONTENDER, str(var_dir), str(starts), model],
                            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def started(starts: Path) -> list[int]:
    """The pids of the stand-in servers started so far."""
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, timeout: float = 30.0) -> None:
    """Block until `pid`, not necessarily our child, has exited (a pidfd turns readable
    then, zombie or not)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        exited, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    assert exited, f"process {pid} still runs after {timeout:.0f} s"


def test_processes_racing_to_start_the_judge_get_one_server(var_dir: Path, starts: Path):
    racers = [contender(var_dir, starts) for _ in range(3)]
    try:
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        got = [json.loads(racer.stdout.readline()) for racer in racers if racer.stdout]
    finally:
        for racer in racers:
            racer.communicate(timeout=30)

    assert len(started(starts)) == 1
    assert {(judge["base_url"], judge["pid"]) for judge in got} == {
        (got[0]["base_url"], started(starts)[0])}
    owners = [judge["me"] for judge in got if judge["owner_pid"] == judge["me"]]
    assert len(owners) == 1
    assert all(judge["owner_pid"] == owners[0] for judge in got)


def test_a_live_server_is_reused_by_a_second_process(var_dir: Path, starts: Path):
    mine = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts))
    second = contender(var_dir, starts)
    out, _ = second.communicate("go\n", timeout=30)

    theirs = json.loads(out)
    assert (theirs["base_url"], theirs["pid"], theirs["owner_pid"]) == (
        mine.base_url, mine.pid, os.getpid())
    assert theirs["slots"] == 3
    assert started(starts) == [mine.pid]


def test_a_packaged_model_of_its_own_gets_a_server_of_its_own(var_dir: Path, starts: Path):
    first = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts))
    other = shared_judge("other-judge", var_dir=var_dir, launch=standin_launch(starts))

    assert other.base_url != first.base_url
    assert find_judge(MODEL, var_dir=var_dir) == first
    assert find_judge("other-judge", var_dir=var_dir) == other
    assert sorted(started(starts)) == sorted([first.pid, other.pid])


def gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.mark.parametrize("stale", ["dead pid", "silent server"])
def test_a_stale_record_is_replaced(stale: str, var_dir: Path, starts: Path):
    # A dead pid: the server's starter crashed, or the machine rebooted. A live pid whose
    # address no longer answers: the pid was reused by an unrelated process.
    record = record_path(MODEL, var_dir=var_dir)
    record.parent.mkdir(parents=True)
    old = SharedJudge(model=MODEL, base_url="http://127.0.0.1:9/v1", slots=4,
                      pid=gone_pid() if stale == "dead pid" else os.getpid(), owner_pid=1)
    record.write_text(json.dumps(asdict(old)))

    assert find_judge(MODEL, var_dir=var_dir) is None
    judge = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts))

    assert started(starts) == [judge.pid]
    assert judge.owner_pid == os.getpid() and judge.base_url != old.base_url
    assert json.loads(record.read_text()) == asdict(judge)


def test_the_server_stops_with_its_starter_and_the_next_process_starts_another(
    var_dir: Path, starts: Path
):
    first = contender(var_dir, starts)
    out, _ = first.communicate("go\n", timeout=30)  # it exits: the grade command's case
    gone = json.loads(out)
    wait_gone(gone["pid"])

    assert find_judge(MODEL, var_dir=var_dir) is None
    assert not record_path(MODEL, var_dir=var_dir).exists()  # withdrawn at its exit
    judge = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts))
    assert started(starts) == [gone["pid"], judge.pid]


def test_a_starter_killed_outright_takes_its_server_along(var_dir: Path, starts: Path):
    first = contender(var_dir, starts)
    assert first.stdin is not None and first.stdout is not None
    first.stdin.write("go\n")
    first.stdin.flush()
    judge = json.loads(first.stdout.readline())
    first.send_signal(signal.SIGKILL)  # no atexit, no record withdrawn
    first.wait(timeout=30)
    wait_gone(judge["pid"])

    assert record_path(MODEL, var_dir=var_dir).exists()
    assert find_judge(MODEL, var_dir=var_dir) is None
    assert shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts)).pid != (
        judge["pid"])


def test_stopping_withdraws_the_record_and_the_server(var_dir: Path, starts: Path):
    judge = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts))
    assert shared.started_judge(MODEL, var_dir=var_dir) is not None

    stop_started_judges()

    assert not record_path(MODEL, var_dir=var_dir).exists()
    assert not pid_exists(judge.pid)
    assert shared.started_judge(MODEL, var_dir=var_dir) is None


def test_a_forked_child_neither_stops_nor_keeps_alive_its_parents_server(
    var_dir: Path, starts: Path
):
    parent = subprocess.Popen([sys.executable, "-c", FORKER, str(var_dir), str(starts), MODEL],
                              cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdin is not None and parent.stdout is not None
    pids = json.loads(parent.stdout.readline())
    try:
        # The child has tried to stop it; the judge still answers.
        judge = find_judge(MODEL, var_dir=var_dir)
        assert judge is not None and judge.pid == pids["judge"]

        parent.send_signal(signal.SIGKILL)  # the worker's main process goes
        parent.wait(timeout=30)
        wait_gone(pids["judge"])  # though the child still runs

        assert pid_exists(pids["child"])
    finally:
        parent.stdin.close()  # the child's stdin closes with it: it exits
        wait_gone(pids["child"])
