"""Writes for a RUBRIC campaign's test bank (add, edit, retire, load from the campaign file),
each audited and none deleting anything (docs/rubric.md, "The test bank"). The callers
check that only organisers ask."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from campaign.bank_limits import MAX_ANSWERS
from campaign.corpus import DataFileLoad
from campaign.models import (
    BankEditAction,
    BankItemStatus,
    Campaign,
    Question,
    TestBankEdit,
    TestBankItem,
    text_hash,
)
from campaign.vocabulary import PromptTarget
from submissions.formats.common import is_blank
from submissions.formats.control_characters import value_control_problem
from submissions.formats.test_bank import QueryBank, default_item_id

#: The limits on text (docs/formats.md): an answer or a nugget at most 4,000 characters,
#: an edit note at most 2,000; an exam question is held to the nugget's. Settings
#: (`MAX_ANSWER_CHARS`, `MAX_NOTE_CHARS`), the one source of every cap of a text.
MAX_ITEM_CHARS: int = settings.MAX_ANSWER_CHARS
MAX_NOTE_CHARS: int = settings.MAX_NOTE_CHARS

# --- messages (tests match them exactly) -------------------------------------------------
UNKNOWN_QUERY = "'{qid}' is not a query of {campaign}"
BAD_TARGET = "'{target}' is not a kind of item (expected questions or nuggets)"
OTHER_TARGET = (
    "query {qid} holds {held}, so its items cannot be {target} "
    "(the workbench's format has one kind of item per query)"
)
BLANK_TEXT = "the text is empty; expected the item's question or nugget"
TOO_LONG = "{what} has {length} characters; expected at most {most}"
CONTROL = "{what}: {problem}"
NOT_A_LIST = "expected a list of answers (strings), found {found}"
BLANK_ANSWER = "answer {index} is empty"
TOO_MANY_ANSWERS = "{count} answers; expected at most {most}"
NUGGET_ANSWERS = "a nugget has no answer key; answers are for questions only"
SAME_TEXT = "item {item_id} of query {qid} already says this"
NOTE_REQUIRED = "a note is required: say why the test bank changes"
RETIRED = "item {item_id} is retired (kept as history); add a new item instead"
NOTHING_TO_CHANGE = "nothing to change: give text, answers or status"
BAD_STATUS = "'{status}' is not a status an edit may set (expected draft or active)"

LOADED_FROM = "loaded from {file}"
ITEM_OF_OTHER_QUERY = (
    "{file}: line {line}: item {item_id} of query {qid} is stored for query {stored}; "
    "expected an item id of its own"
)
TARGET_MIXED = (
    "{file}: line {line}: query {qid} holds {target}, but its stored items not in the "
    "file are {held}; expected one kind of item per query"
)
RETIRED_KEPT = "test-bank item {item_id} is retired; the file's copy is not loaded"
ITEMS_KEPT = (
    "{count} test-bank item(s) are no longer in {file}; they are kept (retire them "
    "through the API or the organiser page if they should go)"
)


class TestBankRefused(Exception):
    """A test-bank change that may not be made; `field` names what to fix."""

    __test__ = False

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ItemChange:
    """What an edit asks for: None leaves that part as it is."""

    text: str | None = None
    answers: Sequence[str] | None = None
    status: str | None = None


def testbank_add(
    *, campaign: Campaign, user: User | None, qid: str, target: str, text: str,
    answers: Sequence[str] = (), status: str = BankItemStatus.ACTIVE, note: str = "",
) -> TestBankItem:
    """Add an item to query `qid`'s bank, with the workbench's default id."""
    question = Question.objects.filter(campaign=campaign, qid=qid).first()
    if question is None:
        raise TestBankRefused("qid", UNKNOWN_QUERY.format(qid=qid, campaign=campaign.slug))
    if target not in tuple(PromptTarget):
        raise TestBankRefused("target", BAD_TARGET.format(target=target))
    text = _checked_text(text)
    answers = _checked_answers(answers, target)
    _check_note(note, required=False)
    held = _held_target(question, exclude=None)
    if held is not None and held != target:
        raise TestBankRefused("target", OTHER_TARGET.format(qid=qid, held=held, target=target))
    _check_unsaid(question, text, exclude=None)
    item_id = _free_item_id(campaign, default_item_id(qid, text))
    with transaction.atomic():
        item = TestBankItem(campaign=campaign, question=question, item_id=item_id,
                            target=target, text=text, text_hash=text_hash(text),
                            answers=list(answers), status=status,
                            created_by=user)
        item.full_clean()
        item.save()
        _audit(item, user, BankEditAction.ADD, note, previous=None)
    return item


def testbank_edit(
    *, item: TestBankItem, user: User | None, change: ItemChange, note: str
) -> TestBankItem:
    """Change an item's text, answers or status (draft/active), audited with `note`; a new text
    gets a new `text_hash`, so the old text's grades are stale."""
    _check_note(note, required=True)
    if item.status == BankItemStatus.RETIRED:
        raise TestBankRefused("status", RETIRED.format(item_id=item.item_id))
    if change.text is None and change.answers is None and change.status is None:
        raise TestBankRefused("text", NOTHING_TO_CHANGE)
    text = item.text if change.text is None else _checked_text(change.text)
    answers = (list(item.answers) if change.answers is None
               else _checked_answers(change.answers, item.target))
    status = item.status if change.status is None else change.status
    if status not in (BankItemStatus.DRAFT, BankItemStatus.ACTIVE):
        raise TestBankRefused("status", BAD_STATUS.format(status=status))
    if text != item.text:
        _check_unsaid(item.question, text, exclude=item.pk)
    with transaction.atomic():
        previous = _snapshot(item)
        item.text, item.text_hash, item.answers, item.status = (
            text, text_hash(text), answers, status)
        item.full_clean()
        item.save()
        _audit(item, user, BankEditAction.EDIT, note, previous=previous)
    return item


def testbank_retire(*, item: TestBankItem, user: User | None,
                    note: str) -> TestBankItem:
    """Take an item out of the bank; it is kept, with its history, as `retired`."""
    _check_note(note, required=True)
    if item.status == BankItemStatus.RETIRED:
        raise TestBankRefused("status", RETIRED.format(item_id=item.item_id))
    with transaction.atomic():
        previous = _snapshot(item)
        item.status = BankItemStatus.RETIRED
        item.save(update_fields=["status", "updated_at"])
        _audit(item, user, BankEditAction.RETIRE, note, previous=previous)
    return item


def testbank_load(
    *, campaign: Campaign, banks: Sequence[QueryBank], source: Path
) -> DataFileLoad:
    """Store the test bank read from `source` (already checked, so line = index + 1), inside
    `campaign_load`'s transaction, which rolls back when `problems` is not empty."""
    load = DataFileLoad()
    questions = {q.qid: q for q in campaign.questions.all()}
    stored = {item.item_id: item for item in
              TestBankItem.objects.filter(campaign=campaign).select_related("question")}
    note = LOADED_FROM.format(file=source.name)
    named: set[str] = set()
    new = changed = 0
    for line, bank in enumerate(banks, 1):
        question = questions[bank.query_id]
        ids = {item.item_id for item in bank.items}
        named |= ids
        others = {item.target for item in stored.values() if item.question_id == question.pk
                  and item.item_id not in ids and item.status != BankItemStatus.RETIRED}
        if others - {bank.target}:
            load.problems.append(TARGET_MIXED.format(
                file=source, line=line, qid=bank.query_id, target=bank.target,
                held=", ".join(sorted(others))))
            continue
        for bank_item in bank.items:
            answers = list(bank_item.answers or ())
            item = stored.get(bank_item.item_id)
            if item is None:
                item = TestBankItem(campaign=campaign, question=question,
                                    item_id=bank_item.item_id, target=bank.target,
                                    text=bank_item.text, text_hash=text_hash(bank_item.text),
                                    answers=answers, status=BankItemStatus.ACTIVE)
                item.full_clean()
                item.save()
                _audit(item, None, BankEditAction.ADD, note, previous=None)
                new += 1
            elif item.question_id != question.pk:
                load.problems.append(ITEM_OF_OTHER_QUERY.format(
                    file=source, line=line, item_id=item.item_id, qid=bank.query_id,
                    stored=item.question.qid))
            elif item.status == BankItemStatus.RETIRED:
                load.warnings.append(RETIRED_KEPT.format(item_id=item.item_id))
            elif (item.text, list(item.answers), item.target) != (
                    bank_item.text, answers, bank.target):
                previous = _snapshot(item)
                item.text, item.text_hash, item.answers, item.target = (
                    bank_item.text, text_hash(bank_item.text), answers, bank.target)
                item.full_clean()
                item.save()
                _audit(item, None, BankEditAction.EDIT, note, previous=previous)
                changed += 1
    kept = sum(1 for item_id, item in stored.items()
               if item_id not in named and item.status != BankItemStatus.RETIRED)
    if kept:
        load.warnings.append(ITEMS_KEPT.format(count=kept, file=source.name))
    load.counts = {"test-bank items": len(named), "new test-bank items": new,
                   "changed test-bank items": changed}
    return load


def _free_item_id(campaign: Campaign, item_id: str) -> str:
    """`item_id`, or with a suffix if taken: an id is of an item's *first* text, so an
    item edited since, or a retired one, may hold the id of the text being added."""
    taken = set(TestBankItem.objects.filter(campaign=campaign, item_id__startswith=item_id)
                .values_list("item_id", flat=True))
    candidate, n = item_id, 1
    while candidate in taken:
        n += 1
        candidate = f"{item_id}-{n}"
    return candidate


def _snapshot(item: TestBankItem) -> dict[str, Any]:
    return {"text": item.text, "answers": list(item.answers), "status": item.status}


def _audit(item: TestBankItem, user: User | None, action: str, note: str,
           previous: dict[str, Any] | None) -> None:
    previous = previous or {"text": "", "answers": [], "status": ""}
    TestBankEdit.objects.create(
        item=item, user=user, action=action,
        note=note, previous_text=previous["text"], previous_answers=previous["answers"],
        previous_status=previous["status"], text=item.text, answers=list(item.answers),
    )


def _held_target(question: Question, *, exclude: int | None) -> str | None:
    """The kind of item the query's bank holds (retired items aside), if any."""
    items = question.bank_items.current()
    if exclude is not None:
        items = items.exclude(pk=exclude)
    target: str | None = items.values_list("target", flat=True).first()
    return target


def _check_unsaid(question: Question, text: str, *, exclude: int | None) -> None:
    same = question.bank_items.current().filter(
        text_hash=text_hash(text))
    if exclude is not None:
        same = same.exclude(pk=exclude)
    twin = same.first()
    if twin is not None:
        raise TestBankRefused("text", SAME_TEXT.format(item_id=twin.item_id, qid=question.qid))


def _checked_text(text: str) -> str:
    if is_blank(text):
        raise TestBankRefused("text", BLANK_TEXT)
    _check_value(text, "text", "the text", MAX_ITEM_CHARS)
    return text.strip()


def _checked_answers(answers: Sequence[str], target: str) -> list[str]:
    if isinstance(answers, str) or not all(isinstance(a, str) for a in answers):
        raise TestBankRefused("answers", NOT_A_LIST.format(found=type(answers).__name__))
    if answers and target != PromptTarget.QUESTIONS:
        raise TestBankRefused("answers", NUGGET_ANSWERS)
    if len(answers) > MAX_ANSWERS:
        raise TestBankRefused("answers", TOO_MANY_ANSWERS.format(count=len(answers),
                                                                 most=MAX_ANSWERS))
    for index, answer in enumerate(answers, 1):
        if is_blank(answer):
            raise TestBankRefused("answers", BLANK_ANSWER.format(index=index))
        _check_value(answer, "answers", f"answer {index}", MAX_ITEM_CHARS)
    return [answer.strip() for answer in answers]


def _check_note(note: str, *, required: bool) -> None:
    if required and is_blank(note):
        raise TestBankRefused("note", NOTE_REQUIRED)
    _check_value(note, "note", "the note", MAX_NOTE_CHARS)


def _check_value(value: str, field: str, what: str, most: int) -> None:
    if len(value) > most:
        raise TestBankRefused(field, TOO_LONG.format(what=what.capitalize(), length=len(value),
                                                     most=most))
    problem = value_control_problem(value, 0, field, line_breaks=True)
    if problem is not None:
        raise TestBankRefused(field, CONTROL.format(what=what, problem=problem.message))
