"""Organiser pages of RUBRIC campaigns (docs/rubric.md): the test bank and a ranking or
response track's verification pages. The views are named here, where frontend/urls.py
finds them."""

from frontend.rubric.testbank import testbank, testbank_item, testbank_item_retire
from frontend.rubric.verification import (
    grade_edit,
    grid,
    passage,
    testbank_gaps,
    verify_grading,
)

__all__ = ["grade_edit", "grid", "passage", "testbank", "testbank_gaps", "testbank_item",
           "testbank_item_retire", "verify_grading"]
