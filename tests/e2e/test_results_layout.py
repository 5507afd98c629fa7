"""The results page of the demo campaign in a real browser at a laptop's width: every
leaderboard fits without scrolling sideways, and the AC track's Tukey HSD is on HMR, the
measure it is ranked by."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import screenshot
from tests.grading.scripted_server import ScriptedServer
from tests.scoring.test_demo_archive import demo_judge, make_demo

pytestmark = pytest.mark.django_db(transaction=True)

#: The widest table cells may be before they overflow: a pixel of rounding.
SLACK = 1


def test_the_leaderboards_fit_at_1400_px_and_the_hsd_follows_the_ranking_measure(
    request: pytest.FixtureRequest, live_server: Any,
) -> None:
    with ScriptedServer(demo_judge()) as server:
        make_demo(server)  # published, and past results_release: the public sees it
    # The browser after the judge: Playwright's loop would stop the judge's asyncio.run.
    browser: Browser = request.getfixturevalue("browser")
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.goto(f"{live_server.url}/campaigns/demo-movies/results/")
    expect(page.get_by_role("heading", name="Results")).to_be_visible()

    # Every figure's numbers shown, as a reader who opens them sees them (a closed
    # <details> is not laid out, so its table has no width to measure).
    for numbers in page.locator("details.plot-data").all():
        numbers.locator("summary").click()
    for table in page.locator("table.results-table").all():
        box = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth, t.id]")
        assert box[0] <= box[1] + SLACK, f"table {box[2]} is {box[0]} px in {box[1]} px"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    # The PR table's last column is on screen, not cut off.
    last = page.locator("#pr-leaderboard thead th").last.bounding_box()
    assert last is not None and last["x"] + last["width"] <= 1400
    screenshot(page, "results-1400px")

    hsd = page.locator("section#ac-plots-hsd")
    expect(hsd.get_by_role("heading")).to_have_text(re.compile(r"^Tukey HSD on HMR"))
    expect(hsd).to_contain_text("HMR, the ranking measure")
    expect(hsd).to_contain_text("correctness and confidence")
    expect(page.locator("section#pr-plots-hsd").get_by_role("heading")).to_have_text(
        re.compile(r"^Tukey HSD on nDCG@10"))
    page.context.close()
