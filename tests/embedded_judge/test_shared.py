"""One embedded judge per machine, found through its record, kept by its users' leases
(embedded_judge.shared).

The servers here are the stand-in of `standin_judge.py` (the real child's start-up
protocol and lifetime, no model), so each start takes a Python start-up, not a model
load. Every start appends the stand-in's pid to a file, which counts the servers started
whatever process started them.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from embedded_judge.records import SharedJudge, record_path
from embedded_judge.shared import find_judge, shared_judge, stop_judge
from tests.embedded_judge.standin_judge import standin_launch

REPO = Path(__file__).resolve().parents[2]
MODEL = "standin-judge"
#: How long a stand-in stays up unused: long enough to see it outlive a user, short
#: enough to see it go.
IDLE = 1.0

# A process that waits for a line on stdin (the starting gun), asks for the judge,
# prints what it got and its own pid, then keeps running (and keeps its lease) until
# its stdin closes.
CONTENDER = """
import json, os, sys
from dataclasses import asdict
from pathlib import Path
from embedded_judge.shared import shared_judge
from tests.embedded_judge.standin_judge import standin_launch
var_dir, starts, idle = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[4])
sys.stdin.readline()
judge = shared_judge(sys.argv[3], var_dir=var_dir, launch=standin_launch(starts),
                     idle_seconds=idle)
print(json.dumps({"me": os.getpid(), **asdict(judge)}), flush=True)
sys.stdin.read()
"""

# The Celery case without Celery: a process takes the judge, then forks a child (as a
# prefork worker does); the parent reports, then waits for its stdin to close while
# the child lives on, waiting for its own stdin (inherited) to close.
FORKER = """
import json, os, sys
from pathlib import Path
from embedded_judge import shared
from tests.embedded_judge.standin_judge import standin_launch
var_dir, starts, idle = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[4])
judge = shared.shared_judge(sys.argv[3], var_dir=var_dir, launch=standin_launch(starts),
                            idle_seconds=idle)
child = os.fork()
if child == 0:
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
    # This test process holds leases on whatever it asked for: stop those servers.
    for record in (tmp_path / "var" / "run").glob("*.json"):
        stop_judge(record.stem.removeprefix("embedded-judge-"), var_dir=tmp_path / "var")


def contender(var_dir: Path, starts: Path, model: str = MODEL,
              idle: float = IDLE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CONTENDER, str(var_dir), str(starts), model, str(idle)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def judge_of(process: subprocess.Popen[str]) -> dict[str, object]:
    """Fire a contender's starting gun and read the judge it got."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    return dict(json.loads(process.stdout.readline()))


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


def still_serving_for(seconds: float, model: str, var_dir: Path) -> SharedJudge:
    """The judge, asserted live at every look over `seconds` (a span longer than its idle
    time: it would have stopped within it, were nobody holding a lease)."""
    deadline = time.monotonic() + seconds
    while True:
        judge = find_judge(model, var_dir=var_dir)
        assert judge is not None
        if time.monotonic() > deadline:
            return judge
        time.sleep(0.1)  # looking again, not synchronising: nothing is waited for


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
    starters = [judge["me"] for judge in got if judge["started_by"] == judge["me"]]
    assert len(starters) == 1
    assert all(judge["started_by"] == starters[0] for judge in got)


def test_a_live_server_is_reused_by_a_second_process(var_dir: Path, starts: Path):
    mine = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts),
                        idle_seconds=IDLE)
    second = contender(var_dir, starts)
    out, _ = second.communicate("go\n", timeout=30)

    theirs = json.loads(out)
    assert (theirs["base_url"], theirs["pid"], theirs["started_by"]) == (
        mine.base_url, mine.pid, os.getpid())
    assert theirs["slots"] == 3
    assert started(starts) == [mine.pid]


def test_a_packaged_model_of_its_own_gets_a_server_of_its_own(var_dir: Path, starts: Path):
    first = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts),
                         idle_seconds=IDLE)
    other = shared_judge("other-judge", var_dir=var_dir, launch=standin_launch(starts),
                         idle_seconds=IDLE)

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
    # A dead pid: the server was killed, or the machine rebooted. A live pid whose
    # address no longer answers: the pid was reused by an unrelated process.
    record = record_path(MODEL, var_dir=var_dir)
    record.parent.mkdir(parents=True)
    old = SharedJudge(model=MODEL, base_url="http://127.0.0.1:9/v1", slots=4,
                      pid=gone_pid() if stale == "dead pid" else os.getpid(), started_by=1)
    record.write_text(json.dumps(asdict(old)))

    assert find_judge(MODEL, var_dir=var_dir) is None
    judge = shared_judge(MODEL, var_dir=var_dir, launch=standin_launch(starts),
                         idle_seconds=IDLE)

    assert started(starts) == [judge.pid]
    assert judge.started_by == os.getpid() and judge.base_url != old.base_url
    assert json.loads(record.read_text()) == asdict(judge)


def test_the_server_outlives_its_starter_while_another_process_uses_it(
    var_dir: Path, starts: Path
):
    first, second = contender(var_dir, starts), contender(var_dir, starts)
    try:
        judge = judge_of(first)
        assert judge_of(second)["pid"] == judge["pid"]
        first.communicate(timeout=30)  # the starter is gone: the grade command's case

        assert still_serving_for(4 * IDLE, MODEL, var_dir).pid == judge["pid"]
    finally:
        second.communicate(timeout=30)
    # Its last user gone, it stops once idle, and withdraws its record as it goes.
    wait_gone(int(str(judge["pid"])))
    assert not record_path(MODEL, var_dir=var_dir).exists()
    assert started(starts) == [judge["pid"]]


def test_a_user_killed_outright_lets_go_of_the_server(var_dir: Path, starts: Path):
    first = contender(var_dir, starts)
    judge = judge_of(first)
    first.send_signal(signal.SIGKILL)  # no atexit: the kernel drops its lease
    first.wait(timeout=30)

    wait_gone(int(str(judge["pid"])))
    assert not record_path(MODEL, var_dir=var_dir).exists()


def test_an_unused_server_waits_its_idle_time_before_it_stops(var_dir: Path, starts: Path):
    user = contender(var_dir, starts, idle=3.0)
    judge = judge_of(user)
    user.communicate(timeout=30)
    stopped_by = time.monotonic() + 3.0

    # Unused, it still serves the next command of a script that comes within its idle time.
    assert find_judge(MODEL, var_dir=var_dir) is not None
    wait_gone(int(str(judge["pid"])))
    assert time.monotonic() >= stopped_by - 0.5


def test_stop_judge_stops_it_whoever_uses_it(var_dir: Path, starts: Path):
    user = contender(var_dir, starts, idle=600)
    try:
        judge = judge_of(user)
        stopped = stop_judge(MODEL, var_dir=var_dir)
        wait_gone(int(str(judge["pid"])))
    finally:
        user.communicate(timeout=30)

    assert stopped is not None and stopped.pid == judge["pid"]
    assert not record_path(MODEL, var_dir=var_dir).exists()
    assert stop_judge(MODEL, var_dir=var_dir) is None


def test_a_forked_child_keeps_the_lease_it_shares_with_its_parent(
    var_dir: Path, starts: Path
):
    parent = subprocess.Popen(
        [sys.executable, "-c", FORKER, str(var_dir), str(starts), MODEL, str(IDLE)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdin is not None and parent.stdout is not None
    pids = json.loads(parent.stdout.readline())
    try:
        parent.send_signal(signal.SIGKILL)  # the worker's main process goes
        parent.wait(timeout=30)

        # Its prefork child still uses the judge.
        assert still_serving_for(4 * IDLE, MODEL, var_dir).pid == pids["judge"]
    finally:
        parent.stdin.close()  # the child's stdin closes with it: it exits
        wait_gone(pids["child"])
    wait_gone(pids["judge"])
