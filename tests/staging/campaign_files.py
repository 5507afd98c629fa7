"""The staging campaign's files: a campaign YAML, its questions, two PR runs, four AC runs.

Big enough that grading takes several seconds on the fake judge and splits into many
chunks (GRADING_CHUNK_NUGGETS), small enough for CI. Every text is a function of its
indices, so two scenarios (and the clean reference) grade the very same inputs.

The nuggets hold no capitalised name and no number after their first word: the
names-and-numbers rule (grading/r2c2/entailment_rule.py) then never contradicts the judge,
no judgment is doubtful, and the leaderboards publish without `force`. Some nuggets are
the same text citing the same passage in every AC run (one judgment shared by four
records); each answer is a text of its own run, so answers never share a judgment.

`expected_inputs` reads the written files back and counts the distinct judge inputs,
the yardstick the scenario holds the stored judgments to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

QUESTIONS = 40
PASSAGES_PER_QUESTION = 5
NUGGETS_PER_ANSWER = 8
#: Nuggets 1..SHARED_NUGGETS of a question are the same in every AC run.
SHARED_NUGGETS = 3

TEAMS = {"ALPHA": "ann", "BETA": "ben"}
ORGANISER = "olga"
PR_RUNS = ("ALPHA-PO-1", "BETA-PG-1")
AC_RUNS = ("ALPHA-AC-1", "ALPHA-AC-2", "BETA-AC-1", "BETA-AC-2")

_ANIMALS = ("heron", "otter", "lynx", "badger", "falcon", "marten", "ibex", "crane",
            "stoat", "osprey", "newt", "vole", "wren", "hare", "seal", "moth")
_PLACES = ("harbour", "orchard", "quarry", "meadow", "glacier", "delta", "forest",
           "estuary", "plateau", "marsh", "canyon", "lagoon")
_DEEDS = ("nests near", "hunts in", "winters in", "feeds along", "sleeps in",
          "migrates past", "breeds in", "hides in")
_SEASONS = ("spring", "summer", "autumn", "winter")


def _word(words: tuple[str, ...], index: int) -> str:
    return words[index % len(words)]


def qid(q: int) -> str:
    return f"Q{q:03d}"


def question_text(q: int) -> str:
    return f"Where does the {_word(_ANIMALS, q)} of the {_word(_PLACES, q * 5)} live?"


def passage_text(run: int, q: int, rank: int) -> str:
    animal, place = _word(_ANIMALS, q + rank), _word(_PLACES, q * 3 + rank + run)
    return (f"Field notes on the {animal}: it {_word(_DEEDS, q + rank)} the {place} "
            f"in {_word(_SEASONS, q + run)}, and observers from the {_word(_PLACES, rank)} "
            f"station report it every year (run {run}, question {q}, passage {rank}).")


def nugget_text(variant: int, q: int, n: int) -> str:
    """A nugget in lower case without numbers; shared by every run below SHARED_NUGGETS."""
    base = (f"The {_word(_ANIMALS, q + n)} {_word(_DEEDS, q * 7 + n)} the "
            f"{_word(_PLACES, q + n * 2)}")
    if n <= SHARED_NUGGETS:
        return base + "."
    return base + f" in {_word(_SEASONS, variant + n)}, as the {_word(_ANIMALS, variant * 3 + n)} "\
        f"watchers say."


def cited(variant: int, q: int, n: int) -> tuple[str, int]:
    """(PR run, rank) a nugget cites: shared nuggets always the same passage."""
    if n <= SHARED_NUGGETS:
        return PR_RUNS[n % 2], n
    return PR_RUNS[(variant + n) % 2], 1 + (variant + n) % PASSAGES_PER_QUESTION


def answer_text(run_name: str, q: int) -> str:
    return f"By the {_word(_PLACES, q + len(run_name))}, says {run_name} about {qid(q)}"


@dataclass(frozen=True)
class Phases:
    """The campaign's deadlines relative to now: PR runs shared or not, results out or not."""

    pr_shared: bool
    results_out: bool

    def yaml(self, now: datetime) -> str:
        minutes = [now - timedelta(minutes=n) for n in (3, 2, 1)]
        future = [now + timedelta(days=n) for n in (29, 30, 31)]
        if self.results_out:  # every deadline behind, in their order
            pr_due, ac_due, results_release = minutes
        else:
            pr_due = minutes[2] if self.pr_shared else future[0]
            ac_due, results_release = future[1:]
        return (f"  topics_release: {(now - timedelta(days=2)).isoformat()}\n"
                f"  pr_due: {pr_due.isoformat()}\n"
                f"  ac_due: {ac_due.isoformat()}\n"
                f"  results_release: {results_release.isoformat()}\n")


def write_campaign_yaml(folder: Path, *, slug: str, phases: Phases, now: datetime) -> Path:
    """The campaign file (questions.txt beside it); written again to move its phases."""
    teams = "".join(f"  - {{name: {team}, members: [{member}]}}\n"
                    for team, member in TEAMS.items())
    path = folder / f"{slug}.yaml"
    path.write_text(
        f"slug: {slug}\n"
        f"title: Staging campaign {slug}\n"
        "timezone: UTC\n"
        "phases:\n" + phases.yaml(now) +
        "tracks:\n"
        "  - {slug: pr, kind: pr, max_runs_per_team: 4}\n"
        "  - {slug: ac, kind: ac, max_runs_per_team: 4, answer_check: nuggets}\n"
        "questions: questions.txt\n"
        f"organisers: [{ORGANISER}]\n"
        "teams:\n" + teams,
        encoding="utf-8")
    return path


def write_run_files(folder: Path) -> dict[str, Path]:
    """questions.txt and every run file under `folder`; run name -> path."""
    (folder / "questions.txt").write_text(
        "".join(f"{qid(q)};{question_text(q)}\n" for q in range(1, QUESTIONS + 1)),
        encoding="utf-8")
    written: dict[str, Path] = {}
    for number, name in enumerate(PR_RUNS):
        lines = [f"{qid(q)};{rank};doc-{number}-{q}-{rank};{passage_text(number, q, rank)}\n"
                 for q in range(1, QUESTIONS + 1)
                 for rank in range(1, PASSAGES_PER_QUESTION + 1)]
        written[name] = folder / name
        written[name].write_text("".join(lines), encoding="utf-8")
    for variant, name in enumerate(AC_RUNS):
        blocks = []
        for q in range(1, QUESTIONS + 1):
            nuggets = []
            for n in range(1, NUGGETS_PER_ANSWER + 1):
                pr_run, rank = cited(variant, q, n)
                nuggets.append(f"{n};{pr_run};{rank};{nugget_text(variant, q, n)}\n")
            confidence = (q * 37 + variant * 11) % 101
            blocks.append(f"<{qid(q)}>\n{answer_text(name, q)};{confidence}\n"
                          + "".join(nuggets) + f"</{qid(q)}>\n")
        written[name] = folder / name
        written[name].write_text("".join(blocks), encoding="utf-8")
    return written


@dataclass(frozen=True)
class ExpectedInputs:
    """What the written runs ask the judge, counted from the files alone."""

    nugget_records: int
    entailment_inputs: int  # distinct (cited passage text, nugget text)
    answer_records: int
    answer_inputs: int  # distinct (question, answer): every answer text is its run's own


def expected_inputs(runs: dict[str, Path]) -> ExpectedInputs:
    passages: dict[tuple[str, str, int], str] = {}
    for name in PR_RUNS:
        for line in runs[name].read_text(encoding="utf-8").splitlines():
            q, rank, _docid, text = line.split(";", 3)
            passages[(name, q, int(rank))] = text
    pairs: set[tuple[str, str]] = set()
    answers: set[tuple[str, str]] = set()
    nugget_records = answer_records = 0
    for name in AC_RUNS:
        question = ""
        for line in runs[name].read_text(encoding="utf-8").splitlines():
            if line.startswith("</"):
                continue
            if line.startswith("<"):
                question = line.strip("<>")
                continue
            fields = line.split(";", 3)
            if len(fields) == 2:  # the answer line: [answer];[confidence]
                answers.add((question, fields[0]))
                answer_records += 1
            else:
                _num, pr_run, rank, text = fields
                pairs.add((passages[(pr_run, question, int(rank))], text))
                nugget_records += 1
    return ExpectedInputs(nugget_records=nugget_records, entailment_inputs=len(pairs),
                          answer_records=answer_records, answer_inputs=len(answers))
