"""Model factories for tests: a campaign whose phases sit around `now`."""

from __future__ import annotations

from datetime import timedelta

import factory
from django.contrib.auth.models import User
from django.utils import timezone

from campaign.models import Campaign, Membership, Question, Role, Team, Track


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("secret-pass-123")


class CampaignFactory(factory.django.DjangoModelFactory[Campaign]):
    """Open campaign: topics released a day ago, PR due in a week, AC in two."""

    class Meta:
        model = Campaign

    slug = factory.Sequence(lambda n: f"campaign-{n}")
    title = factory.LazyAttribute(lambda c: f"Campaign {c.slug}")
    timezone = "Asia/Tokyo"
    topics_release = factory.LazyFunction(lambda: timezone.now() - timedelta(days=1))
    pr_due = factory.LazyFunction(lambda: timezone.now() + timedelta(days=7))
    ac_due = factory.LazyFunction(lambda: timezone.now() + timedelta(days=14))
    results_release = factory.LazyFunction(lambda: timezone.now() + timedelta(days=60))


class TrackFactory(factory.django.DjangoModelFactory[Track]):
    class Meta:
        model = Track

    campaign = factory.SubFactory(CampaignFactory)
    slug = "ac"
    kind = "ac"


class QuestionFactory(factory.django.DjangoModelFactory[Question]):
    class Meta:
        model = Question

    campaign = factory.SubFactory(CampaignFactory)
    qid = factory.Sequence(lambda n: f"D{n:03d}")
    text = factory.LazyAttribute(lambda q: f"Question {q.qid}?")
    position = factory.Sequence(lambda n: n)


class TeamFactory(factory.django.DjangoModelFactory[Team]):
    class Meta:
        model = Team

    campaign = factory.SubFactory(CampaignFactory)
    name = factory.Sequence(lambda n: f"TEAM{n}")


def make_member(campaign: Campaign, username: str, team: Team | None = None) -> Membership:
    user = UserFactory.create(username=username)
    role = Role.PARTICIPANT if team else Role.ORGANISER
    return Membership.objects.create(campaign=campaign, user=user, role=role, team=team)
