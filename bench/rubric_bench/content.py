"""The synthetic RUBRIC campaign's files: YAML, queries, corpus, test bank and TREC runs.

Texts are pure functions of their indices (the films of bench/grading_bench/content.py);
the rankings are drawn with a seeded numpy RNG, so a size and a seed give the same files
and the same figures. Each query has a pool of passages; every run retrieves `depth` of
them per query, drawn without replacement with weights 1 / (position + 1) (a Zipf law:
every system finds the head of the pool, fewer find its tail), so the runs overlap
heavily, as TREC runs do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import yaml
from grading_bench.content import film, passage_text

TRACK = "dl"
ORGANISER = "bench-rubric-organiser"
RUNS_PER_TEAM = 5
PASSAGE_WORDS = 60

#: The test bank's exam questions about a query's film (at most this many items).
ITEM_TEMPLATES = (
    "Who directed {title}?",
    "In which year was {title} released?",
    "Which actors star in {title}?",
    "Who composed the music of {title}?",
    "Which studio produced {title}?",
    "Where was {title} shot?",
    "When did {title} premiere?",
    "What genre is {title}?",
    "How did critics receive {title}?",
    "Was {title} restored or re-released later?",
)
MAX_ITEMS = len(ITEM_TEMPLATES)


@dataclass(frozen=True)
class Sizes:
    runs: int
    queries: int
    depth: int
    items: int
    pool: int
    seed: int = 0

    @property
    def naive_calls(self) -> int:
        """What grading every run on its own would cost: runs x queries x depth x items."""
        return self.runs * self.queries * self.depth * self.items


@dataclass(frozen=True)
class CampaignFiles:
    yaml_path: Path
    runs: list[Path]
    retrieved: int  # distinct (qid, docid) over all runs: what grading has to rate


def qid(query: int) -> str:
    return f"Q{query:03d}"


def docid(query: int, position: int) -> str:
    return f"{qid(query)}-P{position:04d}"


def run_name(run: int) -> str:
    team, label = divmod(run, RUNS_PER_TEAM)
    return f"TEAM{team + 1:02d}-run{label + 1}"


def write_campaign(folder: Path, sizes: Sizes, slug: str) -> CampaignFiles:
    """Write campaign `slug`'s YAML and the files it names, and the run files, to `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    _write_questions(folder / "questions.txt", sizes)
    _write_corpus(folder / "corpus.jsonl", sizes)
    _write_test_bank(folder / "testbank.jsonl", sizes)
    yaml_path = folder / "campaign.yaml"
    yaml_path.write_text(yaml.safe_dump(_campaign_doc(sizes, slug), sort_keys=False),
                         encoding="utf-8")
    rankings = draw_rankings(sizes)
    runs = []
    for run, ranking in enumerate(rankings):
        path = folder / "runs" / run_name(run)
        _write_run(path, run_name(run), ranking)
        runs.append(path)
    retrieved = {(query, int(p)) for ranking in rankings for query, row in enumerate(ranking)
                 for p in row}
    return CampaignFiles(yaml_path=yaml_path, runs=runs, retrieved=len(retrieved))


def draw_rankings(sizes: Sizes) -> list[np.ndarray]:
    """Per run, a (queries x depth) array of pool positions, best first."""
    rng = np.random.default_rng(sizes.seed)
    weights = 1.0 / np.arange(1, sizes.pool + 1)
    weights /= weights.sum()
    return [np.stack([rng.choice(sizes.pool, size=sizes.depth, replace=False, p=weights)
                      for _ in range(sizes.queries)])
            for _ in range(sizes.runs)]


def _query_film_title(query: int, sizes: Sizes) -> str:
    return film(query * sizes.pool).title  # the film of the query's first pool passage


def _write_questions(path: Path, sizes: Sizes) -> None:
    lines = [f"{qid(q)};What do we know about the film {_query_film_title(q, sizes)}?"
             for q in range(sizes.queries)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_corpus(path: Path, sizes: Sizes) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(sizes.queries):
            for p in range(sizes.pool):
                text = passage_text(q * sizes.pool + p, PASSAGE_WORDS)
                out.write(json.dumps({"docid": docid(q, p), "text": text}) + "\n")


def _write_test_bank(path: Path, sizes: Sizes) -> None:
    with path.open("w", encoding="utf-8") as out:
        for q in range(sizes.queries):
            title = _query_film_title(q, sizes)
            items = [{"question_text": template.format(title=title)}
                     for template in ITEM_TEMPLATES[:sizes.items]]
            out.write(json.dumps({
                "query_id": qid(q), "query_text": f"What do we know about the film {title}?",
                "info": {"prompt_target": "questions"}, "items": items}) + "\n")


def _write_run(path: Path, name: str, ranking: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    depth = ranking.shape[1]
    with path.open("w", encoding="utf-8") as out:
        for q, row in enumerate(ranking):
            for rank, p in enumerate(row, start=1):
                out.write(f"{qid(q)} Q0 {docid(q, int(p))} {rank} {depth - rank + 1} {name}\n")


def _campaign_doc(sizes: Sizes, slug: str) -> dict[str, object]:
    now = datetime.now(UTC).replace(microsecond=0)
    teams = -(-sizes.runs // RUNS_PER_TEAM)
    return {
        "slug": slug,
        "title": "bench rubric",
        "timezone": "UTC",
        "phases": {"topics_release": (now - timedelta(days=2)).isoformat(),
                   "results_release": (now + timedelta(days=30)).isoformat()},
        "tracks": [{"slug": TRACK, "kind": "ranking", "max_runs_per_team": RUNS_PER_TEAM,
                    "due": (now + timedelta(days=1)).isoformat(), "depth": sizes.depth}],
        "questions": "questions.txt",
        "corpus": "corpus.jsonl",
        "test_bank": "testbank.jsonl",
        "organisers": [ORGANISER],
        "teams": [{"name": run_name(team * RUNS_PER_TEAM).split("-")[0], "members": []}
                  for team in range(teams)],
    }
