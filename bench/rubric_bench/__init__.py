"""Benchmark: grading 50 ranking runs x 50 queries x depth 20 over a shared pool.

Writes a synthetic RUBRIC campaign: Q queries (default 50) with I exam questions each
in the test bank (default 5), a corpus pool of P passages per query (default 60), and R
ranking runs (default 50) that each retrieve `depth` passages per query (default 20)
from the pool, drawn with a seeded numpy RNG with weights 1 / (position + 1), so the
runs overlap heavily. It loads them through the real services into a throwaway SQLite
database (`campaign_load` from the YAML with its corpus and test bank, `run_submit` for
every run), starts a fake judge in a child process (the tests' scripted server,
tests/grading/scripted_server, with a responder that self-rates by a hash of the prompt
after a fixed latency, default 50 ms, in at most S requests at once, default 16), and
grades every run as `manage.py grade` does (`part_grading`, one run after another, the
judge client's concurrency = S). It prints, measured side by side in this one run:
- runs x queries x depth x items (what grading each run on its own would cost), the
  distinct (passage, item) pairs the runs retrieved, the judge calls made (the fake
  server's request counter) and the dedup ratio naive / made (a passage retrieved by
  ten runs is graded once per item: made must equal the distinct pairs);
- the wall time, the ideal time = calls x latency / S (every slot always busy) and the
  throughput ratio ideal / measured, for the whole pass, its first run (where nearly all
  the calls are) and the other runs;
- a second grading of every run, all cached: its judge calls (target 0) and its time.

Run: .venv/bin/python bench/bench_rubric.py [--runs 50] [--queries 50] [--depth 20]
     [--items 5] [--pool 60] [--latency 0.05] [--slots 16] [--seed 0] [--quick]
The machine's other load shows in every figure (the load average is printed). Uses a
throwaway SQLite database and media folder unless DATABASE_URL is set (then the tables
of that database are used; the campaign it creates is deleted afterwards).

Modules: content (the synthetic campaign's files), campaign (loading and submitting),
judge_server (the hashing self-rater and its child process), grading (one timed pass),
cli.
"""
