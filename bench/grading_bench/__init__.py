"""Benchmark: grading >= 5,000 nugget records through the R2C2 judge pipeline (issue 4).

Starts a local OpenAI-compatible fake judge in a child process: the tests' scripted
server (tests/grading/scripted_server), threaded HTTP/1.1 on 127.0.0.1, with a responder
that answers every chat completion after a fixed latency (default 50 ms) while the
server serves at most C requests at once (default 16; more wait for a slot), so its
ideal throughput is C / latency. Its replies are valid and deterministic (a hash of the
prompt decides entailed, correct and relevant). It then builds a synthetic campaign in a
throwaway database, submitted through the real path (`run_submit`): one PR run and, per
batch size measured, one AC run of distinct nuggets (default 600 questions x 10 nuggets
= 6,000 entailment judgments plus 600 answer judgments). It prints, measured side by
side in this one run:
- the fake server alone, driven by a bare asyncio HTTP client, and the judge client
  alone (`OpenAIJudge.judge_many`, no database), against the ideal C / latency, with
  the CPU each spends per call; then the judge client against a zero-latency server:
  the most one process can issue on this machine;
- for each `run_grade` batch size: judgments made, elapsed, judgments/s and its ratio
  to the ideal (target: at least 0.9), with the time spent inside `judge_many` and
  outside it (hashing, queries, inserts, links) and the CPU per call on each side;
- the LLM calls the server receives on a second grading of the same campaign: the same
  runs graded again, and a new AC run with identical content (target: 0);
- with --embedded (the default), the judgments/s and seconds per judgment of the
  packaged llama.cpp judge (Qwen2.5-Coder-1.5B by default) on this machine, over a
  small sample of distinct nuggets (and a few answer evaluations) at concurrency 4.

Run: .venv/bin/python bench/bench_grading.py [--questions 600] [--latency 0.05]
     [--server-concurrency 16] [--client-concurrency C] [--batches 256,1024,8192]
     [--no-fake-judge] [--no-embedded] [--embedded-model qwen2.5-coder-1.5b]
     [--embedded-sample 24] [--embedded-answers 4]
The machine's other load shows in every figure (the load average is printed): the
judge client is CPU-bound at these rates, and llama.cpp slows down sharply when another
process competes for the cores.
Uses a throwaway SQLite database and media folder unless DATABASE_URL is set (then
the tables of that database are used; the campaign it creates is deleted afterwards).
The embedded model is taken from <repo>/var/models (installed from PyPI, 1.1 GB, if
it is not there yet).

Modules: content (the synthetic films, passages, nuggets and runs), campaign (the
database side), judge_server (the hashing judge and its child process), measuring
(timed judge calls and the probes), pipeline and embedded (the two parts), cli.
"""
