"""Drafting a RUBRIC campaign's test bank with the judge: N audited drafts per query without
items, all or nothing per query (docs/rubric.md, "The test bank")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from django.contrib.auth.models import User
from django.db import transaction

from campaign.models import BankItemStatus, Campaign, Question, TestBankItem
from campaign.testbank import TestBankRefused, testbank_add
from campaign.vocabulary import PromptTarget
from grading.judge import JudgeIdentity
from grading.llm.calls import JudgeCall, JudgeError
from grading.llm.inputs import JudgeRequest
from grading.llm.prompts import TESTBANK_PROMPT_VERSION
from grading.llm.rubric import GeneratedItem, bank_items_request
from grading.rubric.bank_changes import testbank_changed

GENERATED_NOTE = "drafted by the judge {model} with prompt {version} ({n} items asked for)"
REPLY_UNPARSED = "the judge's reply never parsed: {error}"
ITEM_REFUSED = "item {index} ({text!r}) was refused: {error}"


class ItemDrafter(Protocol):
    """A judge that can be asked for something other than a judgment (OpenAIJudge)."""

    identity: JudgeIdentity

    def ask_many(
        self, requests: Sequence[JudgeRequest[tuple[GeneratedItem, ...]]]
    ) -> list[JudgeCall[tuple[GeneratedItem, ...]] | JudgeError]: ...


@dataclass
class GenerationReport:
    """What `testbank_generate` did, query by query."""

    target: str
    n: int
    model: str
    drafted: dict[str, int] = field(default_factory=dict)  # qid -> drafts stored
    failed: dict[str, str] = field(default_factory=dict)  # qid -> why nothing was stored
    skipped: list[str] = field(default_factory=list)  # qids that already had items
    grading_task: str | None = None  # runs were graded: the new items' grading, queued


def _queries_without_items(campaign: Campaign) -> tuple[list[Question], list[str]]:
    """The queries with no current item (retired ones do not count), and the others."""
    questions = list(campaign.questions.order_by("position", "qid"))
    held = set(campaign.test_bank.current()
               .values_list("question_id", flat=True))
    return ([q for q in questions if q.pk not in held],
            [q.qid for q in questions if q.pk in held])


def testbank_generate(
    *, campaign: Campaign, judge: ItemDrafter, target: str = PromptTarget.QUESTIONS,
    n: int = 10, user: User | None = None,
) -> GenerationReport:
    """Draft `n` items of `target` (questions or nuggets) for each query without items; the report
    per query. ValueError for a bad `target` or `n`, before any call."""
    target = PromptTarget(target).value  # ValueError names a bad target
    todo, skipped = _queries_without_items(campaign)
    # Built first: a bad `n` or target fails here, before any judge call.
    requests = [bank_items_request(query=q.text, target=target, n=n) for q in todo]
    report = GenerationReport(target=target, n=n, model=judge.identity.model, skipped=skipped)
    note = GENERATED_NOTE.format(model=judge.identity.model, version=TESTBANK_PROMPT_VERSION,
                                 n=n)
    outcomes = judge.ask_many(requests) if requests else []
    drafted: list[TestBankItem] = []
    for question, outcome in zip(todo, outcomes, strict=True):
        if isinstance(outcome, JudgeError):
            report.failed[question.qid] = str(outcome)
            continue
        if outcome.label is None:
            report.failed[question.qid] = REPLY_UNPARSED.format(error=outcome.error)
            continue
        try:
            drafted += _store_drafts(campaign, question, outcome.label, target, user, note)
        except _DraftRefused as refused:
            report.failed[question.qid] = str(refused)
            continue
        report.drafted[question.qid] = len(outcome.label)
    # A query may get items after runs were graded: their passages are graded on them.
    report.grading_task = testbank_changed(campaign=campaign, items=drafted)
    return report


class _DraftRefused(Exception):
    pass


@transaction.atomic
def _store_drafts(campaign: Campaign, question: Question, items: Sequence[GeneratedItem],
                  target: str, user: User | None, note: str) -> list[TestBankItem]:
    """Every item of one query, or (raising _DraftRefused) none of them."""
    stored = []
    for index, generated in enumerate(items, 1):
        try:
            stored.append(testbank_add(
                campaign=campaign, user=user, qid=question.qid, target=target,
                text=generated.text, answers=generated.answers,
                status=BankItemStatus.DRAFT, note=note))
        except TestBankRefused as refused:
            # Raised out of the transaction: the query's earlier drafts are rolled back.
            raise _DraftRefused(ITEM_REFUSED.format(index=index, text=generated.text,
                                                    error=refused)) from refused
    return stored
