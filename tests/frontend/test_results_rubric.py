"""The results page of a ranking track with an official leaderboard uploaded
(docs/rubric.md, "Meta-evaluation"): one scatter per leaderboard measure, the official score
across and the Rubric score up, with Kendall's tau-b and Spearman's rho, as "Pencils
Down!" (Farzi & Dietz, ICTIR 2024) plots them; shown wherever the leaderboard is.

The case is tests/scoring/rubric_case.py (label max, min_grade 4, cover_k 10) with two
more runs whose passages are all in the pool already, so the Rubric-Qrels stay the
case's:

    NII-R1            D001: d2 d4   D002: d7
    R&D<i>$^^$-R1     D001: d1 d3   D002: d7

Rubric-Cover@10 (items graded >= 4 in the top 10, mean over D001 and D002, the queries
with items; tests/scoring/test_rubric_leaderboards.py works out WASEDA and KYOTO):
WASEDA-R1 (1 + 1/2) / 2 = 0.75; R&D (A by d1, B by d3; nothing in D002) (1 + 0) / 2 =
0.5; KYOTO-R1 (B by d3) (1/2 + 0) / 2 = 0.25; NII-R1 0.

The fourth team's name breaks the team-name rule (letters, digits, '_', '-'): it is
stored without it, as a name from before the rule would be, to hold the page to
escaping what it shows, and the plots to drawing `$...$` as text, not as mathtext
(which "$^^$" would fail to parse).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta
from html import escape, unescape
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from campaign.models import Team
from frontend import plots
from scoring.services import campaign_score
from submissions.models import RankedPassage, Run, RunStatus
from tests.scoring.rubric_case import RubricCase, rubric_case
from tests.support import Personas

pytestmark = pytest.mark.django_db

RESULTS = "/campaigns/toy/results/"
REFERENCE = "/api/v1/campaigns/toy/reference/"
META = "/api/v1/campaigns/toy/meta-evaluation/?track=dl"
PUBLISH = "/api/v1/campaigns/toy/leaderboards/dl/publish/"
SECTION = 'id="dl-plots-agreement"'
ODD_TEAM = "R&D<i>$^^$"
ODD_RUN = f"{ODD_TEAM}-R1"
COVER_TITLE = "Rubric-Cover@10 against the official leaderboard: "

# The official leaderboard: R&D > KYOTO > WASEDA > NII; CMU-R1 is not on ours, so it is
# left out. Against Rubric-Cover@10's W (0.75) > R (0.5) > K (0.25) > N (0):
#   tau-b (Kendall 1938; no ties, so tau-b = tau-a = (C - D) / (n (n - 1) / 2)):
#     (W, R) discordant, (W, K) discordant, (W, N) concordant,
#     (R, K) concordant, (R, N) concordant, (K, N) concordant: (4 - 2) / 6 = 1/3.
#   rho (Spearman 1904): ranks W, R, K, N ours (1, 2, 3, 4), official (3, 1, 2, 4):
#     d^2 = 4 + 1 + 1 + 0 = 6; 1 - 6 * 6 / (4 * (16 - 1)) = 1 - 36/60 = 0.4.
OFFICIAL = f"run,score\n{ODD_RUN},0.65\nKYOTO-R1,0.6\nWASEDA-R1,0.5\nNII-R1,0.1\nCMU-R1,0.9\n"
COVER_CORRELATION = "Kendall's tau-b = 0.3333, Spearman's rho = 0.4000"


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    # Plots are cached per evaluation (and reference); database ids repeat between tests.
    cache.clear()
    yield
    cache.clear()


def add_run(case: RubricCase, team_name: str, name: str,
            ranking: dict[str, list[str]]) -> Run:
    team = Team.objects.create(campaign=case.track.campaign, name=team_name)
    run = Run.objects.create(track=case.track, team=team, name=name,
                             sha256=hashlib.sha256(name.encode()).hexdigest(), size=1,
                             status=RunStatus.GRADED, is_current=True,
                             graded_at=timezone.now())
    RankedPassage.objects.bulk_create(
        RankedPassage(run=run, qid=qid, rank=rank, docid=docid, score=10.0 - rank)
        for qid, docids in ranking.items() for rank, docid in enumerate(docids, 1))
    return run


@pytest.fixture
def case(personas: Personas) -> RubricCase:
    """The four runs above, scored once (unpublished)."""
    case = rubric_case(personas)
    add_run(case, "NII", "NII-R1", {"D001": ["d2", "d4"], "D002": ["d7"]})
    add_run(case, ODD_TEAM, ODD_RUN, {"D001": ["d1", "d3"], "D002": ["d7"]})
    (evaluation,) = campaign_score(campaign=personas.campaign)
    cover = {score.run.name: score.aggregates["rubric_cover@10"]
             for score in evaluation.scores.select_related("run")}
    assert cover == {"WASEDA-R1": 0.75, ODD_RUN: 0.5, "KYOTO-R1": 0.25, "NII-R1": 0.0}
    return case


def upload(personas: Personas, **files: str) -> Any:
    response = personas.client("organiser").post(
        REFERENCE, {"track": "dl", **{name: SimpleUploadedFile(f"{name}.txt", content.encode())
                                      for name, content in files.items()}},
        format="multipart")
    assert response.status_code == 201, response.json()
    return response


def publish(personas: Personas) -> None:
    response = personas.client("organiser").post(PUBLISH, {}, format="json")
    assert response.status_code == 200, response.json()


def release_results(personas: Personas) -> None:
    campaign = personas.campaign
    campaign.results_release = timezone.now() - timedelta(seconds=1)
    campaign.save()


def page(personas: Personas, who: str) -> str:
    client = Client()
    if who != "anonymous":
        client.force_login(getattr(personas, who))
    response = client.get(RESULTS)
    assert response.status_code == 200
    return response.content.decode()


def agreement_section(html: str) -> str:
    return html.split(SECTION, 1)[1].split("</section>", 1)[0]


def figure(html: str, key: str) -> str:
    """The figure of one measure (`rubric_cover-10` for rubric_cover@10), caption and data."""
    return html.split(f'<figure class="plot-figure" aria-labelledby="dl-plot-agreement-{key}'
                      f'-caption">', 1)[1].split("</figure>", 1)[0]


def caption(html: str, key: str) -> str:
    """A figure's caption as read (the template escapes its apostrophes)."""
    found = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", figure(html, key), re.S)
    assert found is not None
    return unescape(found.group(1))


def data_rows(html: str, key: str) -> list[list[str]]:
    table = figure(html, key).split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)]


# --- what it shows -----------------------------------------------------------------


def test_a_published_leaderboard_shows_each_run_against_its_official_score(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard=OFFICIAL)
    publish(personas)

    html = page(personas, "participant_b")

    section = agreement_section(html)
    assert "Agreement with the official leaderboard" in html
    # One figure per leaderboard measure, the ranking measure first.
    keys = re.findall(r'<figure class="plot-figure" aria-labelledby="dl-plot-agreement-'
                      r'([\w-]+)-caption"', section)
    assert keys == ["rubric_cover-10", "n_exam", "ndcg-10", "map", "recip_rank", "p-10"]
    assert caption(html, "rubric_cover-10") == (
        "Rubric-Cover@10 of each run against its official score, 4 run(s) on both "
        f"leaderboards: {COVER_CORRELATION}.")
    svg = figure(html, "rubric_cover-10")
    title = escape(COVER_TITLE + COVER_CORRELATION)
    assert f'<title id="dl-plot-agreement-rubric_cover-10-title">{title}</title>' in svg
    assert ">Kendall's tau-b = 0.333, Spearman's rho = 0.400</text>" in svg  # drawn in it
    for run in ("WASEDA-R1", "KYOTO-R1", "NII-R1"):
        assert f">{run}</text>" in svg  # each point labelled with its run
    # The numbers, in the official order; CMU-R1 is on the official leaderboard only.
    assert data_rows(html, "rubric_cover-10") == [
        ["R&amp;D&lt;i&gt;$^^$-R1", "R&amp;D&lt;i&gt;$^^$", "0.65", "0.5000"],
        ["KYOTO-R1", "KYOTO", "0.6", "0.2500"],
        ["WASEDA-R1", "WASEDA", "0.5", "0.7500"],
        ["NII-R1", "NII", "0.1", "0.0000"],
    ]
    assert "CMU-R1" not in section
    assert "(5 run(s))" in section  # the official leaderboard's size, said in the intro


def test_the_page_gives_the_meta_evaluation_apis_correlations_for_every_measure(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard=OFFICIAL)
    api = personas.client("organiser").get(META).json()["correlation"]
    summary = agreement_section(page(personas, "organiser")).split(
        'id="dl-plot-agreement-summary"', 1)[1].split("</table>", 1)[0]
    rows = {cells[0]: cells[1:] for cells in (
        re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
        for row in re.findall(r"<tr>(.*?)</tr>", summary.split("<tbody>", 1)[1], re.S))}
    labels = {"rubric_cover@10": "Rubric-Cover@10", "n_exam": "n-EXAM", "ndcg@10": "nDCG@10",
              "map": "MAP", "recip_rank": "MRR", "p@10": "P@10"}
    assert set(api) == set(labels)
    for key, label in labels.items():
        agreement = api[key]
        expected = (["—", "—"] if agreement is None else
                    [plots.fmt(agreement["kendall_tau"]), plots.fmt(agreement["spearman"])])
        assert rows[label][1:] == expected, key
    assert rows["Rubric-Cover@10"] == ["4", "0.3333", "0.4000"]


def test_official_scores_outside_0_to_1_are_shown_as_uploaded_on_their_own_scale(
    personas: Personas, case: RubricCase
) -> None:
    # The same order as OFFICIAL, so the same tau-b and rho: ranks are all they use.
    upload(personas, leaderboard=(f"run,score\n{ODD_RUN},65\nKYOTO-R1,60\nWASEDA-R1,50\n"
                                  "NII-R1,-10\n"))
    html = page(personas, "organiser")
    assert COVER_CORRELATION in caption(html, "rubric_cover-10")
    assert [row[2] for row in data_rows(html, "rubric_cover-10")] == ["65", "60", "50", "-10"]
    # The x axis spans the data (-10 to 65, 8% margin each side), not 0 to 1.
    desc = re.search(r'<desc id="dl-plot-agreement-rubric_cover-10-desc">(.*?)</desc>',
                     figure(html, "rubric_cover-10"), re.S)
    assert desc is not None
    assert "horizontal axis (-16 to 71)" in desc.group(1)
    assert "vertical (0 to 1)" in desc.group(1)


def test_a_measure_without_a_ranking_says_its_correlation_is_undefined(
    personas: Personas, case: RubricCase
) -> None:
    # Two shared runs the official leaderboard ties: no official ranking to correlate.
    upload(personas, leaderboard="run,score\nWASEDA-R1,0.5\nNII-R1,0.5\n")
    html = page(personas, "organiser")
    assert caption(html, "rubric_cover-10") == (
        "Rubric-Cover@10 of each run against its official score, 2 run(s) on both "
        "leaderboards: Kendall's tau-b and Spearman's rho undefined (one of the two "
        "leaderboards gives all these runs the same score).")


def test_an_official_leaderboard_sharing_no_run_says_there_is_nothing_to_compare(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard="run,score\nCMU-R1,0.9\nMIT-R1,0.8\n")
    section = agreement_section(page(personas, "organiser"))
    assert "None of its runs is on this leaderboard" in section
    assert "<svg" not in section


# --- when it shows ----------------------------------------------------------------


def test_there_is_no_scatter_without_an_official_leaderboard(
    personas: Personas, case: RubricCase
) -> None:
    html = page(personas, "organiser")
    assert SECTION not in html and "official leaderboard" not in html
    # The per-run Rubric-Cover with its intervals is there all the same.
    assert "Mean Rubric-Cover@10 per run with 95% confidence intervals" in html

    upload(personas, qrels="D001 0 d1 2\nD002 0 d5 1\n")  # manual qrels alone
    assert SECTION not in page(personas, "organiser")


def test_manual_qrels_and_their_kappa_stay_off_the_page(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard=OFFICIAL, qrels="D001 0 d1 2\nD001 0 d2 0\nD002 0 d5 1\n")
    publish(personas)
    for who in ("organiser", "participant_a"):
        html = page(personas, who)
        assert SECTION in html
        assert "kappa" not in html.lower() and "manual qrels" not in html.lower()


@pytest.mark.parametrize("who", ["participant_a", "outsider", "anonymous"])
def test_others_see_it_only_with_the_published_leaderboard(
    personas: Personas, case: RubricCase, who: str
) -> None:
    upload(personas, leaderboard=OFFICIAL)
    assert SECTION in page(personas, "organiser")
    assert SECTION not in page(personas, who)  # unpublished

    publish(personas)
    assert (SECTION in page(personas, who)) == (who == "participant_a")

    release_results(personas)
    html = page(personas, who)
    assert SECTION in html
    assert COVER_CORRELATION in caption(html, "rubric_cover-10")


def test_the_public_sees_the_published_snapshots_agreement_not_a_newer_ones(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard=OFFICIAL)
    publish(personas)
    release_results(personas)
    # NII-R1 withdrawn and the track scored again: the organisers' latest snapshot has
    # W > R > K against the official R > K > W: (W, R) and (W, K) discordant, (R, K)
    # concordant, tau-b (1 - 2) / 3 = -1/3; rho: ranks (1, 2, 3) and (3, 1, 2), d^2 =
    # 4 + 1 + 1, 1 - 6 * 6 / (3 * 8) = -1/2.
    Run.objects.filter(name="NII-R1").update(is_current=False)
    campaign_score(campaign=personas.campaign)

    assert ("Kendall's tau-b = -0.3333, Spearman's rho = -0.5000"
            in caption(page(personas, "organiser"), "rubric_cover-10"))
    assert COVER_CORRELATION in caption(page(personas, "anonymous"), "rubric_cover-10")


def test_a_new_official_leaderboard_is_drawn_anew_for_the_same_snapshot(
    personas: Personas, case: RubricCase
) -> None:
    upload(personas, leaderboard=OFFICIAL)
    assert COVER_CORRELATION in caption(page(personas, "organiser"), "rubric_cover-10")
    # The same order as ours: tau-b and rho 1. The evaluation has not changed; the
    # cached plots of the first upload must not be served.
    upload(personas, leaderboard=(f"run,score\nWASEDA-R1,4\n{ODD_RUN},3\nKYOTO-R1,2\n"
                                  "NII-R1,1\n"))
    assert ("Kendall's tau-b = 1.0000, Spearman's rho = 1.0000"
            in caption(page(personas, "organiser"), "rubric_cover-10"))


def test_names_are_escaped_and_drawn_as_written(personas: Personas, case: RubricCase) -> None:
    upload(personas, leaderboard=OFFICIAL)
    html = page(personas, "organiser")
    assert ODD_TEAM not in html  # nowhere raw: not in a table, not in a plot
    shown = figure(html, "rubric_cover-10")
    # The plot's label as text, dollars included: not read as mathtext.
    assert ">R&amp;D&lt;i&gt;$^^$-R1</text>" in shown
    # The data table's run and team.
    assert '<th scope="row" data-sort-value="">R&amp;D&lt;i&gt;$^^$-R1</th>' in shown
    assert '<td data-sort-value="">R&amp;D&lt;i&gt;$^^$</td>' in shown


# --- the plot's axes ----------------------------------------------------------------


@pytest.mark.parametrize(("values", "limits"), [
    ([0.0, 0.5, 1.0], (0.0, 1.0)),  # a measure's range: always 0 to 1
    ([0.2, 0.3], (0.0, 1.0)),
    ([], (0.0, 1.0)),
    ([10.0, 60.0], (10.0 - 4.0, 60.0 + 4.0)),  # 8% of the span of 50 each side
    ([-0.5, 0.5], (-0.5 - 0.08, 0.5 + 0.08)),
    ([5.0, 5.0], (5.0 - 0.4, 5.0 + 0.4)),  # no span: 8% of the value's magnitude
])
def test_an_axis_is_0_to_1_when_the_values_fit_else_their_range(
    values: list[float], limits: tuple[float, float]
) -> None:
    assert plots.axis_limits(values) == pytest.approx(limits)
