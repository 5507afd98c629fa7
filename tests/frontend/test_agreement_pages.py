"""The blind-sample pages: organisers draw a sample, label it one item at a time seeing
only what the judge was given, and read on the dashboard how the judge agrees with them."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from itertools import pairwise
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.template.defaultfilters import floatformat
from django.test import Client
from django.utils.html import escape
from scipy.stats import beta

from grading.agreement.samples import (
    BLIND_NOTE,
    NOTHING_TO_SAMPLE,
    blind_item_label,
    blind_sample_draw,
)
from grading.models import BlindItem, BlindSample, Judgment, JudgmentEdit, JudgmentStatus
from grading.review.edits import BAD_RELEVANT, WRONG_FIELDS
from submissions.models import Run
from tests.grading.fixtures import ESA_LAUNCH, SOFT_LANDING, judgment_of
from tests.scoring.rubric_case import rubric_case
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

SAMPLES = "/campaigns/toy/blind-samples/"
DASHBOARD = "/campaigns/toy/dashboard/"
OTHERS = ["participant_a", "participant_b", "outsider", "anonymous"]
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def label_page(sample: BlindSample) -> str:
    return f"/blind-samples/{sample.pk}/label/"


def client_of(personas: Personas, who: str) -> Client:
    return Client() if who == "anonymous" else signed_in(personas, who)


def draw(personas: Personas, kind: str, size: int = 50, seed: int = 7) -> BlindSample:
    return blind_sample_draw(campaign=personas.campaign, kind=kind, size=size, seed=seed,
                             user=personas.organiser)


def item_of(sample: BlindSample, judgment: Judgment) -> BlindItem:
    return sample.items.get(judgment=judgment)


def sure(judgment: Judgment) -> float:
    """The confidence the guarantee compares: calibrated where there is one, else raw."""
    if judgment.calibrated_confidence is not None:
        return judgment.calibrated_confidence
    return judgment.confidence or 0.0


class Attributes(HTMLParser):
    """Every attribute of a page, as (tag, name, value)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [(tag, name, value or "") for name, value in attrs]


def report_section(page: str, kind: str) -> str:
    """The dashboard's agreement report for one kind."""
    found = re.search(rf'<section aria-labelledby="agreement-{kind}-h" id="agreement-{kind}">'
                      r"(.*?)</section>", page, re.S)
    assert found is not None, f"no agreement section for {kind}"
    return found.group(1)


@pytest.mark.parametrize("who", OTHERS)
def test_no_one_but_organisers_finds_the_samples_page(
    personas: Personas, doubted: Run, who: str
) -> None:
    client = client_of(personas, who)
    assert client.get(SAMPLES).status_code == 404
    assert client.post(SAMPLES, {"kind": "entailment", "size": "3"}).status_code == 404
    assert not BlindSample.objects.exists()


@pytest.mark.parametrize("who", OTHERS)
def test_no_one_but_organisers_finds_a_labelling_page(
    personas: Personas, doubted: Run, who: str
) -> None:
    sample = draw(personas, "entailment")
    client = client_of(personas, who)
    assert client.get(label_page(sample)).status_code == 404
    assert client.get(f"{label_page(sample)}?item=1").status_code == 404
    response = client.post(label_page(sample), {"item": "1", "entailed": "false"})
    assert response.status_code == 404
    assert not BlindItem.objects.filter(label__isnull=False).exists()
    assert not JudgmentEdit.objects.exists()


class TestDrawing:
    def test_a_sample_drawn_from_the_page_opens_at_its_first_item(
        self, personas: Personas, doubted: Run
    ) -> None:
        client = signed_in(personas, "organiser")
        response = client.post(SAMPLES, {"kind": "entailment", "size": "3", "seed": "11"})
        sample = BlindSample.objects.get()
        assert response.status_code == 302 and response["Location"] == label_page(sample)
        # The toy run's 8 nugget entailments were there to draw from.
        assert (sample.kind, sample.seed, sample.population, sample.created_by_id) == (
            "entailment", 11, 8, personas.organiser.pk)
        assert sample.items.count() == 3
        first = sample.items.get(position=1).judgment
        page = client.get(label_page(sample)).content.decode()
        assert "Item 1 of 3, 0 labelled." in page
        assert escape(first.input["nugget"]) in page and escape(first.input["passage"]) in page

        listing = client.get(SAMPLES).content.decode()
        assert f'<a href="{label_page(sample)}">Label sample {sample.pk}</a>' in listing
        assert "<code>11</code>" in listing and "<td>0 of 3</td>" in listing

    def test_without_a_seed_one_is_drawn_and_recorded(
        self, personas: Personas, doubted: Run
    ) -> None:
        signed_in(personas, "organiser").post(SAMPLES, {"kind": "answer", "size": "2"})
        sample = BlindSample.objects.get()
        assert sample.seed >= 0 and sample.items.count() == 2

    def test_a_refused_draw_names_its_field_and_draws_nothing(
        self, personas: Personas, doubted: Run
    ) -> None:
        # An AC campaign has no rubric grades to sample.
        response = signed_in(personas, "organiser").post(SAMPLES, {"kind": "rubric",
                                                                   "size": "5"})
        assert response.status_code == 400
        message = escape(NOTHING_TO_SAMPLE.format(kind="rubric"))
        assert f'<p class="error" role="alert">Kind of judgment: {message}</p>' in \
            response.content.decode()
        assert not BlindSample.objects.exists()

    def test_a_judgment_is_sampled_once_and_the_page_says_when_none_is_left(
        self, personas: Personas, doubted: Run
    ) -> None:
        client = signed_in(personas, "organiser")
        client.post(SAMPLES, {"kind": "answer", "size": "3"})  # the toy run's three answers
        response = client.post(SAMPLES, {"kind": "answer", "size": "1"})
        assert response.status_code == 400
        assert escape(NOTHING_TO_SAMPLE.format(kind="answer")) in response.content.decode()
        assert BlindSample.objects.count() == 1

    @pytest.mark.parametrize(("data", "label"), [
        ({"kind": "entailment", "size": "0"}, "Size"),
        ({"kind": "entailment", "size": "many"}, "Size"),
        ({"kind": "entailment", "size": "3", "seed": "-1"}, "Seed (optional)"),
        ({"kind": "verdict", "size": "3"}, "Kind of judgment"),
    ])
    def test_a_draw_the_form_refuses_names_its_field(
        self, personas: Personas, doubted: Run, data: dict[str, str], label: str
    ) -> None:
        response = signed_in(personas, "organiser").post(SAMPLES, data)
        assert response.status_code == 400
        assert f'<p class="error" role="alert">{label}: ' in response.content.decode()
        assert not BlindSample.objects.exists()


class TestLabelling:
    def test_a_label_is_stored_settles_the_judgment_and_the_next_item_follows(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, "entailment", size=3)
        assert isinstance(personas.organiser, User)
        client = Client(enforce_csrf_checks=True)  # as a browser posts: the form's token
        client.force_login(personas.organiser)
        page = client.get(label_page(sample)).content.decode()
        # The page works without script: each verdict is a submit button of the form.
        assert '<button type="submit" name="entailed" value="true"' in page
        assert '<button type="submit" name="entailed" value="false"' in page
        token = CSRF.search(page)
        assert token is not None

        response = client.post(label_page(sample), {
            "csrfmiddlewaretoken": token.group(1), "item": "1", "entailed": "false",
            "note": "the passage says nothing of it"})

        assert response.status_code == 302
        assert response["Location"] == f"{label_page(sample)}?item=2"
        item = sample.items.get(position=1)
        assert item.label == {"entailed": False}
        assert (item.note, item.labelled_by_id) == ("the passage says nothing of it",
                                                   personas.organiser.pk)
        judgment = Judgment.objects.get(pk=item.judgment_id)
        assert judgment.edited_label == {"entailed": False}
        assert judgment.status == JudgmentStatus.REVIEWED
        edit = JudgmentEdit.objects.get()
        assert edit.note == (BLIND_NOTE.format(sample=sample.pk, position=1)
                             + ": the passage says nothing of it")
        assert "Item 2 of 3, 1 labelled." in client.get(response["Location"]).content.decode()

    def test_an_answer_keeps_the_nuggets_ticked_only_when_it_is_correct(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, "answer")
        client = signed_in(personas, "organiser")
        mars, aldrin = item_of(sample, judgment_of("Mars")), item_of(sample, judgment_of(
            "Buzz Aldrin"))
        client.post(label_page(sample), {"item": mars.position, "correct": "true",
                                          "relevant": ["1", "3"]})
        client.post(label_page(sample), {"item": aldrin.position, "correct": "false",
                                          "relevant": ["1"]})
        mars.refresh_from_db()
        aldrin.refresh_from_db()
        assert mars.label == {"correct": True, "relevant": [1, 3]}
        assert aldrin.label == {"correct": False, "relevant": []}
        # The person's own label shows when they come back to it, boxes ticked.
        page = client.get(f"{label_page(sample)}?item={mars.position}").content.decode()
        assert "Labelled correct; relevant nuggets: 1, 3 by olga" in page
        ticked = re.findall(r'<input type="checkbox" name="relevant" value="(\d+)"[^>]* checked>',
                            page)
        assert ticked == ["1", "3"]

    @pytest.mark.parametrize(("kind", "text", "data", "message"), [
        ("answer", "Mars", {"correct": "true", "relevant": ["1", "9"]},
         BAD_RELEVANT.format(shown=[1, 2, 3], found=[1, 9])),
        ("entailment", SOFT_LANDING, {"note": "no verdict"},
         WRONG_FIELDS.format(kind="entailment", expected='{"entailed": true|false}',
                             found={"entailed": None})),
    ])
    def test_a_refused_label_shows_why_and_stores_nothing(
        self, personas: Personas, doubted: Run, kind: str, text: str, data: dict[str, object],
        message: str
    ) -> None:
        sample = draw(personas, kind)
        item = item_of(sample, judgment_of(text))
        response = signed_in(personas, "organiser").post(
            label_page(sample), {"item": item.position, **data})
        assert response.status_code == 400
        page = response.content.decode()
        assert f"Not stored: {escape(message)}." in page
        assert f"Item {item.position} of " in page  # the same item, to label again
        item.refresh_from_db()
        assert item.label is None and not JudgmentEdit.objects.exists()
        assert not Judgment.objects.get(pk=item.judgment_id).edited

    def test_the_last_label_says_all_are_labelled_and_links_to_the_report(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, "answer")
        client = signed_in(personas, "organiser")
        for position in (1, 2, 3):
            response = client.post(label_page(sample), {"item": position, "correct": "false"})
        assert response["Location"] == label_page(sample)
        page = client.get(label_page(sample)).content.decode()
        assert "All labelled" in page and "3 of 3 labelled." in page
        assert 'href="/campaigns/toy/dashboard/#agreement-report-h"' in page
        assert 'id="blind-label"' not in page  # nothing left to label
        assert "<td>3 of 3</td>" in client.get(SAMPLES).content.decode()

    def test_a_skipped_item_comes_back_once_the_others_are_labelled(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, "answer")
        client = signed_in(personas, "organiser")
        assert 'href="?item=2" id="skip"' in client.get(label_page(sample)).content.decode()
        client.post(label_page(sample), {"item": "2", "correct": "false"})
        response = client.post(label_page(sample), {"item": "3", "correct": "false"})
        assert response["Location"] == f"{label_page(sample)}?item=1"
        assert "Item 1 of 3, 2 labelled." in client.get(response["Location"]).content.decode()

    def test_a_rubric_item_is_graded_on_the_judges_scale_without_its_answer(
        self, personas: Personas
    ) -> None:
        case = rubric_case(personas)
        judgment = case.judgments["d1", "A"]
        sample = draw(personas, "rubric")
        item = item_of(sample, judgment)
        client = signed_in(personas, "organiser")
        url = f"{label_page(sample)}?item={item.position}"
        page = client.get(url).content.decode()
        assert '<p id="passage">d1</p>' in page and "Who directed Alien?" in page
        assert "the passage answers the question completely and correctly." in page
        assert page.count('<button type="submit" name="grade"') == 6

        response = client.post(label_page(sample), {"item": item.position, "grade": "3"})

        assert response.status_code == 302
        item.refresh_from_db()
        judgment.refresh_from_db()
        # The person's label is their grade alone; the judgment keeps the judge's answer.
        assert item.label == {"grade": 3}
        api = personas.client("organiser").get(f"/api/v1/blind-samples/{sample.pk}/")
        assert "d1 on A" not in api.content.decode()
        assert judgment.edited_label is not None and judgment.edited_label["grade"] == 3
        page = client.get(url).content.decode()
        assert "Labelled grade 3 by olga" in page
        # The judge's extracted answer (kept in the label) and grade stay out of sight.
        assert "d1 on A" not in page and "Grade 5</button>" in page and "grade 5" not in page


class TestBlindness:
    @pytest.mark.parametrize("text", [SOFT_LANDING, ESA_LAUNCH, "Buzz Aldrin", "Mars"])
    def test_the_page_holds_none_of_the_judges_outputs(
        self, personas: Personas, doubted: Run, text: str
    ) -> None:
        judgment = judgment_of(text)
        reasons = [judgment.llm_reason, *judgment.nugget_reasons.values()]
        assert any(reasons)  # the judge doubted it, or a rule decided: it wrote why
        sample = draw(personas, judgment.kind)
        page = signed_in(personas, "organiser").get(
            f"{label_page(sample)}?item={item_of(sample, judgment).position}").content.decode()

        assert "scripted" not in page  # the scripted judge's reasons and its model's name
        assert judgment.judge_model not in page
        assert all(escape(reason) not in page for reason in reasons if reason)
        assert "confidence" not in page.lower()
        assert "<!--" not in page
        attributes = Attributes(page).found
        assert not [name for _, name, _ in attributes if name.startswith("data-")]
        assert not [name for _, name, _ in attributes if name == "checked"]
        # A verdict's value sits only on its own button, each verdict's once: nothing
        # singles out the judge's.
        label = judgment.llm_label
        assert label is not None
        verdict = "entailed" if judgment.kind == "entailment" else "correct"
        for value in ("true", "false"):
            holders = [(tag, name) for tag, name, found in attributes if value in found.lower()]
            assert holders == [("button", "value")], (value, holders)
        assert str(label) not in page and escape(str(label)) not in page
        assert verdict in label

    def test_the_page_is_the_same_whatever_the_judge_said(
        self, personas: Personas, doubted: Run
    ) -> None:
        judgment = judgment_of("Mars")
        sample = draw(personas, "answer")
        url = f"{label_page(sample)}?item={item_of(sample, judgment).position}"
        client = signed_in(personas, "organiser")
        before = client.get(url).content.decode()
        Judgment.objects.filter(pk=judgment.pk).update(
            llm_label={"correct": False, "relevant": []}, llm_reason="another reason",
            nugget_reasons={"1": "another"}, confidence=0.01, calibrated_confidence=0.02,
            steps=[], raw_output="{}", judge_model="another-judge")
        after = client.get(url).content.decode()
        assert CSRF.sub("", before) == CSRF.sub("", after)


class TestTheReport:
    def test_a_kind_without_a_labelled_sample_is_left_to_the_review_threshold(
        self, personas: Personas, doubted: Run
    ) -> None:
        draw(personas, "answer")  # drawn, not labelled yet
        section = report_section(
            signed_in(personas, "organiser").get(DASHBOARD).content.decode(), "answer")
        answers = list(Judgment.objects.filter(kind="answer"))
        under = sum(sure(j) < personas.campaign.review_below for j in answers)
        assert under == 2  # Buzz Aldrin (0.7) and Mars (0.75)
        assert ("No blind sample of these judgments is labelled: the review threshold (80%) "
                "decides which go to a person.") in section
        assert f"Of {len(answers)} judgment(s), {under} are under it" in section
        assert ('<a href="/campaigns/toy/judgments/?to_review=1&amp;doubtful=1&amp;kind=answer">'
                f"{under} not reviewed yet</a>") in section
        assert f'<a href="{SAMPLES}">Draw a blind sample of them</a>' in section
        dashboard = signed_in(personas, "organiser").get(DASHBOARD).content.decode()
        assert f'<a href="{SAMPLES}" id="blind-samples-link">' in dashboard

    def test_the_figures_of_a_labelled_kind(self, personas: Personas, doubted: Run) -> None:
        sample = draw(personas, "entailment")  # all eight
        # People disagree with the judge on two: the soft landing is not entailed for
        # them, the ESA launch (which a rule called bogus) is.
        flipped = {judgment_of(SOFT_LANDING).pk, judgment_of(ESA_LAUNCH).pk}
        judge, person, confidence = {}, {}, {}
        for item in sample.items.select_related("judgment"):
            label = item.judgment.llm_label
            assert label is not None
            judge[item.judgment_id] = label["entailed"]
            person[item.judgment_id] = label["entailed"] != (item.judgment_id in flipped)
            confidence[item.judgment_id] = sure(item.judgment)
            blind_item_label(item=item, user=personas.organiser,
                             changes={"entailed": person[item.judgment_id]})
        n = len(judge)
        agreed = sum(judge[pk] == person[pk] for pk in judge)
        low = beta.ppf(0.025, agreed, n - agreed + 1)
        high = beta.ppf(0.975, agreed + 1, n - agreed)
        person_yes = sum(person.values()) / n
        judge_yes = sum(judge.values()) / n
        chance = person_yes * judge_yes + (1 - person_yes) * (1 - judge_yes)
        kappa = (agreed / n - chance) / (1 - chance)
        assert (n, agreed) == (8, 6)

        section = report_section(
            signed_in(personas, "organiser").get(DASHBOARD).content.decode(), "entailment")

        assert f"<dt>Labelled items</dt><dd>{n}</dd>" in section
        assert (f"<dt>Agreement</dt><dd>{floatformat(agreed / n, 3)} (95% interval "
                f"{floatformat(low, 3)} to {floatformat(high, 3)})</dd>") in section
        assert f"<dt>Cohen's kappa</dt><dd>{floatformat(kappa, 3)}</dd>" in section
        for word, said in (("entailed", True), ("not entailed", False)):
            cells = [sum(person[pk] is said and judge[pk] is verdict for pk in judge)
                     for verdict in (True, False)]
            assert (f'<tr><th scope="row">{word}</th><td>{cells[0]}</td><td>{cells[1]}</td>'
                    "<td>0</td></tr>") in section
        edges = [k / 10 for k in range(10)] + [math.inf]  # the calibration error's bins
        rows = 0
        for lower, upper in pairwise(edges):
            inside = [pk for pk in judge if lower <= confidence[pk] < upper]
            if inside:
                rows += 1
                assert (f"<tr><td>{floatformat(lower, 2)} to {floatformat(min(upper, 1), 2)}"
                        f"</td><td>{len(inside)}</td>"
                        f"<td>{sum(judge[pk] == person[pk] for pk in inside)}</td>") in section
        assert rows >= 2
        assert 'id="agreement-entailment" class="plot" role="img"' in section
        # 0.9 agreement at risk 0.1 needs 22 agreeing labels (0.9**22 <= 0.1): none passes,
        # every entailment goes to a person, and people have settled all eight.
        needed = math.ceil(math.log(0.1) / math.log(0.9))
        assert "<dt>Threshold</dt><dd>none: sample too small" in section
        assert f"<dt>More labels needed</dt><dd>about {needed - n}</dd>" in section
        assert "<dt>Judgments</dt><dd>8</dd>" in section
        assert "<dt>Accepted</dt><dd>0 (coverage 0.000)</dd>" in section
        assert "<dt>Escalated</dt><dd>8</dd>" in section
        assert "<dt>Not reviewed yet</dt><dd>0</dd>" in section
        assert "<dt>Settled by people</dt><dd>8</dd>" in section

    def test_answers_report_how_often_the_relevant_nuggets_agree_exactly(
        self, personas: Personas, doubted: Run
    ) -> None:
        sample = draw(personas, "answer")
        # People agree that D001 and D003 are correct and D002 is not, but for D003 find
        # nuggets 1 and 3 relevant where the judge found 1 and 2.
        given: dict[str, dict[str, Any]] = {
            "China National Space Administration": {"correct": True, "relevant": [1, 2]},
            "Buzz Aldrin": {"correct": False},
            "Mars": {"correct": True, "relevant": [1, 3]},
        }
        same_set = same_verdict = 0
        for answer, changes in given.items():
            judgment = judgment_of(answer)
            assert judgment.llm_label is not None
            blind_item_label(item=item_of(sample, judgment), user=personas.organiser,
                             changes=changes)
            same_verdict += judgment.llm_label["correct"] == changes["correct"]
            same_set += (sorted(judgment.llm_label["relevant"])
                         == sorted(changes.get("relevant", [])))

        section = report_section(
            signed_in(personas, "organiser").get(DASHBOARD).content.decode(), "answer")

        assert (same_verdict, same_set) == (3, 2)
        assert f"<dt>Agreement</dt><dd>{floatformat(same_verdict / 3, 3)} (95% interval" in section
        assert f"<dt>Exact relevant sets</dt><dd>{same_set} of 3 agree</dd>" in section
        assert "<th scope=\"col\">Judge: correct</th><th scope=\"col\">Judge: incorrect</th>" \
            in section

    def test_a_threshold_that_passes_accepts_the_judgments_above_it(
        self, personas: Personas, doubted: Run
    ) -> None:
        campaign = personas.campaign
        campaign.agreement_target, campaign.agreement_risk = 0.5, 0.25
        campaign.save()
        sample = draw(personas, "entailment", size=4, seed=3)
        labelled = set()
        for item in sample.items.select_related("judgment"):
            assert item.judgment.llm_label is not None
            blind_item_label(item=item, user=personas.organiser,
                             changes=dict(item.judgment.llm_label))  # people agree
            labelled.add(item.judgment_id)
        entailments = list(Judgment.objects.filter(kind="entailment"))
        # At 0.5 and risk 0.25, two agreeing labels suffice (0.5**2 <= 0.25): with no
        # disagreement, every threshold passes, down to the least sure labelled judgment.
        threshold = min(sure(j) for j in entailments if j.pk in labelled)
        others = [j for j in entailments if j.pk not in labelled]
        accepted = sum(sure(j) >= threshold for j in others)
        escalated = len(others) - accepted
        assert accepted and escalated  # the seed draws a sample that leaves both

        section = report_section(
            signed_in(personas, "organiser").get(DASHBOARD).content.decode(), "entailment")

        assert (f"<dt>Threshold</dt><dd>the judge's confidence {floatformat(threshold, 3)} "
                "or more: ") in section
        assert (f"<dt>Accepted</dt><dd>{accepted} (coverage "
                f"{floatformat(accepted / len(entailments), 3)})</dd>") in section
        assert f"<dt>Escalated</dt><dd>{escalated}</dd>" in section
        assert ('<dt>Not reviewed yet</dt><dd><a href="/campaigns/toy/judgments/'
                f'?to_review=1&amp;doubtful=1&amp;kind=entailment">{escalated}</a></dd>') in section
        assert f"<dt>Settled by people</dt><dd>{len(labelled)}</dd>" in section
        assert "<dt>Target</dt><dd>0.5 agreement with people</dd>" in section
        assert "<dt>Risk</dt><dd>0.25</dd>" in section
