"""The embedded judge for real: the packaged 0.5B model served by llama.cpp on loopback."""

from __future__ import annotations

import asyncio
import json
import select
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from embedded_judge import server as server_module
from embedded_judge.models import SMALL_MODEL
from embedded_judge.options import ServerOptions, is_healthy
from embedded_judge.server import EmbeddedJudge
from grading.llm.calls import JudgeCall, JudgeConfig
from grading.llm.client import JudgeClient
from grading.llm.parsing import VerdictLabel
from grading.llm.progress import work_done
from grading.llm.subtasks import ENTAILMENT_V2, entailment_v2

PASSAGE = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France. "
           "It was completed in 1889.")
REPO = Path(__file__).resolve().parents[2]
# Inputs the 0.5B model gets right at temperature 0 with a margin (its probability of the
# verdict token: about 0.76 against 0.14 for the first, 0.58 against 0.32 for the
# second; the same verdicts with 1, 2 or 4 requests decoded at once). It is a lenient
# judge: a merely unrelated claim ("Penguins live mostly in the Southern Hemisphere.")
# it calls entailed, at about 0.48 against 0.44, so that is no input to pin a test on;
# a flat denial it rejects.
ENTAILED_NUGGET = "The Eiffel Tower was completed in 1889."
CONTRADICTED_NUGGET = "The Eiffel Tower is not in Paris."


@pytest.mark.llm
def test_the_packaged_small_model_judges_entailment_right_with_full_provenance(
    model_var_dir: Path, tmp_path: Path
) -> None:
    judge = EmbeddedJudge(SMALL_MODEL, var_dir=model_var_dir,
                          options=ServerOptions(n_parallel=2, ctx_per_slot=2048),
                          log_path=tmp_path / "server.log")
    with judge:
        base_url = judge.base_url
        with urllib.request.urlopen(f"{base_url}/models", timeout=10) as response:
            listed = json.load(response)
        config = JudgeConfig(base_url=base_url, model=judge.model, concurrency=2,
                             timeout=900, max_tokens=256)  # far beyond a busy machine's

        async def judge_both() -> list[JudgeCall[VerdictLabel]]:
            async with JudgeClient(config) as client:
                return list(await asyncio.gather(
                    client.judge(entailment_v2(passage=PASSAGE, nugget=ENTAILED_NUGGET)),
                    client.judge(entailment_v2(passage=PASSAGE, nugget=CONTRADICTED_NUGGET))))

        work_before = work_done(_metrics(base_url))
        entailed, contradicted = asyncio.run(judge_both())
        work_after = work_done(_metrics(base_url))

    assert SMALL_MODEL in json.dumps(listed)
    # The counters the client watches while a reply is late are there, and rise with work.
    assert work_before is not None and work_after is not None and work_after > work_before
    assert entailed.label is not None and entailed.label.verdict is True, entailed.raw_output
    assert contradicted.label is not None and contradicted.label.verdict is False, (
        contradicted.raw_output)
    for call, nugget in ((entailed, ENTAILED_NUGGET), (contradicted, CONTRADICTED_NUGGET)):
        assert call.needs_review is False and call.error is None
        assert call.label is not None and json.loads(call.raw_output) is call.label.verdict
        # The server's token logprobs give the judge's probability of its verdict.
        assert call.confidence is not None and 0.5 <= call.confidence <= 1.0
        assert (call.kind, call.prompt_version) == ("entailment", ENTAILMENT_V2)
        assert call.model == call.served_model == SMALL_MODEL
        assert call.decoding == {"temperature": 0.0, "max_tokens": 256, "seed": 0}
        assert call.input_hash == entailment_v2(passage=PASSAGE, nugget=nugget).input_hash(
            model=SMALL_MODEL, decoding=config.decoding)
        assert call.prompt_tokens and call.completion_tokens
        assert call.finish_reason == "stop"
        assert call.latency > 0 and call.attempts == 1
    assert not is_healthy(f"{base_url.removesuffix('/v1')}/health", timeout=1.0)


@pytest.mark.llm
def test_serve_llm_serves_in_the_foreground_until_interrupted(model_var_dir: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "embedded_judge.server", "--model", SMALL_MODEL,
         "--var-dir", str(model_var_dir), "--port", "0", "--parallel", "1",
         "--ctx-per-slot", "1024"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 120)
        assert ready, "the server announced nothing in 120 s"
        announced = server.stdout.readline()
        address = announced.split(" at ", 1)[1].split("/v1", 1)[0]
        assert announced.startswith(f"serving {SMALL_MODEL} at http://127.0.0.1:")
        assert is_healthy(f"{address}/health")
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=30)

    assert code == 0
    assert not is_healthy(f"{address}/health", timeout=1.0)


# Stops the server the moment it is ready, five times over, in a child whose hang the test
# can see: the engine's task loop starts after its constructor returns and a stop sent
# before it runs is lost, so without waiting for that loop some of these hung forever.
_STOP_AT_ONCE = """
import sys, threading
from pathlib import Path
from embedded_judge.models import ensure_model
from embedded_judge.child import run_server
from embedded_judge.options import ServerOptions
model = ensure_model(sys.argv[1], var_dir=Path(sys.argv[2]))
for _ in range(5):
    stop = threading.Event()
    run_server(model, alias="m", options=ServerOptions(n_parallel=1, ctx_per_slot=512, port=0),
               on_ready=lambda address: stop.set(), stop=stop)
print("stopped 5 times")
"""


@pytest.mark.llm
def test_a_server_stopped_as_soon_as_it_is_ready_stops(model_var_dir: Path) -> None:
    stopped = subprocess.run(
        [sys.executable, "-c", _STOP_AT_ONCE, SMALL_MODEL, str(model_var_dir)],
        cwd=REPO, capture_output=True, text=True, timeout=300)

    assert stopped.stdout.strip() == "stopped 5 times", stopped.stderr[-2000:]


def test_a_server_that_dies_while_starting_is_reported_with_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    monkeypatch.setattr(server_module, "ensure_model", lambda *args, **kwargs: broken)
    judge = EmbeddedJudge(SMALL_MODEL, var_dir=tmp_path, startup_timeout=60,
                          log_path=tmp_path / "server.log")

    with pytest.raises(RuntimeError) as failed:
        judge.start()

    assert str(failed.value).startswith("the embedded judge exited with code 1 while starting")
    assert str(tmp_path / "server.log") in str(failed.value)
    with pytest.raises(RuntimeError, match="not running"):
        _ = judge.base_url


def _metrics(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url.removesuffix('/v1')}/metrics", timeout=10) as page:
        return str(page.read().decode())
