"""The toy campaign with one thing of every kind an API id names, in each phase of its
life: the shared ground of the visibility tests (docs/access.md).

Team A (WASEDA, alice) owns the AC run WASEDA-AC-1 and the PR run WASEDA-PO-1; team B
(KYOTO, bob) owns the PR run KYOTO-PG-1. The AC run is graded (so judgments exist) and
every track scored; a ranking track has a test bank. A second campaign has its own
participant (eve), who is nobody in the toy campaign.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from grading.models import Judgment
from grading.openai_judge import OpenAIJudge
from grading.r2c2.pipeline import run_grade
from scoring.models import Evaluation
from scoring.services import campaign_score, evaluation_publish, evaluation_unpublish
from submissions.models import Run
from tests.factories import CampaignFactory, TeamFactory, make_member
from tests.grading.rounds import round_graded
from tests.grading.rubric_support import make_bank, rubric_track
from tests.support import Personas

#: Who asks, in the words of the visibility rules.
PERSONAS = ("organiser", "own", "other", "elsewhere", "outsider", "anonymous")
#: The persona attributes of tests.support.Personas behind each name.
_PERSONA_ATTRIBUTE = {"organiser": "organiser", "own": "participant_a",
                      "other": "participant_b", "outsider": "outsider"}

#: The phases the rules turn on, in time order.
BEFORE_TOPICS = "before topics release"
PR_SHARED = "after PR due (PR runs shared)"
PUBLISHED = "after results release, leaderboards published"
PHASES = (BEFORE_TOPICS, PR_SHARED, PUBLISHED)

#: An id no row has (ids start at 1 in every test database), and a slug no campaign has.
MISSING_ID = 2_000_000_000
MISSING_SLUG = "no-such-campaign"


@dataclass
class World:
    personas: Personas
    elsewhere: User  # a participant of another campaign
    ids: dict[str, int]  # own_ac, own_pr, other_pr, judgment, bank_item

    def user(self, who: str) -> User:
        user = self.elsewhere if who == "elsewhere" else getattr(
            self.personas, _PERSONA_ATTRIBUTE[who])
        assert isinstance(user, User)
        return user

    def client(self, who: str) -> APIClient:
        """An API client with the persona's token ('anonymous': none)."""
        client = APIClient()
        if who != "anonymous":
            token, _ = Token.objects.get_or_create(user=self.user(who))
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client


def build_world(personas: Personas, toy_ac_run: Run, judge: OpenAIJudge) -> World:
    """Grade and score the toy campaign (nothing published), add a test bank and a
    second campaign. `toy_ac_run` has already put the three runs in (tests.grading.fixtures)."""
    run_grade(run=toy_ac_run, judge=judge)
    round_graded(toy_ac_run)
    campaign_score(campaign=personas.campaign)
    rubric_track(personas)
    bank = make_bank(personas)

    elsewhere = CampaignFactory.create(slug="elsewhere")
    eve = make_member(elsewhere, "eve", TeamFactory.create(campaign=elsewhere, name="ELSE")).user

    runs = dict(Run.objects.filter(track__campaign=personas.campaign)
                .values_list("name", "pk"))
    judgment = Judgment.objects.filter(campaign=personas.campaign, kind="entailment",
                                       llm_label__entailed=True).order_by("pk").first()
    assert judgment is not None
    ids = {"own_ac": runs["WASEDA-AC-1"], "own_pr": runs["WASEDA-PO-1"],
           "other_pr": runs["KYOTO-PG-1"], "judgment": judgment.pk,
           "bank_item": bank["director"].pk}
    return World(personas=personas, elsewhere=eve, ids=ids)


def set_phase(world: World, phase: str) -> None:
    """Move the toy campaign's clock to `phase`; publish its leaderboards in the last."""
    campaign = world.personas.campaign
    now = timezone.now()
    days = {BEFORE_TOPICS: (1, 2, 3, 4), PR_SHARED: (-3, -1, 7, 30),
            PUBLISHED: (-4, -3, -2, -1)}[phase]
    (campaign.topics_release, campaign.pr_due, campaign.ac_due,
     campaign.results_release) = (now + timedelta(days=d) for d in days)
    campaign.full_clean()
    campaign.save()
    for evaluation in Evaluation.objects.filter(track__campaign=campaign):
        if phase == PUBLISHED:
            # force: the toy's judge is sure of everything, but the phase is the point here.
            evaluation_publish(evaluation=evaluation, user=world.personas.organiser, force=True)
        else:
            evaluation_unpublish(evaluation=evaluation)
