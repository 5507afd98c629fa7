"""The organisers' review queue: judgments sorted by the judge's doubt, one-click
confirmation, and a judgment page that says how each sub-decision was made."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser, User
from django.test import Client
from django.utils.html import escape

from campaign.models import GoldAnswer, Question, Track
from grading.models import Judgment, JudgmentEdit
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from grading.review.edits import CONFIRM_NOTE, NOTHING_TO_CONFIRM
from submissions.models import Run
from tests.grading.fixtures import (
    FOURTH_PLANET,
    MARS_DIAMETER,
    SOFT_LANDING,
    judgment_of,
)
from tests.grading.scripted_server import ScriptedJudge
from tests.support import Personas, signed_in

pytestmark = pytest.mark.django_db

QUEUE = "/campaigns/toy/judgments/"



def browser_of(user: AbstractBaseUser) -> Client:
    """A signed-in client that checks CSRF tokens, as Django does for a browser."""
    assert isinstance(user, User)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def listed(page: str) -> list[int]:
    """The judgment ids of a queue page, top to bottom."""
    return [int(pk) for pk in re.findall(r'<h2 id="j(\d+)-h">', page)]


def confirm_buttons(page: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'action="/judgments/(\d+)/confirm/"', page)]


class TestTheQueue:
    def test_it_lists_the_least_sure_first_with_the_judges_confidence(
        self, personas: Personas, doubted: Run
    ) -> None:
        page = signed_in(personas, "organiser").get(QUEUE).content.decode()
        order = [judgment_of(t).pk for t in (SOFT_LANDING, "Buzz Aldrin", "Mars", MARS_DIAMETER)]
        assert listed(page)[:4] == order
        assert len(listed(page)) == 11  # the rest follow, all sure
        assert "p = 60%" in page and "p = 75%" in page and "p = 99%" in page
        assert page.count("doubtful, not yet reviewed") == 3
        # Confirm on each doubtful row that waits for review, and on no other.
        assert confirm_buttons(page) == order[:3]

    def test_the_order_by_run_is_still_there_when_asked_for(
        self, personas: Personas, doubted: Run
    ) -> None:
        page = signed_in(personas, "organiser").get(
            f"{QUEUE}?kind=answer&order=run").content.decode()
        assert listed(page) == [judgment_of(a).pk for a in
                                ("China National Space Administration", "Buzz Aldrin", "Mars")]

    def test_one_queue_holds_what_waits_for_a_person(
        self, personas: Personas, doubted: Run
    ) -> None:
        page = signed_in(personas, "organiser").get(f"{QUEUE}?to_review=1").content.decode()
        assert "3 judgment use(s) match." in page
        assert listed(page) == [judgment_of(t).pk for t in (SOFT_LANDING, "Buzz Aldrin", "Mars")]
        assert '<a href="?to_review=1"><strong>3</strong> judgment(s) wait for a person</a>' in page
        # One queue; the rest are filters on it, not other queues.
        assert "Needs-review queue" not in page and "not yet reviewed (" not in page
        assert 'name="to_review"' in page and 'name="needs_review"' in page

    def test_the_filters_narrow_the_queue(self, personas: Personas, doubted: Run) -> None:
        organiser = signed_in(personas, "organiser")
        answers = organiser.get(f"{QUEUE}?to_review=1&kind=answer").content.decode()
        assert listed(answers) == [judgment_of(t).pk for t in ("Buzz Aldrin", "Mars")]
        unlabelled = organiser.get(f"{QUEUE}?to_review=1&needs_review=1").content.decode()
        assert "0 judgment use(s) match." in unlabelled  # every reply here parsed

    def test_a_judgment_without_a_label_waits_in_the_same_queue(
        self, personas: Personas, doubted: Run
    ) -> None:
        mars = judgment_of("Mars")
        Judgment.objects.filter(pk=mars.pk).update(llm_label=None, confidence=None)
        page = signed_in(personas, "organiser").get(f"{QUEUE}?to_review=1").content.decode()
        assert mars.pk in listed(page) and "3 judgment use(s) match." in page
        unlabelled = signed_in(personas, "organiser").get(
            f"{QUEUE}?to_review=1&needs_review=1").content.decode()
        assert listed(unlabelled) == [mars.pk]

    def test_one_click_confirms_and_the_row_leaves_the_queue(
        self, personas: Personas, doubted: Run,
        django_capture_on_commit_callbacks: Callable[..., Any],
    ) -> None:
        # The session and CSRF token the organiser's click sends.
        client = browser_of(personas.organiser)
        page = client.get(f"{QUEUE}?to_review=1").content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None
        landing = judgment_of(SOFT_LANDING)

        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = client.post(f"/judgments/{landing.pk}/confirm/", {
                "csrfmiddlewaretoken": token.group(1), "next": f"{QUEUE}?to_review=1"},
                follow=True)

        after = response.content.decode()
        assert response.redirect_chain == [(f"{QUEUE}?to_review=1", 302)]
        assert f"Judgment {landing.pk} confirmed; 1 run(s) queued for re-grading." in after
        assert "2 judgment use(s) match." in after and landing.pk not in listed(after)
        assert len(queued) == 1
        edit = JudgmentEdit.objects.get()
        assert (edit.judgment_id, edit.note, edit.edited_by_id) == (
            landing.pk, CONFIRM_NOTE, personas.organiser.pk)
        assert edit.previous_label == edit.new_label == {"entailed": True}
        landing.refresh_from_db()
        assert landing.edited and landing.label == landing.llm_label == {"entailed": True}
        # In the full queue it stays, marked reviewed and without a button.
        full = client.get(QUEUE).content.decode()
        assert landing.pk in listed(full) and landing.pk not in confirm_buttons(full)
        assert "doubtful, reviewed" in full and '<span class="badge">confirmed</span>' in full

    def test_a_click_without_the_csrf_token_changes_nothing(
        self, personas: Personas, doubted: Run
    ) -> None:
        client = browser_of(personas.organiser)
        response = client.post(f"/judgments/{judgment_of(SOFT_LANDING).pk}/confirm/")
        assert response.status_code == 403
        assert not JudgmentEdit.objects.exists()

    @pytest.mark.parametrize("who", ["participant_a", "outsider"])
    def test_no_one_but_organisers_may_confirm(
        self, personas: Personas, doubted: Run, who: str
    ) -> None:
        response = signed_in(personas, who).post(
            f"/judgments/{judgment_of(SOFT_LANDING).pk}/confirm/")
        assert response.status_code == 404  # as for every organiser page
        assert not JudgmentEdit.objects.exists()

    def test_a_visitor_is_sent_to_sign_in(self, personas: Personas, doubted: Run) -> None:
        response = Client().post(f"/judgments/{judgment_of(SOFT_LANDING).pk}/confirm/")
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
        assert not JudgmentEdit.objects.exists()


class TestTheJudgmentPage:
    def test_a_sure_judgment_says_plainly_why_it_has_no_reason(
        self, personas: Personas, toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge
    ) -> None:
        script.sure[FOURTH_PLANET] = 0.97
        run_grade(run=toy_ac_run, judge=judge)
        page = signed_in(personas, "organiser").get(
            f"/judgments/{judgment_of(FOURTH_PLANET).pk}/").content.decode()
        assert ("No reason was written: the judge was sure (p = 97%). Reasons are written only "
                "for judgments under the campaign's review threshold (80%).") in page

    def test_a_doubtful_judgment_shows_its_reason_its_steps_and_a_confirm_button(
        self, personas: Personas, doubted: Run
    ) -> None:
        mars = judgment_of("Mars")
        page = signed_in(personas, "organiser").get(f"/judgments/{mars.pk}/").content.decode()
        assert "No reason was written" not in page
        assert "— scripted" in page  # the reason written for nugget 3's relevance
        assert "none for the verdict itself; the nuggets the judge doubted have theirs" in page
        assert "p = 75%" in page and "doubtful, not yet reviewed" in page
        rows = re.findall(r"<tr><td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*"
                          r"<td>(.*?)</td>\s*<td>(.*?)</td></tr>", page)
        assert [(question, verdict, confidence, explained)
                for question, _, verdict, confidence, explained in rows] == [
            ("Is the answer correct, given the nuggets?", "yes", "99%", "no"),
            ("Did nugget 1 help to deduce the answer?", "yes", "99%", "no"),
            ("Did nugget 2 help to deduce the answer?", "yes", "99%", "no"),
            ("Did nugget 3 help to deduce the answer?", "no", "75%", "yes"),
        ]
        assert all(by.startswith("LLM call (prompt ") for _, by, *_ in rows)
        assert confirm_buttons(page) == [mars.pk]

    def test_a_step_decided_by_a_rule_names_the_rule(
        self, personas: Personas, toy_ac_run: Run, judge: OpenAIJudge
    ) -> None:
        Track.objects.filter(slug="ac").update(answer_check="gold")
        GoldAnswer.objects.create(question=Question.objects.get(qid="D003"), text="Mars")
        run_grade(run=Run.objects.get(pk=toy_ac_run.pk), judge=judge)
        page = signed_in(personas, "organiser").get(
            f"/judgments/{judgment_of('Mars').pk}/").content.decode()
        assert ("<td>Does the answer match the gold answer?</td>\n      "
                "<td>rule gold-match (matched “Mars”)</td>\n      <td>yes</td>\n      "
                "<td>100%</td>") in page
        assert escape("Matches the gold answer 'Mars' once normalised (rule).") in page

    def test_a_confirmation_from_the_judgment_page_is_kept_in_its_history(
        self, personas: Personas, doubted: Run
    ) -> None:
        buzz = judgment_of("Buzz Aldrin")
        client = signed_in(personas, "organiser")
        response = client.post(f"/judgments/{buzz.pk}/confirm/", follow=True)
        page = response.content.decode()
        assert response.redirect_chain == [(f"/judgments/{buzz.pk}/", 302)]
        assert escape(CONFIRM_NOTE) in page  # the history
        assert "doubtful, reviewed" in page and confirm_buttons(page) == []
        assert JudgmentEdit.objects.get().new_label == {"correct": False, "relevant": []}

    def test_a_judgment_without_a_label_cannot_be_confirmed_and_the_page_says_why(
        self, personas: Personas, toy_ac_run: Run, script: ScriptedJudge, judge: OpenAIJudge
    ) -> None:
        script.faults[FOURTH_PLANET] = ["garbage", "garbage"]  # never parses: needs review
        run_grade(run=toy_ac_run, judge=judge)
        unlabelled = judgment_of(FOURTH_PLANET)
        client = signed_in(personas, "organiser")
        assert confirm_buttons(client.get(f"/judgments/{unlabelled.pk}/").content.decode()) == []

        response = client.post(f"/judgments/{unlabelled.pk}/confirm/", follow=True)

        assert escape(f"Judgment {unlabelled.pk} was not confirmed: {NOTHING_TO_CONFIRM}.") \
            in response.content.decode()
        assert not JudgmentEdit.objects.exists()

    def test_an_unmeasured_confidence_is_said_to_be_unmeasured(
        self, personas: Personas, doubted: Run
    ) -> None:
        # A server that gave no token probabilities: no doubt measured, no reason asked.
        planet = judgment_of(FOURTH_PLANET)
        Judgment.objects.filter(pk=planet.pk).update(confidence=None)
        page = signed_in(personas, "organiser").get(f"/judgments/{planet.pk}/").content.decode()
        assert "Judge's confidence: not measured" in page
        assert "No reason was written: the judge's confidence was not measured" in page


@pytest.mark.parametrize(("probability", "shown"), [
    (0.97, "97%"), (0.57, "57%"), (1.0, "100%"), (0.0, "0%"), (None, "—"),
    (0.796, "79%"),  # under an 80% threshold it never reads 80%
])
def test_a_probability_shows_as_a_whole_percentage_rounded_down(
    probability: float | None, shown: str
) -> None:
    from frontend.templatetags.review import percent

    assert percent(probability) == shown
