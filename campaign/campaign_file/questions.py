"""The question files a campaign file names: questions, categories and gold answers, in
`[qID];[text]` lines, each problem told with its file and line (docs/formats.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from campaign.campaign_file.problems import NOT_UTF8
from campaign.campaign_file.tracks import TrackSpec

LINE_MALFORMED = "{path}: line {line}: expected '{expected}', found '{found}'"
LINE_BAD_QID = "{path}: line {line}: qID '{qid}' must be 1-64 characters without spaces or ';'"
DUPLICATE_QID = "{path}: line {line}: duplicate qID '{qid}' (first on line {first})"
UNKNOWN_QID = "{path}: line {line}: qID '{qid}' is not in {questions}"
NO_QUESTIONS = "{path}: no questions (expected '[qID];[Question]' lines)"
# A gold check without a gold answer has nothing to compare with: refused here, not
# found out by the judge.
GOLD_ANSWER_MISSING = (
    "{file}: question {qid} has no gold answer, but track {track} checks answers against "
    "the gold answers (answer_check: {check}); expected a '{qid};[answer]' line in {gold}"
)
NO_GOLD_FILE = "a gold_answers file (the campaign file names none)"
# The AC tracks' answer_check values that read the gold answers (grading.llm.prompts).
GOLD_CHECKS = ("gold", "both")

QID_RE = re.compile(r"^[^\s;]{1,64}$")


@dataclass(frozen=True)
class QuestionSpec:
    qid: str
    text: str
    category: str = ""
    gold_answers: tuple[str, ...] = ()


def read_questions(
    file: Path, paths: dict[str, Any], gold_named: Any, tracks: Sequence[TrackSpec],
) -> tuple[tuple[QuestionSpec, ...], dict[str, list[str]]]:
    """The questions, with the categories and gold answers of the files at `paths` (by key;
    a file that could not be found is left out), and every problem by the key of its file."""
    told: dict[str, list[str]] = {"questions": [], "categories": [], "gold_answers": []}
    questions = paths["questions"]
    texts = _question_texts(questions, told["questions"])
    if texts is None:
        return (), told
    categories = _keyed_lines(paths.get("categories"), "[qID];[category]", questions, texts,
                              told["categories"])
    golds = (_keyed_lines(paths["gold_answers"], "[qID];[answer]", questions, texts,
                          told["gold_answers"]) if "gold_answers" in paths else None)
    if golds is not None:
        told["gold_answers"] += _gold_problems(file, tracks, texts, golds,
                                               gold_named or NO_GOLD_FILE)
    return tuple(
        QuestionSpec(qid=qid, text=text, category=(categories or {}).get(qid, ("",))[-1],
                     gold_answers=tuple((golds or {}).get(qid, ())))
        for qid, text in texts.items()
    ), told


def _question_texts(path: Path, problems: list[str]) -> dict[str, str] | None:
    """qID -> question, each qID once; None when the file cannot be read."""
    content = _read(path, problems)
    if content is None:
        return None
    if not content.strip():
        problems.append(NO_QUESTIONS.format(path=path))
    texts: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, qid, text in _id_lines(path, content, "[qID];[Question]", problems):
        if qid in first_line:
            problems.append(DUPLICATE_QID.format(path=path, line=number, qid=qid,
                                                 first=first_line[qid]))
            continue
        first_line[qid] = number
        texts[qid] = text
    return texts


def _keyed_lines(path: Path | None, expected: str, questions: Path, texts: dict[str, str],
                 problems: list[str]) -> dict[str, list[str]] | None:
    """Lines ``[qID];[value]`` of an optional file, several per qID allowed; None where the
    file cannot be read."""
    if path is None:
        return {}
    content = _read(path, problems)
    if content is None:
        return None
    values: dict[str, list[str]] = {}
    for number, qid, value in _id_lines(path, content, expected, problems):
        if qid not in texts:
            problems.append(UNKNOWN_QID.format(path=path, line=number, qid=qid,
                                               questions=questions.name))
            continue
        values.setdefault(qid, []).append(value)
    return values


def _gold_problems(file: Path, tracks: Sequence[TrackSpec], texts: dict[str, str],
                   golds: dict[str, list[str]], gold: str) -> list[str]:
    """Every question has a gold answer where an AC track checks answers against them;
    each question without one is named (the first such track says why)."""
    checking = [track for track in tracks if track.answer_check in GOLD_CHECKS]
    if not checking:
        return []
    track = checking[0]
    return [GOLD_ANSWER_MISSING.format(file=file, qid=qid, track=track.slug,
                                       check=track.answer_check, gold=gold)
            for qid in texts if not golds.get(qid)]


def _read(path: Path, problems: list[str]) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(NOT_UTF8.format(file=path, problem=exc.reason))
        return None


def _id_lines(path: Path, content: str, expected: str,
              problems: list[str]) -> Iterator[tuple[int, str, str]]:
    """(line, qID, text) of each good non-blank line, the others' problems told in `problems`
    as they come, so that a file's problems stay in line order."""
    for number, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        qid, sep, rest = line.partition(";")
        qid, rest = qid.strip(), rest.strip()
        if not sep or not qid or not rest:
            problems.append(LINE_MALFORMED.format(path=path, line=number, expected=expected,
                                                  found=line))
        elif not QID_RE.match(qid):
            problems.append(LINE_BAD_QID.format(path=path, line=number, qid=qid))
        else:
            yield number, qid, rest
