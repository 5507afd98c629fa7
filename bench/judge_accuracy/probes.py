"""Ask a served model every probe of a variant and keep the judge's probability per key.

Replies are kept in `var/bench/accuracy/<set>/<model>/<variant>.jsonl`, one line per
request, so an interrupted collection goes on where it stopped and the analysis is run
again without asking the model twice.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from embedded_judge.options import ServerOptions
from embedded_judge.server import EmbeddedJudge
from grading.llm.replies import verdict_probability
from grading.r2c2.entailment_rule import unsupported
from grading.r2c2.gold_match import gold_verdict
from grading.validation.labelled import LabelledSet
from judge_accuracy.variants import Probe, Variant

ROOT = Path(__file__).resolve().parents[2]
VAR = ROOT / "var"
STORE = VAR / "bench" / "accuracy"
LOG = VAR / "logs" / "bench-judge-accuracy.log"
SLOTS = 4


def p_true_by_field(tokens: Sequence[Mapping[str, Any]], fields: Iterable[str]
                    ) -> dict[str, float | None]:
    """Each field's probability of "true", at the token where its boolean is chosen: a
    bare boolean reply fills the one field; in an object, the token after `"field":`."""
    wanted = list(fields)
    found: dict[str, float | None] = {}
    text = ""
    for token in tokens:
        word = str(token.get("token", "")).strip().lower()
        if word in ("true", "false"):
            before = text.rstrip()
            if not before and len(wanted) == 1:
                found[wanted[0]] = verdict_probability([token], True)
            for field in wanted:
                if field not in found and before.endswith(f'"{field}":'):
                    found[field] = verdict_probability([token], True)
        text += str(token.get("token", ""))
    return found


def _ask(base_url: str, model: str, probe: Probe) -> dict[str, Any]:
    payload = {"model": model, "temperature": 0.0, "seed": 0, "logprobs": True,
               "top_logprobs": 5, **probe.payload}
    request = urllib.request.Request(f"{base_url}/chat/completions",
                                     data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=900) as response:
        reply = json.load(response)
    seconds = time.perf_counter() - started
    choice = reply["choices"][0]
    tokens = (choice.get("logprobs") or {}).get("content") or []
    text = choice["message"].get("content") or ""
    found = p_true_by_field(tokens, [f for f in probe.keys if f != "relevant"
                                     or probe.keys[f][1] >= 0])
    record: dict[str, Any] = {"keys": {f: list(k) for f, k in probe.keys.items()},
                              "p_true": found, "text": text, "seconds": seconds,
                              "prompt_tokens": reply.get("usage", {}).get("prompt_tokens"),
                              "completion_tokens":
                                  reply.get("usage", {}).get("completion_tokens")}
    if "relevant" in probe.keys and probe.keys["relevant"][1] < 0:
        try:
            listed = json.loads(text).get("relevant")
        except (ValueError, AttributeError):
            listed = None
        record["relevant_list"] = listed if isinstance(listed, list) else None
    return record


def _prefix(probe: Probe) -> str:
    """What a probe's prompt starts with, to its last part: the system message and the
    passage (entailment) or the question and answer (relevance, one nugget each)."""
    user = probe.payload["messages"][-1]["content"]
    head = user.rsplit("\n\n", 1)[0] if "\n\n" in user else user
    return probe.payload["messages"][0]["content"] + head


def needs_call(variant: Variant, item: Any) -> bool:
    """Whether the shipped pipeline would ask this variant about `item`: v2 and later
    decide first by rule (names and numbers; the gold answer key), v1 asked of every
    item; relevance is asked of answers a person marked correct with nuggets."""
    v1 = variant.name.endswith("-v1")
    if variant.subtask == "entailment":
        return v1 or not unsupported(item.passage, item.nugget)
    if variant.subtask == "gold":
        return v1 or gold_verdict(item.answer, item.gold_answers) is None
    if variant.subtask == "relevance":
        return item.correct and bool(item.nuggets)
    return True


def _items(variant: Variant, labelled: LabelledSet) -> list[Any]:
    pool: list[Any] = (labelled.entailment if variant.subtask == "entailment"
                       else labelled.answers)
    chosen = [item for item in pool if needs_call(variant, item)]
    # Claims on one passage in turn: the server reuses the passage's computed prompt.
    return sorted(chosen, key=lambda item: getattr(item, "passage", ""))


def store_path(set_name: str, model: str, variant: str) -> Path:
    return STORE / set_name.removesuffix(".jsonl") / model / f"{variant}.jsonl"


def stored(set_name: str, model: str, variant: str) -> list[dict[str, Any]]:
    path = store_path(set_name, model, variant)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def requests_per_second(set_name: str, model: str, variant: str) -> float | None:
    """The variant's requests per second of wall clock, over its collections."""
    path = store_path(set_name, model, variant).with_suffix(".time.jsonl")
    if not path.exists():
        return None
    runs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    seconds = sum(run["seconds"] for run in runs)
    return sum(run["requests"] for run in runs) / seconds if seconds > 0 else None


def collect(model: str, variants: Sequence[Variant], sets: Sequence[LabelledSet],
            say: Callable[[str], None]) -> None:
    """Ask `model` every probe of every variant on every set not yet stored."""
    todo = []
    for labelled in sets:
        for variant in variants:
            done = {json.dumps(r["keys"], sort_keys=True)
                    for r in stored(labelled.name, model, variant.name)}
            probes = [p for item in _items(variant, labelled) for p in variant.probes(item)
                      if json.dumps({f: list(k) for f, k in p.keys.items()},
                                    sort_keys=True) not in done]
            if probes:
                todo.append((labelled.name, variant, probes))
    if not todo:
        return
    with EmbeddedJudge(model, var_dir=VAR, options=ServerOptions(n_parallel=SLOTS),
                       progress=None, startup_timeout=900, log_path=LOG) as server:
        for set_name, variant, probes in todo:
            path = store_path(set_name, model, variant.name)
            path.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            groups: dict[str, list[Probe]] = {}
            for probe in probes:
                groups.setdefault(_prefix(probe), []).append(probe)

            def in_turn(group: list[Probe]) -> list[dict[str, Any]]:
                # One after another: the server computes the shared start of their
                # prompts once, in the slot that keeps it (as grading does).
                return [_ask(server.base_url, model, probe) for probe in group]

            with path.open("a") as out, ThreadPoolExecutor(SLOTS) as pool:
                for records in pool.map(in_turn, groups.values()):
                    for record in records:
                        out.write(json.dumps(record) + "\n")
                    out.flush()
            seconds = time.perf_counter() - started
            with path.with_suffix(".time.jsonl").open("a") as out:
                out.write(json.dumps({"requests": len(probes), "seconds": seconds}) + "\n")
            say(f"  {model} {variant.name} on {set_name}: {len(probes)} requests in "
                f"{seconds:.0f} s")

