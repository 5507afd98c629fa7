"""The test-bank pages (docs/rubric.md): a campaign's items per query; add, edit and retire,
each with a note and audited. Secret: organisers only, 404 for everyone else, as the
test-bank API answers."""

from __future__ import annotations

import itertools

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from campaign.kinds import kinds
from campaign.models import TestBankItem
from campaign.selectors import testbank_items
from campaign.testbank import TestBankRefused, testbank_add, testbank_edit, testbank_retire
from frontend.organiser import _organiser_campaign, _user
from frontend.rubric.forms import (
    TestBankAddForm,
    TestBankEditForm,
    TestBankFilterForm,
    TestBankRetireForm,
    add_refusal,
)
from grading.rubric.bank_changes import testbank_changed

EDITED = "Item {item_id} edited."
ADDED = "Item {item_id} added to query {qid}."
RETIRED = "Item {item_id} retired; it is kept, with its history."
#: Said after the above when the change queued grading (runs are graded already).
GRADING_QUEUED = (" Its pairs are being graded on what the graded runs retrieved; the "
                  "leaderboards are scored again when that is done.")
RESCORING_QUEUED = " Its grades no longer count; the leaderboards are scored again."


@login_required
def testbank(request: HttpRequest, slug: str) -> HttpResponse:
    """The items per query (GET filters by query and status); POST adds an item."""
    campaign = _organiser_campaign(request, slug)
    selection = TestBankFilterForm(request.GET, campaign=campaign)
    add = TestBankAddForm(request.POST or None, campaign=campaign)
    if request.method == "POST" and add.is_valid():
        data = add.cleaned_data
        try:
            item = testbank_add(campaign=campaign, user=_user(request), qid=data["qid"],
                                target=data["target"], text=data["text"],
                                answers=data["answers"], note=data["note"])
        except TestBankRefused as refused:
            add_refusal(add, refused)
        else:
            queued = testbank_changed(campaign=campaign, items=[item])
            messages.success(request, ADDED.format(item_id=item.item_id, qid=data["qid"])
                             + (GRADING_QUEUED if queued else ""))
            return redirect("testbank-item", slug=slug, item_id=item.pk)
    valid = selection.is_valid()
    items = (testbank_items(campaign=campaign, qid=selection.cleaned_data["qid"] or None,
                            status=selection.cleaned_data["status"] or None)
             if valid else TestBankItem.objects.none())
    queries = [(question, list(group)) for question, group
               in itertools.groupby(items.order_by("question__position", "question__qid",
                                                   "created_at", "id"),
                                    key=lambda item: item.question)]
    context = {"campaign": campaign, "filter": selection, "add": add, "queries": queries,
               "total": sum(len(group) for _, group in queries)}
    status = 400 if selection.errors or add.errors else 200
    return render(request, "frontend/organiser/testbank.html", context, status=status)


def _organisers_item(request: HttpRequest, slug: str, item_id: int) -> TestBankItem:
    campaign = _organiser_campaign(request, slug)
    item = (TestBankItem.objects.select_related("question", "created_by")
            .filter(campaign=campaign, pk=item_id).first()) if item_id < 2**63 else None
    if item is None:
        raise Http404("No such test-bank item.")
    return item


@login_required
def testbank_item(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """One item with its history; POST edits it (text, answers, draft/active; a note)."""
    item = _organisers_item(request, slug, item_id)
    edit = TestBankEditForm(request.POST or None, item=item)
    if request.method == "POST" and edit.is_valid():
        change = edit.change()
        try:
            testbank_edit(item=item, user=_user(request), change=change,
                          note=edit.cleaned_data["note"])
        except TestBankRefused as refused:
            add_refusal(edit, refused)
        else:
            queued = testbank_changed(campaign=item.campaign, items=[item])
            messages.success(request, EDITED.format(item_id=item.item_id)
                             + (GRADING_QUEUED if queued else ""))
            return redirect("testbank-item", slug=slug, item_id=item.pk)
    return _item_page(request, item, edit=edit, retire=TestBankRetireForm())


@login_required
@require_POST
def testbank_item_retire(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    item = _organisers_item(request, slug, item_id)
    retire = TestBankRetireForm(request.POST)
    if retire.is_valid():
        try:
            testbank_retire(item=item, user=_user(request), note=retire.cleaned_data["note"])
        except TestBankRefused as refused:
            add_refusal(retire, refused)
        else:
            queued = testbank_changed(campaign=item.campaign, items=[item])
            messages.success(request, RETIRED.format(item_id=item.item_id)
                             + (RESCORING_QUEUED if queued else ""))
            return redirect("testbank-item", slug=slug, item_id=item.pk)
    return _item_page(request, item, edit=TestBankEditForm(item=item), retire=retire)


def _item_page(request: HttpRequest, item: TestBankItem, *, edit: TestBankEditForm,
               retire: TestBankRetireForm) -> HttpResponse:
    context = {"campaign": item.campaign, "item": item, "edit": edit, "retire": retire,
               "history": item.edits.select_related("user").order_by("-at", "-id"),
               "tracks": item.campaign.tracks.filter(kind__in=kinds(rubric=True))
               .order_by("slug")}
    status = 400 if edit.errors or retire.errors else 200
    return render(request, "frontend/organiser/testbank_item.html", context, status=status)
