"""The caps on a test-bank item, one source for the API, the service and the campaign file's
test bank (docs/formats.md, "Limits")."""

from __future__ import annotations

from django.conf import settings

from submissions.formats.test_bank import ItemLimits

#: Answers in a question's answer key.
MAX_ANSWERS = 20
#: `TestBankItem.item_id`'s column.
MAX_ITEM_ID_CHARS = 200


def item_limits() -> ItemLimits:
    """The caps as set now: the text ones are settings, read at each check as the API's fields
    read them (`MAX_ANSWER_CHARS`, campaign.text_fields)."""
    return ItemLimits(text_chars=settings.MAX_ANSWER_CHARS, answers=MAX_ANSWERS,
                      id_chars=MAX_ITEM_ID_CHARS)
