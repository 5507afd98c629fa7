"""An organiser labels a blind sample in a real browser with the keyboard alone: a key per
verdict, number keys for the relevant nuggets, a note typed without setting off a key,
and `s` to leave an item until the others are labelled."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from grading.agreement.samples import blind_sample_draw
from grading.review import edits as grading_edits
from submissions.models import Run
from tests.e2e.conftest import screenshot
from tests.e2e.test_participant import sign_in
from tests.grading.fixtures import judgment_of
from tests.support import Personas

pytestmark = pytest.mark.django_db(transaction=True)

#: The keys typed for each answer of the toy run, the boxes they tick, and the label stored.
TYPED: dict[str, tuple[list[str], list[str], dict[str, Any]]] = {
    "China National Space Administration": (["2"], ["c"], {"correct": True, "relevant": [2]}),
    "Buzz Aldrin": ([], ["i"], {"correct": False, "relevant": []}),
    "Mars": (["1", "3"], ["c"], {"correct": True, "relevant": [1, 3]}),
}
# Typed into the note of "Buzz Aldrin": shortcut keys all, and none may act.
NOTE = "is 1 nugget correct? i say no, skip"


@pytest.fixture
def regrading(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The runs each label queues for grading again, recorded instead of sent (the live
    server runs in this process; no worker is needed here)."""
    queued: list[list[int]] = []

    def record(run_ids: list[int]) -> list[str]:
        queued.append(list(run_ids))
        return []

    monkeypatch.setattr(grading_edits, "enqueue_grading", record)
    return queued


def test_an_organiser_labels_a_blind_sample_with_the_keyboard_alone(
    page: Page, live_server: Any, personas: Personas, doubted: Run,
    regrading: list[list[int]],
) -> None:
    sample = blind_sample_draw(campaign=personas.campaign, kind="answer", size=3, seed=5,
                               user=personas.organiser)
    sign_in(page, live_server.url, "olga")
    page.goto(f"{live_server.url}/blind-samples/{sample.pk}/label/")
    progress = page.locator("#progress")
    expect(progress).to_have_text("Item 1 of 3, 0 labelled.")
    screenshot(page, "blind-label")

    # `s` leaves the first item for later: it comes back once the others are labelled.
    page.keyboard.press("s")
    expect(progress).to_have_text("Item 2 of 3, 0 labelled.")
    seen = []
    for done, position in enumerate((2, 3, 1), start=1):
        page.wait_for_load_state("load")  # the page's keys are listened for from here
        expect(progress).to_have_text(f"Item {position} of 3, {done - 1} labelled.")
        answer = page.locator("#answer").inner_text()
        seen.append(answer)
        ticks, verdict, _ = TYPED[answer]
        if answer == "Buzz Aldrin":
            note = page.get_by_label("Note (optional)")
            note.focus()
            page.keyboard.type(NOTE)
            page.keyboard.press("Escape")  # leaves the note: keys act again
            expect(note).to_have_value(NOTE)
            expect(progress).to_have_text(f"Item {position} of 3, {done - 1} labelled.")
        for key in ticks:
            page.keyboard.press(key)
        boxes = page.locator('input[name="relevant"]')
        for index in range(boxes.count()):
            box = boxes.nth(index)
            if box.get_attribute("value") in ticks:
                expect(box).to_be_checked()
            else:
                expect(box).not_to_be_checked()
        page.keyboard.press(verdict[0])
        expect(progress).to_contain_text(f"{done} labelled.")

    expect(page.get_by_text("All labelled")).to_be_visible()
    expect(progress).to_have_text("3 of 3 labelled.")
    screenshot(page, "blind-label-done")
    assert sorted(seen) == sorted(TYPED)
    for answer, (_, _, label) in TYPED.items():
        item = sample.items.get(judgment=judgment_of(answer))
        assert item.label == label, answer
        assert item.labelled_by_id == personas.organiser.pk
        assert item.note == (NOTE if answer == "Buzz Aldrin" else "")
    # Each label settles its judgment, whose run is graded again.
    assert regrading == [[doubted.pk]] * 3
