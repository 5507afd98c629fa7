"""Test banks in the Autograding Workbench's JSON Lines shape: per query, the exam
questions or nuggets that define relevance (docs/rubric.md, "The test bank")."""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass

from .common import BinaryReader, ParseResult, Problem, TextSink, excerpt
from .jsonl import (
    EXPECTED_LIST_OF_OBJECTS,
    EXPECTED_OBJECT,
    MISSING_KEY,
    WRONG_TYPE,
    JsonObject,
    checked_string,
    dump_line,
    iter_json_objects,
    json_kind,
    string_list_value,
    string_value,
    unknown_keys,
)
from .limits import TOO_LONG
from .trec_run import UNKNOWN_QUERY

TARGET_QUESTIONS = "questions"
TARGET_NUGGETS = "nuggets"
TARGETS = (TARGET_QUESTIONS, TARGET_NUGGETS)

TEST_BANK_EXAMPLE = (
    '{"query_id": "q1", "query_text": "...", "info": {"prompt_target": "questions"}, '
    '"items": [{"question_id": "...", "question_text": "..."}]}'
)

BAD_TARGET = "found prompt_target {!r}; expected 'questions' or 'nuggets'"
DUPLICATE_QUERY_BANK = (
    "found query_id {!r} again (first on line {}); expected each query on one line only"
)
DUPLICATE_ITEM = (
    "found item id {!r} again (first on line {}); expected each item id once in the test bank"
)
ITEM_OF_ANOTHER_QUERY = "found query_id {!r} in {}; expected {!r}, the query of its line"
TWO_ANSWER_KEYS = "found both 'answers' and 'gold_answers' in {}; expected one answer key"
ID_TOO_LONG = "found an item id of {} characters; expected at most {}"
TOO_MANY_ANSWERS = "found {} answers; expected at most {}"

KEY_QUERY_ID = "query_id"
KEY_QUERY_TEXT = "query_text"
KEY_INFO = "info"
KEY_ITEMS = "items"
KEY_PROMPT_TARGET = "prompt_target"
KEY_ANSWERS = "answers"
#: The workbench's name for `answers` (its ``ExamQuestion.gold_answers``).
KEY_GOLD_ANSWERS = "gold_answers"

#: target -> (key of the item id, key of the item text).
ITEM_KEYS = {
    TARGET_QUESTIONS: ("question_id", "question_text"),
    TARGET_NUGGETS: ("nugget_id", "nugget_text"),
}
# Keys the workbench writes that this service has no use for (query facets, its
# versioning); accepted so that its files load, and dropped.
WORKBENCH_BANK_KEYS = ("facet_id", "facet_text", "test_collection", "hash")
WORKBENCH_ITEM_KEYS = ("query_id", "facet_id", "info")
BANK_KEYS = (KEY_QUERY_ID, KEY_QUERY_TEXT, KEY_INFO, KEY_ITEMS, *WORKBENCH_BANK_KEYS)
ITEM_KEYS_BY_TARGET = {
    TARGET_QUESTIONS: (*ITEM_KEYS[TARGET_QUESTIONS], KEY_ANSWERS, KEY_GOLD_ANSWERS),
    TARGET_NUGGETS: ITEM_KEYS[TARGET_NUGGETS],
}


@dataclass(frozen=True, slots=True)
class ItemLimits:
    """The caps on an item that the service holds the API to (campaign.bank_limits): characters
    of its text and of each answer, answers of a question, characters of its id."""

    text_chars: int
    answers: int
    id_chars: int


@dataclass(frozen=True, slots=True)
class BankItem:
    """One exam question or nugget of a query's test bank; `answers` is a question's answer key
    (EXAM++), or None."""

    item_id: str
    text: str
    answers: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class QueryBank:
    """One line of a test bank: query `query_id`, its text and its items; `target` says whether
    they are ``questions`` or ``nuggets``."""

    query_id: str
    query_text: str
    target: str
    items: tuple[BankItem, ...]


def default_item_id(query_id: str, text: str) -> str:
    """``query_id/md5(text)``: the id an item gets when none is given, as the workbench
    makes it (the text stripped of surrounding white space, UTF-8, hex digest)."""
    # An id, not a security measure: MD5 is what the workbench's ids are made of.
    digest = hashlib.md5(text.strip().encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"{query_id}/{digest}"


def parse_test_bank(
    binary_file: BinaryReader,
    *,
    known_qids: Container[str] | None = None,
    limits: ItemLimits | None = None,
) -> ParseResult[QueryBank]:
    """Parse a test bank, reporting every problem (an item past `limits` too); a record per
    line without problems."""
    problems: list[Problem] = []
    banks: list[QueryBank] = []
    query_lines: dict[str, int] = {}  # query_id -> its line
    item_lines: dict[str, int] = {}  # item id -> its line
    for lineno, obj in iter_json_objects(
        binary_file, problems, example=TEST_BANK_EXAMPLE, what="test-bank line"
    ):
        before = len(problems)
        unknown_keys(obj, BANK_KEYS, lineno, problems)
        query_id = string_value(obj, KEY_QUERY_ID, lineno, problems)
        if query_id is not None:
            if known_qids is not None and query_id not in known_qids:
                problems.append(
                    Problem(lineno, KEY_QUERY_ID, UNKNOWN_QUERY.format(excerpt(query_id)))
                )
            first_line = query_lines.setdefault(query_id, lineno)
            if first_line != lineno:
                problems.append(
                    Problem(
                        lineno,
                        KEY_QUERY_ID,
                        DUPLICATE_QUERY_BANK.format(excerpt(query_id), first_line),
                    )
                )
        query_text = string_value(obj, KEY_QUERY_TEXT, lineno, problems, line_breaks=True)
        raw_items = obj.get(KEY_ITEMS)
        if KEY_ITEMS not in obj:
            problems.append(
                Problem(lineno, KEY_ITEMS, MISSING_KEY.format(KEY_ITEMS, EXPECTED_LIST_OF_OBJECTS))
            )
            raw_items = []
        elif not isinstance(raw_items, list):
            problems.append(
                Problem(
                    lineno,
                    KEY_ITEMS,
                    WRONG_TYPE.format(json_kind(raw_items), KEY_ITEMS, EXPECTED_LIST_OF_OBJECTS),
                )
            )
            raw_items = []
        target = _target(obj, raw_items, lineno, problems)
        items = [
            _item(raw_item, f"{KEY_ITEMS}[{index}]", query_id, target, lineno, problems, limits)
            for index, raw_item in enumerate(raw_items)
        ]
        ids_of_line: set[str] = set()
        for index, item in enumerate(items):
            if item is None:
                continue
            first_line = item_lines.setdefault(item.item_id, lineno)
            if first_line != lineno or item.item_id in ids_of_line:
                problems.append(
                    Problem(
                        lineno,
                        f"{KEY_ITEMS}[{index}].{ITEM_KEYS[target][0]}",
                        DUPLICATE_ITEM.format(excerpt(item.item_id), first_line),
                    )
                )
            ids_of_line.add(item.item_id)
        if len(problems) == before and query_id is not None and query_text is not None:
            banks.append(
                QueryBank(query_id, query_text, target, tuple(i for i in items if i is not None))
            )
    return ParseResult(banks, problems)


def write_test_bank(banks: Iterable[QueryBank], text_file: TextSink) -> None:
    """Write `banks` one query per line, each item with its id and a question's answers;
    ValueError for an unknown target or a nugget with answers."""
    for bank in banks:
        if bank.target not in ITEM_KEYS:
            raise ValueError(f"target {bank.target!r} is neither 'questions' nor 'nuggets'")
        id_key, text_key = ITEM_KEYS[bank.target]
        items: list[dict[str, object]] = []
        for item in bank.items:
            obj: dict[str, object] = {id_key: item.item_id, text_key: item.text}
            if item.answers is not None:
                if bank.target != TARGET_QUESTIONS:
                    raise ValueError(f"nugget {item.item_id!r} has answers; only questions do")
                obj[KEY_ANSWERS] = list(item.answers)
            items.append(obj)
        text_file.write(
            dump_line(
                {
                    KEY_QUERY_ID: bank.query_id,
                    KEY_QUERY_TEXT: bank.query_text,
                    KEY_INFO: {KEY_PROMPT_TARGET: bank.target},
                    KEY_ITEMS: items,
                }
            )
        )


def _target(obj: JsonObject, raw_items: list[object], lineno: int, problems: list[Problem]) -> str:
    """What the items of a line are: ``info.prompt_target``, else told by their keys."""
    info = obj.get(KEY_INFO)
    if info is not None and not isinstance(info, dict):
        problems.append(
            Problem(lineno, KEY_INFO, WRONG_TYPE.format(json_kind(info), KEY_INFO, EXPECTED_OBJECT))
        )
    elif info is not None and KEY_PROMPT_TARGET in info:
        target = info[KEY_PROMPT_TARGET]
        if target in ITEM_KEYS:
            return str(target)
        found = target if isinstance(target, str) else json_kind(target)
        problems.append(
            Problem(lineno, f"{KEY_INFO}.{KEY_PROMPT_TARGET}", BAD_TARGET.format(excerpt(found)))
        )
    # The workbench's hand-made banks may have no info: the first item tells.
    first = raw_items[0] if raw_items else None
    if isinstance(first, Mapping) and any(key in first for key in ITEM_KEYS[TARGET_NUGGETS]):
        return TARGET_NUGGETS
    return TARGET_QUESTIONS


def _item(
    raw_item: object,
    path: str,
    query_id: str | None,
    target: str,
    lineno: int,
    problems: list[Problem],
    limits: ItemLimits | None = None,
) -> BankItem | None:
    """One item of a line, or None after reporting its problems."""
    if not isinstance(raw_item, dict):
        problems.append(
            Problem(lineno, path, WRONG_TYPE.format(json_kind(raw_item), path, EXPECTED_OBJECT))
        )
        return None
    before = len(problems)
    id_key, text_key = ITEM_KEYS[target]
    unknown_keys(
        raw_item,
        (*ITEM_KEYS_BY_TARGET[target], *WORKBENCH_ITEM_KEYS),
        lineno,
        problems,
        path=f"{path}.",
    )
    if KEY_QUERY_ID in raw_item:  # the workbench repeats the query in each item
        own_query = checked_string(
            raw_item[KEY_QUERY_ID], f"{path}.{KEY_QUERY_ID}", lineno, problems, line_breaks=False
        )
        if own_query is not None and query_id is not None and own_query != query_id:
            problems.append(
                Problem(
                    lineno,
                    f"{path}.{KEY_QUERY_ID}",
                    ITEM_OF_ANOTHER_QUERY.format(excerpt(own_query), path, excerpt(query_id)),
                )
            )
    text = string_value(raw_item, text_key, lineno, problems, path=f"{path}.", line_breaks=True)
    item_id = None
    if id_key in raw_item:
        item_id = checked_string(
            raw_item[id_key], f"{path}.{id_key}", lineno, problems, line_breaks=False
        )
    elif text is not None and query_id is not None:
        item_id = default_item_id(query_id, text)
    answers = _answers(raw_item, path, lineno, problems) if target == TARGET_QUESTIONS else None
    if len(problems) != before or item_id is None or text is None:
        return None
    item = BankItem(item_id, text, answers)
    if limits is not None:
        answers_key = KEY_ANSWERS if KEY_ANSWERS in raw_item else KEY_GOLD_ANSWERS
        over = _over_limits(item, (id_key, text_key, answers_key), path, lineno, limits)
        problems.extend(over)
        if over:
            return None
    return item


def _over_limits(
    item: BankItem, keys: tuple[str, str, str], path: str, lineno: int, limits: ItemLimits
) -> list[Problem]:
    """Where `item` is past `limits`: its id, its text, its answers (how many, how long)."""
    id_key, text_key, answers_key = keys
    over: list[Problem] = []
    if len(item.item_id) > limits.id_chars:
        over.append(Problem(lineno, f"{path}.{id_key}",
                            ID_TOO_LONG.format(len(item.item_id), limits.id_chars)))
    if len(item.text) > limits.text_chars:
        over.append(Problem(lineno, f"{path}.{text_key}",
                            TOO_LONG.format(len(item.text), "text", limits.text_chars)))
    answers = item.answers or ()
    if len(answers) > limits.answers:
        over.append(Problem(lineno, f"{path}.{answers_key}",
                            TOO_MANY_ANSWERS.format(len(answers), limits.answers)))
    over.extend(
        Problem(lineno, f"{path}.{answers_key}[{index}]",
                TOO_LONG.format(len(answer), "answer", limits.text_chars))
        for index, answer in enumerate(answers) if len(answer) > limits.text_chars
    )
    return over


def _answers(
    raw_item: JsonObject, path: str, lineno: int, problems: list[Problem]
) -> tuple[str, ...] | None:
    if KEY_ANSWERS in raw_item and KEY_GOLD_ANSWERS in raw_item:
        problems.append(Problem(lineno, path, TWO_ANSWER_KEYS.format(path)))
        return None
    key = KEY_ANSWERS if KEY_ANSWERS in raw_item else KEY_GOLD_ANSWERS
    if key not in raw_item or raw_item[key] is None:  # the workbench writes null as absent
        return None
    return string_list_value(raw_item[key], f"{path}.{key}", lineno, problems, line_breaks=True)
