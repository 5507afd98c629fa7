"""Writes for campaigns: loading a campaign description into the database, the corpus and
test bank included, in one transaction (docs/campaign-file.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from campaign.campaign_file import CampaignFileError, CampaignSpec
from campaign.corpus import corpus_load
from campaign.models import Campaign, GoldAnswer, Membership, Question, Role, Team, Track
from campaign.testbank import testbank_load

QUESTION_KEPT = (
    "question {qid} is no longer in the questions file; it is kept (runs may cite it): "
    "delete it in the admin if it should go"
)
TRACK_KEPT = "track {slug} is no longer in the file; it is kept (it may hold runs)"
TEAM_KEPT = "team {name} is no longer in the file; it is kept (it may hold runs), without members"


@dataclass
class LoadReport:
    """What a load changed; `warnings` lists what the file dropped but we kept."""

    campaign: Campaign
    created: bool
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        verb = "created" if self.created else "updated"
        parts = ", ".join(f"{n} {what}" for what, n in self.counts.items())
        return f"Campaign {self.campaign.slug} {verb}: {parts}."


@transaction.atomic
def campaign_load(*, spec: CampaignSpec) -> LoadReport:
    """Create or update a campaign from its description, idempotently: runs, judgments,
    questions, tracks and teams are never deleted; memberships and gold answers follow the file
    exactly (docs/campaign-file.md)."""
    campaign = Campaign.objects.filter(slug=spec.slug).first()
    created = campaign is None
    if campaign is None:
        campaign = Campaign(slug=spec.slug)
    campaign.title = spec.title
    campaign.description = spec.description
    campaign.timezone = spec.timezone
    campaign.review_below = spec.review_below
    campaign.agreement_target = spec.agreement_target
    campaign.agreement_risk = spec.agreement_risk
    campaign.judge_thresholds = spec.judge_thresholds
    for phase, at in _phases(spec).items():
        setattr(campaign, phase, at)
    campaign.full_clean()
    campaign.save()
    report = LoadReport(campaign=campaign, created=created)

    _load_tracks(campaign, spec, report)
    _load_questions(campaign, spec, report)
    _load_people(campaign, spec, report)
    # The data files last: their problems come out of the database too (a changed
    # passage, an item of another query) and undo everything above, all reported at once.
    problems: list[str] = []
    if spec.test_bank_file is not None:
        bank = testbank_load(campaign=campaign, banks=spec.test_bank, source=spec.test_bank_file)
        problems += bank.problems
        report.counts.update(bank.counts)
        report.warnings += bank.warnings
    if spec.corpus is not None:
        corpus = corpus_load(campaign=campaign, path=spec.corpus)
        problems += corpus.problems
        report.counts.update(corpus.counts)
        report.warnings += corpus.warnings
    if problems:
        raise CampaignFileError(problems)
    return report


def _phases(spec: CampaignSpec) -> dict[str, datetime | None]:
    """The campaign's phases; a campaign of ranking/response tracks only gets pr_due and ac_due,
    if its file has none, from its latest track deadline, keeping the required columns in order."""
    phases = dict(spec.phases)
    dues = [track.due for track in spec.tracks if track.due is not None]
    if not spec.has_r2c2_tracks and dues:
        for key in ("pr_due", "ac_due"):
            phases[key] = phases.get(key) or max(dues)
    return phases


def _load_tracks(campaign: Campaign, spec: CampaignSpec, report: LoadReport) -> None:
    for track_spec in spec.tracks:
        track = Track.objects.filter(campaign=campaign, slug=track_spec.slug).first()
        track = track or Track(campaign=campaign, slug=track_spec.slug)
        track.kind = track_spec.kind
        track.max_runs_per_team = track_spec.max_runs_per_team
        track.answer_check = track_spec.answer_check
        track.second_judge_base_url = track_spec.second_judge_base_url
        track.second_judge_model = track_spec.second_judge_model
        track.own_due = track_spec.due
        track.depth = track_spec.depth
        track.min_grade = track_spec.min_grade
        track.label = track_spec.label
        track.cover_k = track_spec.cover_k
        track.significance_tests = list(track_spec.significance_tests)
        track.full_clean()
        track.save()
    named = {track.slug for track in spec.tracks}
    for slug in campaign.tracks.exclude(slug__in=named).values_list("slug", flat=True):
        report.warnings.append(TRACK_KEPT.format(slug=slug))
    report.counts["tracks"] = len(spec.tracks)


def _load_questions(campaign: Campaign, spec: CampaignSpec, report: LoadReport) -> None:
    existing = {question.qid: question for question in campaign.questions.all()}
    to_create: list[Question] = []
    to_update: list[Question] = []
    for position, question_spec in enumerate(spec.questions):
        question = existing.get(question_spec.qid)
        if question is None:
            to_create.append(Question(
                campaign=campaign, qid=question_spec.qid, text=question_spec.text,
                category=question_spec.category, position=position,
            ))
        elif (question.text, question.category, question.position) != (
            question_spec.text, question_spec.category, position
        ):
            question.text = question_spec.text
            question.category = question_spec.category
            question.position = position
            to_update.append(question)
    Question.objects.bulk_create(to_create)
    Question.objects.bulk_update(to_update, ["text", "category", "position"])

    # Gold answers follow the file: they are configuration, not participants' work.
    by_qid = {q.qid: q for q in campaign.questions.all()}
    GoldAnswer.objects.filter(question__campaign=campaign).delete()
    GoldAnswer.objects.bulk_create(
        GoldAnswer(question=by_qid[q.qid], text=text, position=position)
        for q in spec.questions
        for position, text in enumerate(q.gold_answers)
    )
    named = {q.qid for q in spec.questions}
    for qid in sorted(set(existing) - named):
        report.warnings.append(QUESTION_KEPT.format(qid=qid))
    report.counts["questions"] = len(spec.questions)
    report.counts["new questions"] = len(to_create)
    report.counts["changed questions"] = len(to_update)
    report.counts["gold answers"] = sum(len(q.gold_answers) for q in spec.questions)


def _load_people(campaign: Campaign, spec: CampaignSpec, report: LoadReport) -> None:
    user_model = get_user_model()
    wanted: dict[str, tuple[str, Team | None]] = {
        username: (Role.ORGANISER, None) for username in spec.organisers
    }
    for team_spec in spec.teams:
        team_row, _ = Team.objects.get_or_create(campaign=campaign, name=team_spec.name)
        wanted.update({name: (Role.PARTICIPANT, team_row) for name in team_spec.members})
    named_teams = {team.name for team in spec.teams}
    for name in campaign.teams.exclude(name__in=named_teams).values_list("name", flat=True):
        report.warnings.append(TEAM_KEPT.format(name=name))

    new_users = 0
    for username, (role, team) in wanted.items():
        user = user_model.objects.filter(username=username).first()
        if user is None:
            # Created without a password: the organiser sets one (admin, or
            # `manage.py changepassword`); API access can use drf_create_token.
            user = user_model(username=username)
            user.set_unusable_password()
            user.full_clean()
            user.save()
            new_users += 1
        if role == Role.ORGANISER:
            _let_into_admin(user)
        membership = Membership.objects.filter(campaign=campaign, user=user).first()
        membership = membership or Membership(campaign=campaign, user=user)
        membership.role = role
        membership.team = team
        membership.full_clean()
        membership.save()
    Membership.objects.filter(campaign=campaign).exclude(
        user__username__in=list(wanted)
    ).delete()
    report.counts["teams"] = len(spec.teams)
    report.counts["members"] = len(wanted)
    report.counts["new users"] = new_users


def _let_into_admin(user: User) -> None:
    """Give an organiser the staff status the Django admin asks for; never taken away here, as
    staff status may have other reasons and alone opens nothing (docs/access.md)."""
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
