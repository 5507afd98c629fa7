"""Benchmark: validating and storing a 50 MB PR run.

Builds a synthetic PR run of 1,000 questions x 20 passages x ~400 words (~50 MB) and
a matching AC run, then prints, measured side by side in this one run:
- validator throughput (MB/s) and its ratio to a bare `for line in f: line.split(';', 3)`
  loop over the same file (target: at least 0.5);
- the time to upload, validate and store each run through the REST API;
- peak Python memory growth while validating and storing, against the file size
  (target: under 2x).

Run: .venv/bin/python bench/bench_validate.py [--questions 1000] [--words 400]
Uses a throwaway SQLite database and media folder unless DATABASE_URL is set (then
the tables of that database are used; the campaign it creates is deleted afterwards).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Short and long words averaging ~5 letters, so 400 words make ~2.5 kB: 50 MB in all.
WORDS = (
    "the", "film", "star", "cast", "role", "plot", "award", "box", "hit", "actor", "scene",
    "studio", "score", "sequel", "premiere", "director", "trilogy", "of", "in", "and", "a",
    "by", "was", "released", "adaptation", "cinematography", "screenplay",
)


def make_pr_run(path: Path, *, questions: int, passages: int, words: int) -> None:
    rng = random.Random(7)
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            for rank in range(1, passages + 1):
                text = " ".join(rng.choice(WORDS) for _ in range(words))
                # Some passages hold ';' of their own, as real text does.
                if rank % 5 == 0:
                    text = text.replace(" sequel ", "; sequel ", 1)
                out.write(f"Q{q:04d};{rank};doc{q}-{rank};{text}\n")


def make_ac_run(path: Path, *, questions: int, pr_run: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(1, questions + 1):
            out.write(f"<Q{q:04d}>\nanswer {q};{q % 101}\n")
            for n in range(1, 11):
                out.write(f"{n};{pr_run};{n};nugget {n} of question {q}; it cites rank {n}\n")
            out.write(f"</Q{q:04d}>\n")


def best_of(repeats: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--passages", type=int, default=20)
    parser.add_argument("--words", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    os.environ.setdefault("VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from submissions.formats.pr_run import iter_pr_run, validate_pr_run

    pr_path, ac_path = work / "BENCH-PO-1", work / "BENCH-AC-1"
    make_pr_run(pr_path, questions=args.questions, passages=args.passages, words=args.words)
    make_ac_run(ac_path, questions=args.questions, pr_run="BENCH-PO-1")
    size = pr_path.stat().st_size
    mb = size / 1e6
    qids = {f"Q{q:04d}" for q in range(1, args.questions + 1)}
    print(f"PR run: {mb:.1f} MB, {args.questions * args.passages} lines; "
          f"AC run: {ac_path.stat().st_size / 1e6:.1f} MB")

    def bare_loop() -> None:
        with pr_path.open(encoding="utf-8") as f:
            for line in f:
                line.split(";", 3)

    def validator() -> None:
        with pr_path.open("rb") as f:
            assert validate_pr_run(f, known_qids=qids) == []

    def parser_with_records() -> None:
        problems: list[object] = []
        with pr_path.open("rb") as f:
            for _ in iter_pr_run(f, problems, known_qids=qids):  # type: ignore[arg-type]
                pass
        assert problems == []

    # Interleaved, so all three see the same machine load.
    bare, valid, parsed = [], [], []
    for _ in range(args.repeats):
        bare.append(best_of(1, bare_loop))
        valid.append(best_of(1, validator))
        parsed.append(best_of(1, parser_with_records))
    bare_t, valid_t, parsed_t = min(bare), min(valid), min(parsed)
    print(f"bare split loop:        {mb / bare_t:8.1f} MB/s ({bare_t:.2f} s)")
    print(f"PR validator:           {mb / valid_t:8.1f} MB/s ({valid_t:.2f} s)")
    print(f"PR parser with records: {mb / parsed_t:8.1f} MB/s ({parsed_t:.2f} s)")
    print(f"validator / bare loop throughput ratio: {bare_t / valid_t:.2f} (target >= 0.5)")
    print(f"parser with records / bare loop ratio:  {bare_t / parsed_t:.2f}")

    call_command("migrate", verbosity=0)
    campaign_slug = _make_campaign(qids)
    try:
        _through_the_api(campaign_slug, pr_path, ac_path, mb)
        _memory(campaign_slug, pr_path, size)
    finally:
        from campaign.models import Campaign
        from submissions.models import Run

        Run.objects.filter(track__campaign__slug=campaign_slug).delete()
        Campaign.objects.filter(slug=campaign_slug).delete()


def _make_campaign(qids: set[str]) -> str:
    from datetime import timedelta

    from django.contrib.auth.models import User
    from django.utils import timezone

    from campaign.models import Campaign, Membership, Question, Role, Team, Track

    now = timezone.now()
    campaign = Campaign.objects.create(
        slug=f"bench-{os.getpid()}", title="bench", topics_release=now - timedelta(days=2),
        pr_due=now - timedelta(days=1), ac_due=now + timedelta(days=1))
    Question.objects.bulk_create(Question(campaign=campaign, qid=q, text=q) for q in sorted(qids))
    for slug in ("pr", "ac"):
        Track.objects.create(campaign=campaign, slug=slug, kind=slug)
    Team.objects.create(campaign=campaign, name="BENCH")
    user, _ = User.objects.get_or_create(username="bench-organiser")
    Membership.objects.create(campaign=campaign, user=user, role=Role.ORGANISER)
    return campaign.slug


def _through_the_api(slug: str, pr_path: Path, ac_path: Path, mb: float) -> None:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(User.objects.get(username="bench-organiser"))
    for track, path in (("pr", pr_path), ("ac", ac_path)):
        with path.open("rb") as file:
            started = time.perf_counter()
            response = client.post(f"/api/v1/campaigns/{slug}/runs/",
                                   {"track": track, "name": path.name, "file": file},
                                   format="multipart")
            elapsed = time.perf_counter() - started
        assert response.status_code == 201, response.content[:500]
        size = path.stat().st_size / 1e6
        print(f"API upload+validate+store {path.name}: {elapsed:.2f} s "
              f"({size / elapsed:.1f} MB/s, {response.json()['records']} records)")


def _memory(slug: str, pr_path: Path, size: int) -> None:
    from django.contrib.auth.models import User

    from campaign.models import Track
    from submissions.services import run_submit

    track = Track.objects.get(campaign__slug=slug, slug="pr")
    user = User.objects.get(username="bench-organiser")
    tracemalloc.start()
    with pr_path.open("rb") as file:
        run_submit(track=track, user=user, name=pr_path.name, file=file, size=size)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory growth while validating+storing: {peak / 1e6:.1f} MB = "
          f"{peak / size:.2f} x the file size (target < 2)")


if __name__ == "__main__":
    main()
