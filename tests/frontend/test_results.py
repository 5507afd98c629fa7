"""The results pages: who sees which leaderboard, the toy numbers, drill-down and plots."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from frontend import plots
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.leaderboard import HsdPair
from scoring.models import Evaluation
from scoring.services import campaign_score
from submissions.models import Run
from tests.grading.rounds import round_graded
from tests.support import Personas

pytestmark = pytest.mark.django_db

RESULTS = "/campaigns/toy/results/"
DRILL_DOWN = "/campaigns/toy/results/WASEDA-AC-1/"
NOT_PUBLISHED = "<strong>Not published.</strong>"
OTHERS = ["participant_a", "participant_b", "outsider", "anonymous"]


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    # Plots are cached per evaluation; database ids repeat between tests.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def scored(toy_ac_run: Run, judge: OpenAIJudge) -> list[Evaluation]:
    """The toy campaign graded as tests/data/toy/WASEDA-AC-1.marked says, and scored."""
    run_grade(run=toy_ac_run, judge=judge)
    round_graded(toy_ac_run)
    return campaign_score(campaign=toy_ac_run.track.campaign)


def visitor(personas: Personas, who: str) -> Client:
    client = Client()
    if who != "anonymous":
        client.force_login(getattr(personas, who))
    return client


def page(personas: Personas, who: str, url: str = RESULTS) -> str:
    response = visitor(personas, who).get(url)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def publish_ac(personas: Personas) -> None:
    response = personas.client("organiser").post("/api/v1/campaigns/toy/leaderboards/ac/publish/")
    assert response.status_code == 200


def release_results(personas: Personas) -> None:
    campaign = personas.campaign
    now = timezone.now()
    campaign.topics_release, campaign.pr_due = now - timedelta(days=3), now - timedelta(days=2)
    campaign.ac_due, campaign.results_release = now - timedelta(days=1), now
    campaign.save()


def svgs(html: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", html, flags=re.S)


def svg_titled(html: str, title: str) -> str:
    [svg] = [s for s in svgs(html) if f">{title}</title>" in s]
    return svg


class TestWhoSeesWhat:
    @pytest.mark.parametrize("who", OTHERS)
    def test_an_unpublished_leaderboard_is_for_organisers_only(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        html = page(personas, who)
        assert "WASEDA-AC-1" not in html and "WASEDA-PO-1" not in html
        assert "<svg" not in html

    def test_anonymous_visitors_are_told_when_results_become_public(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        campaign = personas.campaign
        assert campaign.results_release is not None
        local = campaign.results_release.astimezone(ZoneInfo(campaign.timezone))
        # In the campaign's zone, UTC on hover (tests/frontend/test_release_time.py).
        assert (f"{local:%Y-%m-%d %H:%M}</time> ({campaign.timezone})."
                in page(personas, "anonymous"))

    def test_organisers_see_every_track_with_a_not_published_notice(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        assert html.count(NOT_PUBLISHED) == 2
        assert 'id="track-ac"' in html and 'id="track-pr"' in html
        assert "WASEDA-AC-1" in html and "KYOTO-PG-1" in html

    @pytest.mark.parametrize(("who", "sees"), [
        ("participant_a", True), ("participant_b", True), ("outsider", False),
        ("anonymous", False)])
    def test_a_published_leaderboard_reaches_participants_before_results_release(
        self, personas: Personas, scored: list[Evaluation], who: str, sees: bool
    ) -> None:
        publish_ac(personas)
        html = page(personas, who)
        assert ('id="track-ac"' in html) is sees
        assert 'id="track-pr"' not in html  # PR was not published
        assert NOT_PUBLISHED not in html
        if sees:
            assert "Participants see it now; the public from" in html

    @pytest.mark.parametrize("who", OTHERS)
    def test_the_public_sees_a_published_leaderboard_after_results_release(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        publish_ac(personas)
        release_results(personas)
        html = page(personas, who)
        assert 'id="track-ac"' in html and "WASEDA-AC-1" in html
        assert 'id="track-pr"' not in html
        assert NOT_PUBLISHED not in html and "the public from" not in html

    def test_organisers_see_the_unpublished_track_beside_the_published_one(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        publish_ac(personas)
        html = page(personas, "organiser")
        assert html.count(NOT_PUBLISHED) == 1
        assert html.index(NOT_PUBLISHED) > html.index('id="track-pr"')

    def test_an_unknown_campaign_is_a_404(self, personas: Personas) -> None:
        assert Client().get("/campaigns/nope/results/").status_code == 404


class TestLeaderboardTables:
    def test_the_ac_table_shows_the_toy_numbers_to_4_places(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        row = re.search(r"<tr><td data-sort-value=\"1\"[^>]*>1</td><th scope=\"row\".*?</tr>",
                        html, flags=re.S)
        assert row is not None
        cells = re.findall(r'class="num">([^<]*)</td>', row.group(0))
        # tests/data/README.md, by hand (docs/measures.md), p = confidence / 100:
        # accuracy |I+|/N = 2/3; nugget precision (2/3 + 0/2 + 2/3) / 3 = 4/9;
        # R_O = 1 - 0.85/1 = 0.15; R_U = 1 - (0.25 + 0.05)/2 = 0.85;
        # HMR = 2 * 0.15 * 0.85 / (0.15 + 0.85) = 0.255.
        assert cells[:6] == ["1", "0.6667", "0.4444", "0.1500", "0.8500", "0.2550"]
        assert ">WASEDA-AC-1</a>" in row.group(0)
        assert '<td data-sort-value="WASEDA">WASEDA</td>' in row.group(0)

    def test_cells_keep_full_precision_for_sorting(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        assert 'data-sort-value="0.6666666666666666" class="num">0.6667</td>' in html

    def test_run_names_link_to_their_drill_down(self, personas: Personas,
                                                scored: list[Evaluation]) -> None:
        html = page(personas, "organiser")
        assert f'<a href="{DRILL_DOWN}">WASEDA-AC-1</a>' in html
        assert '<a href="/campaigns/toy/results/KYOTO-PG-1/">KYOTO-PG-1</a>' in html

    def test_tables_are_ranked_by_the_main_measure_and_say_so(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        assert 'data-label="HMR" class="num" aria-sort="descending">HMR</th>' in html
        assert 'data-label="nDCG@10" class="num" aria-sort="descending">nDCG@10</th>' in html
        assert html.count('<table id="ac-leaderboard" class="results-table sortable"') == 1
        # The script that turns headers into buttons is there; without it, nothing breaks.
        assert "frontend/results.js" in html
        # PR runs ranked by nDCG@10 (tests/data/README.md): WASEDA-PO-1 (1 + 1/(1 + 1/log2 3))/2
        # = 0.806574 beats KYOTO-PG-1 (0 + 1/(1 + 1/log2 3))/2 = 0.306574.
        assert html.index(">WASEDA-PO-1</a>") < html.index(">KYOTO-PG-1</a>")

    def test_the_judge_time_and_edited_judgments_are_shown(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        ac = next(e for e in scored if e.track.kind == "ac")
        utc = ac.computed_at.astimezone(ZoneInfo("UTC"))
        local = ac.computed_at.astimezone(ZoneInfo("Asia/Tokyo"))
        assert ac.judge.startswith("scripted-judge") and f"<dd>{ac.judge}</dd>" in html
        assert f"{utc:%Y-%m-%d %H:%M} UTC</time> ({local:%Y-%m-%d %H:%M} Asia/Tokyo)" in html
        assert "<dt>Edited judgments</dt><dd>0</dd>" in html

    def test_tables_scroll_inside_a_keyboard_reachable_region(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        assert ('<div class="table-scroll" role="region" aria-labelledby="ac-leaderboard-caption"'
                ' tabindex="0">') in html

    def test_headings_go_in_order(self, personas: Personas, scored: list[Evaluation]) -> None:
        levels = [int(level) for level in re.findall(r"<h([1-6])\b", page(personas, "organiser"))]
        assert levels[0] == 1
        assert all(b - a <= 1 for a, b in itertools.pairwise(levels))


class TestDrillDown:
    def test_it_shows_each_question_with_its_correctness(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser", DRILL_DOWN)
        rows = dict(re.findall(r'<th scope="row" data-sort-value="(D00\d)">.*?</th>(.*?)</tr>',
                               html, flags=re.S))
        assert sorted(rows) == ["D001", "D002", "D003"]
        assert "✓ correct" in rows["D001"] and "✗ incorrect" in rows["D002"]
        assert "✓ correct" in rows["D003"]
        assert "Question D001?" in html
        # Nugget precision per question, R / returned (tests/data/README.md): D001 2/3,
        # D002 0/2, D003 2/3.
        assert ">0.6667</td>" in rows["D001"] and ">0.0000</td>" in rows["D002"]
        assert ">0.6667</td>" in rows["D003"]

    def test_a_pr_run_shows_its_ranking_measures(self, personas: Personas,
                                                 scored: list[Evaluation]) -> None:
        html = page(personas, "organiser", "/campaigns/toy/results/KYOTO-PG-1/")
        for label in ("nDCG@10", "nDCG@20", "Q-measure", "nERR@10"):
            assert f">{label}</th>" in html
        # D002 has no relevant passage in the derived qrels, so it is not scored.
        assert "not scored" in html

    @pytest.mark.parametrize("who", OTHERS)
    def test_nobody_but_organisers_drills_into_an_unpublished_run(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        assert visitor(personas, who).get(DRILL_DOWN).status_code == 404

    def test_organisers_are_reminded_it_is_not_published(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        assert NOT_PUBLISHED in page(personas, "organiser", DRILL_DOWN)

    def test_another_team_drills_into_a_published_run(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        # Team B may not see WASEDA's run file, but may see its published scores.
        publish_ac(personas)
        html = page(personas, "participant_b", DRILL_DOWN)
        assert "✗ incorrect" in html and NOT_PUBLISHED not in html

    @pytest.mark.parametrize("who", ["outsider", "anonymous"])
    def test_the_public_drills_in_after_results_release_only(
        self, personas: Personas, scored: list[Evaluation], who: str
    ) -> None:
        publish_ac(personas)
        assert visitor(personas, who).get(DRILL_DOWN).status_code == 404
        release_results(personas)
        assert visitor(personas, who).get(DRILL_DOWN).status_code == 200
        # The PR track is still unpublished.
        assert visitor(personas, who).get("/campaigns/toy/results/KYOTO-PG-1/").status_code == 404

    def test_an_unknown_run_is_a_404(self, personas: Personas, scored: list[Evaluation]) -> None:
        assert visitor(personas, "organiser").get(
            "/campaigns/toy/results/NOBODY-AC-9/").status_code == 404

    def test_it_has_the_runs_reliability_diagram(self, personas: Personas,
                                                 scored: list[Evaluation]) -> None:
        html = page(personas, "organiser", DRILL_DOWN)
        svg = svg_titled(html, "Reliability diagram of WASEDA-AC-1")
        assert 'role="img"' in svg


class TestPlots:
    TITLES = [
        "R_O against R_U for every AC run",
        "Reliability diagram of WASEDA-AC-1",
        "Mean Nugget precision per run with 95% confidence intervals",
        "Mean nDCG@10 and nDCG@20 per run with 95% confidence intervals",
        "Randomised Tukey HSD on nDCG@10: which runs differ at p &lt; 0.05",
    ]

    def test_the_hsd_pairs_table_gives_each_p_value_as_a_number(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        start = html.index("Tukey HSD pairs on nDCG@10")
        table = html[start:html.index("</table>", start)]
        cells = re.findall(r"<td[^>]*>\s*([^<]*?)\s*</td>", table)
        p_values = cells[1::3]  # the row header is a <th>: difference, p-value, verdict
        assert p_values, table
        assert all(re.fullmatch(r"(&lt; )?[01]\.\d{4}", p) for p in p_values), p_values

    def test_every_plot_is_an_accessible_svg_image(self, personas: Personas,
                                                   scored: list[Evaluation]) -> None:
        html = page(personas, "organiser")
        found = svgs(html)
        assert len(found) == len(self.TITLES)
        for title in self.TITLES:
            svg = svg_titled(html, title)
            opening = svg[:svg.index(">") + 1]
            ident = re.search(r' id="([^"]+)"', opening)
            assert ident is not None
            assert 'role="img"' in opening
            assert f'aria-labelledby="{ident.group(1)}-title {ident.group(1)}-desc"' in opening
            assert "viewBox=" in opening and "width=" not in opening  # scales with the page
            assert f'<desc id="{ident.group(1)}-desc">' in svg

    def test_ids_are_unique_across_the_inline_plots(self, personas: Personas,
                                                    scored: list[Evaluation]) -> None:
        ids = re.findall(r'\bid="([^"]+)"', page(personas, "organiser"))
        assert len(ids) == len(set(ids))

    def test_the_calibration_plot_labels_the_run_and_the_hmr_curves(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        svg = svg_titled(page(personas, "organiser"), "R_O against R_U for every AC run")
        assert "WASEDA-AC-1 (HMR 0.255)" in svg  # 2 * 0.15 * 0.85 / 1.00, tests/data/README.md
        for level in ("0.2", "0.4", "0.6", "0.8"):
            assert f"HMR = {level}" in svg
        assert "stroke-dasharray" in svg  # the iso-curves are dashed

    def test_each_plot_has_its_numbers_as_a_table(self, personas: Personas,
                                                  scored: list[Evaluation]) -> None:
        html = page(personas, "organiser")
        assert html.count("<summary>The numbers in this plot</summary>") == len(self.TITLES)
        # The toy run's confidences (tests/data/README.md): 85 on its incorrect answer,
        # 75 and 95 on the correct ones, each alone in its bin of width 0.1.
        for bin_range, confidence, accuracy in (("0.7 to 0.8", "0.7500", "1.0000"),
                                                ("0.8 to 0.9", "0.8500", "0.0000"),
                                                ("0.9 to 1.0", "0.9500", "1.0000")):
            assert re.search(rf'{bin_range}</th><td data-sort-value="" class="num">1</td>'
                             rf'<td[^>]*>{confidence}</td><td[^>]*>{accuracy}</td>', html)

    def test_the_hsd_display_says_which_pairs_differ_in_words(
        self, personas: Personas, scored: list[Evaluation]
    ) -> None:
        html = page(personas, "organiser")
        svg = svg_titled(html, self.TITLES[-1])
        # Two questions cannot separate the two PR runs.
        assert "n.s." in svg and "differ\n" not in svg and ">differ<" not in svg
        assert "Runs that share a letter do not differ significantly" in html

    def test_plots_are_rendered_once_per_evaluation(
        self, personas: Personas, scored: list[Evaluation], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        page(personas, "organiser")
        calls: list[Any] = []
        original = plots.render

        def counting(*args: Any, **kwargs: Any) -> str:
            calls.append(args[0])
            return original(*args, **kwargs)

        monkeypatch.setattr(plots, "render", counting)
        page(personas, "organiser")
        assert calls == []
        campaign_score(campaign=personas.campaign)  # a new snapshot draws anew
        page(personas, "organiser")
        assert len(calls) == len(self.TITLES)


class TestPlotHelpers:
    @pytest.mark.parametrize("level", plots.HMR_ISO_LEVELS)
    def test_iso_curves_have_the_hmr_they_are_labelled_with(self, level: float) -> None:
        for r_o, r_u in zip(*plots.hmr_iso_curve(level), strict=True):
            assert 2 * r_o * r_u / (r_o + r_u) == pytest.approx(level, abs=1e-9)
            assert 0 <= r_u <= 1 + 1e-12

    def test_reliability_bins_use_the_ece_bins(self) -> None:
        bins = plots.reliability_bins([0.9, 0.85, 0.6, 1.0, 0.7], [0, 1, 1, 1, 1])
        # Left-closed bins, the last one closed: 0.9 and 1.0 share [0.9, 1.0].
        assert [b.count for b in bins] == [0, 0, 0, 0, 0, 0, 1, 1, 1, 2]
        assert bins[9].mean_confidence == pytest.approx(0.95)
        assert bins[9].accuracy == pytest.approx(0.5)
        assert bins[0].accuracy is None

    def test_hsd_groups_letter_runs_that_do_not_differ(self) -> None:
        pairs = [HsdPair("A", "B", 0.1, 0.3), HsdPair("A", "C", 0.4, 0.01),
                 HsdPair("B", "C", 0.3, 0.2)]
        assert plots.hsd_groups(["A", "B", "C"], pairs) == {"A": "a", "B": "ab", "C": "b"}

    def test_a_zero_p_value_is_shown_as_below_the_resolution(self) -> None:
        assert plots.p_text(0.0, 5000) == "p < 0.0002"
        assert plots.p_text(0.1234, 5000) == "p = 0.1234"

    def test_a_p_value_in_a_table_cell_is_the_number_alone(self) -> None:
        assert plots.p_value_text(0.04, 5000) == "0.0400"
        assert plots.p_value_text(0.0, 5000) == "< 0.0002"
        assert plots.p_value_text(0.0, None) == "0.0000"
