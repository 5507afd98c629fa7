"""Benchmark: grading >= 5,000 nugget records through the R2C2 judge pipeline.

Starts a local OpenAI-compatible fake judge in a child process: the tests' scripted
server (tests/grading/scripted_server), threaded HTTP/1.1 on 127.0.0.1, with a responder
that answers every chat completion so that each request holds one of the server's C
slots (default 16; more wait for a slot) for a fixed latency (default 50 ms), its own
work included, so its ideal throughput is C / latency calls/s. Its replies are valid and
deterministic (a hash of the prompt decides entailed, correct and relevant), with the
verdict's token logprobs, as vLLM and llama.cpp send them. It then builds a synthetic
campaign in a throwaway database, submitted through the real path (`run_submit`): one PR
run and, per (batch, prefetch) measured, one AC run of distinct nuggets (default 600
questions x 10 nuggets = 6,000 entailment judgments plus 600 answer judgments, about
9,000 calls with the answers' relevance calls). It prints, measured side by side in
this one run, each figure beside its anchor:
- the fake server alone, driven by a bare asyncio HTTP client (what the server itself
  sustains: the ideal, less its own overhead);
- the clients side by side, each making verdict calls at the latency and against a
  server that answers at once, with the CPU each spends per call: the openai SDK with
  its default (httpx) transport and with its aiohttp one (`DefaultAioHttpClient`), and
  the judge client (grading/llm/client.py) on a plain httpx pool and on aiohttp, the
  one grading uses where aiohttp is installed;
- for each `run_grade` batch size and GRADING_PREFETCH (default 0, the lock-step
  pipeline, batch after batch, and 2, the overlapped one): the calls the server
  received, elapsed, calls/s and the ratio to the ideal C / latency (targets: at least
  0.9 at 50 ms and 16 slots, 0.95 at 200 ms: run with --latency 0.2), and the CPU per
  call of the judge client, of the grading thread and of the server;
- the LLM calls the server receives on a second grading of the same campaign: the same
  runs graded again, and a new AC run with identical content (target: 0);
- with --workers (the default; needs Redis), one run graded by one real Celery worker
  and another by two, against a fake judge of their own (200 ms, 64 slots), the ratio
  of the two rates (target: at least 1.7), and the counts showing that no judgment was
  lost or made twice (workers.py);
- with --embedded (the default), the judgments/s and seconds per judgment of the
  packaged llama.cpp judge (Qwen2.5-Coder-1.5B by default) on this machine, over a
  small sample of distinct nuggets (and a few answer evaluations) at concurrency 4.

Run: .venv/bin/python bench/bench_grading.py [--questions 600] [--latency 0.05]
     [--server-concurrency 16] [--client-concurrency C] [--batches 1024] [--prefetch 0,2]
     [--no-fake-judge] [--no-workers] [--redis-url redis://127.0.0.1:6379/11]
     [--workers-latency 0.2] [--workers-slots 64] [--worker-concurrency 32]
     [--chunk-nuggets 500] [--no-embedded] [--embedded-model qwen2.5-coder-1.5b]
     [--embedded-sample 24] [--embedded-answers 4]
The machine's other load shows in every figure (the load average is printed): the
judge client is CPU-bound at these rates, and llama.cpp slows down sharply when another
process competes for the cores.
Uses a throwaway SQLite database and media folder unless DATABASE_URL is set (then
the tables of that database are used; the campaigns it creates are deleted afterwards).
The embedded model is taken from <repo>/var/models (installed from PyPI, 1.1 GB, if
it is not there yet).

Modules: content (the synthetic films, passages, nuggets and runs), campaign (the
database side), judge_server (the hashing judge and its child process), measuring
(the clients side by side, the server alone, one timed `run_grade`), pipeline, workers
and embedded (the three parts), cli.
"""
