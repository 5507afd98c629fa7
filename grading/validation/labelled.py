"""Labelled sets for judge validation: JSON Lines of entailment and answer items, every line
checked (docs/judging.md, "Validating the judge")."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The project's own dev set: the default of `judge_eval --set`.
DEV_SET = Path(__file__).with_name("dev.jsonl")

LINE_NOT_JSON = "{path}: line {line}: not a JSON object ({problem})"
LINE_FIELD = "{path}: line {line}: {field}: expected {expected}, found {found!r}"
LINE_UNKNOWN_KIND = "{path}: line {line}: kind: expected 'entailment' or 'answer', found {found!r}"
LINE_DUPLICATE_ID = "{path}: line {line}: id {id!r} already used on line {first}"
LINE_RELEVANT_UNKNOWN = "{path}: line {line}: relevant: {found} names no listed nugget"
LINE_RELEVANT_WRONG = "{path}: line {line}: relevant must be empty when correct is false"
NOT_UTF8 = "{path}: not UTF-8 text ({problem})"
NO_ITEMS = "{path}: holds no items"
NO_SUCH_SET = "{path}: no such file"


class LabelledSetError(ValueError):
    """The set cannot be used; `problems` lists every reason, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class EntailmentItem:
    id: str
    category: str
    passage: str
    nugget: str
    entailed: bool


@dataclass(frozen=True)
class AnswerItem:
    id: str
    category: str
    question: str
    gold_answers: tuple[str, ...]
    answer: str
    nuggets: tuple[tuple[int, str], ...]
    correct: bool
    relevant: tuple[int, ...]


LabelledItem = EntailmentItem | AnswerItem


@dataclass(frozen=True)
class LabelledSet:
    name: str
    sha256: str  # of the file's bytes: which set a stored validation used
    items: tuple[LabelledItem, ...]

    @property
    def entailment(self) -> list[EntailmentItem]:
        return [item for item in self.items if isinstance(item, EntailmentItem)]

    @property
    def answers(self) -> list[AnswerItem]:
        return [item for item in self.items if isinstance(item, AnswerItem)]


class _Line:
    def __init__(self, path: Path, number: int, data: dict[str, Any], problems: list[str]):
        self.path, self.number, self.data, self.problems = path, number, data, problems

    def _bad(self, field: str, expected: str) -> None:
        self.problems.append(LINE_FIELD.format(path=self.path, line=self.number, field=field,
                                               expected=expected, found=self.data.get(field)))

    def text(self, field: str) -> str:
        value = self.data.get(field)
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            self._bad(field, "non-empty text")
            return ""
        return value

    def flag(self, field: str) -> bool:
        value = self.data.get(field)
        if not isinstance(value, bool):
            self._bad(field, "true or false")
            return False
        return value

    def texts(self, field: str) -> tuple[str, ...]:
        value = self.data.get(field)
        if not isinstance(value, list) or not value or not all(
                isinstance(v, str) and v.strip() for v in value):
            self._bad(field, "a non-empty list of texts")
            return ()
        return tuple(value)

    def nuggets(self) -> tuple[tuple[int, str], ...]:
        value = self.data.get("nuggets")
        ok = isinstance(value, list) and all(
            isinstance(n, dict) and isinstance(n.get("num"), int)
            and not isinstance(n.get("num"), bool) and n["num"] >= 1
            and isinstance(n.get("text"), str) and n["text"].strip() for n in value)
        nums = [n["num"] for n in value] if ok and isinstance(value, list) else []
        if not ok or len(set(nums)) != len(nums):
            self._bad("nuggets", 'a list of {"num": positive integer, "text": text}, '
                                 "numbers unique")
            return ()
        assert isinstance(value, list)
        return tuple(sorted((n["num"], n["text"]) for n in value))

    def numbers(self, field: str) -> tuple[int, ...]:
        value = self.data.get(field)
        if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
            self._bad(field, "a list of nugget numbers")
            return ()
        return tuple(sorted(set(value)))


def _item(line: _Line) -> LabelledItem | None:
    kind = line.data.get("kind")
    common = {"id": line.text("id"), "category": line.text("category")}
    if kind == "entailment":
        return EntailmentItem(**common, passage=line.text("passage"),
                              nugget=line.text("nugget"), entailed=line.flag("entailed"))
    if kind == "answer":
        item = AnswerItem(**common, question=line.text("question"),
                          gold_answers=line.texts("gold_answers"), answer=line.text("answer"),
                          nuggets=line.nuggets(), correct=line.flag("correct"),
                          relevant=line.numbers("relevant"))
        unknown = sorted(set(item.relevant) - {num for num, _ in item.nuggets})
        where = {"path": line.path, "line": line.number}
        if unknown:
            line.problems.append(LINE_RELEVANT_UNKNOWN.format(**where, found=unknown))
        if item.relevant and not item.correct:
            line.problems.append(LINE_RELEVANT_WRONG.format(**where))
        return item
    line.problems.append(LINE_UNKNOWN_KIND.format(path=line.path, line=line.number,
                                                  found=kind))
    return None


def read_labelled_set(path: Path) -> LabelledSet:
    """Read and check a labelled set; LabelledSetError lists every problem found."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise LabelledSetError([NO_SUCH_SET.format(path=path)]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise LabelledSetError([NOT_UTF8.format(path=path, problem=error.reason)]) from None
    problems: list[str] = []
    items: list[LabelledItem] = []
    first_line: dict[str, int] = {}
    for number, content in enumerate(text.splitlines(), start=1):
        if not content.strip():
            continue
        try:
            data = json.loads(content)
        except json.JSONDecodeError as error:
            problems.append(LINE_NOT_JSON.format(path=path, line=number, problem=error.msg))
            continue
        if not isinstance(data, dict):
            problems.append(LINE_NOT_JSON.format(path=path, line=number,
                                                 problem=type(data).__name__))
            continue
        item = _item(_Line(path, number, data, problems))
        if item is None:
            continue
        if item.id in first_line:
            problems.append(LINE_DUPLICATE_ID.format(path=path, line=number, id=item.id,
                                                     first=first_line[item.id]))
        first_line.setdefault(item.id, number)
        items.append(item)
    if not items and not problems:
        problems.append(NO_ITEMS.format(path=path))
    if problems:
        raise LabelledSetError(problems)
    return LabelledSet(name=path.name, sha256=hashlib.sha256(raw).hexdigest(),
                       items=tuple(items))
