"""The Django admin: superusers see everything; an organiser (staff, which `load_campaign`
gives) sees and edits only their own campaigns, per model as `organiser_may` says, the role
itself being the permission (docs/access.md, "The Django admin")."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from django.contrib import admin
from django.contrib.admin.options import BaseModelAdmin
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest

from campaign.models import (
    Campaign,
    CorpusPassage,
    GoldAnswer,
    Membership,
    Question,
    Role,
    Team,
    TestBankEdit,
    TestBankItem,
    Track,
)

_M = TypeVar("_M", bound=models.Model)
_P = TypeVar("_P", bound=models.Model)

VIEW, ADD, CHANGE, DELETE = "view", "add", "change", "delete"
#: The request attribute caching the campaigns its user organises.
_ORGANISED = "_organised_campaign_ids"


def organised_campaign_ids(request: HttpRequest) -> frozenset[int]:
    """The ids of the campaigns the signed-in user organises (once per request)."""
    cached: frozenset[int] | None = getattr(request, _ORGANISED, None)
    if cached is None:
        user = request.user
        cached = frozenset(
            Membership.objects.filter(user_id=user.pk, role=Role.ORGANISER)
            .values_list("campaign_id", flat=True)
        ) if user.is_authenticated else frozenset()
        setattr(request, _ORGANISED, cached)
    return cached


def _is_superuser(request: HttpRequest) -> bool:
    return bool(getattr(request.user, "is_superuser", False))


def _organiser_may(request: HttpRequest, allowed: frozenset[str], action: str,
                   campaign_id: int | None) -> bool:
    """Whether an organiser may take `action` here: on a row of `campaign_id`, or, with
    None, on some row of some campaign they organise (lists, the add form)."""
    organised = organised_campaign_ids(request)
    if action not in allowed or not organised:
        return False
    return campaign_id is None or campaign_id in organised


def _own_campaigns_only(request: HttpRequest, formfield: Any) -> Any:
    """An organiser picks a campaign, team or question of their own campaigns only; the
    form then refuses any other id sent."""
    if _is_superuser(request) or not isinstance(formfield, ModelChoiceField):
        return formfield
    organised = organised_campaign_ids(request)
    queryset = formfield.queryset
    if queryset is None:
        return formfield
    if queryset.model is Campaign:
        formfield.queryset = queryset.filter(pk__in=organised)
    elif queryset.model in (Team, Question, Track):
        formfield.queryset = queryset.filter(campaign_id__in=organised)
    return formfield


class OrganiserPermissions(BaseModelAdmin[_M]):
    """A model admin's or inline's permissions scoped to the organisers: Django's own for a
    superuser, else the actions in `organiser_may` on rows of a campaign they organise
    (`campaign_id_of`: the row's own, or an inline's parent row's)."""

    organiser_may: ClassVar[frozenset[str]] = frozenset({VIEW})

    def campaign_id_of(self, obj: Any) -> int:
        return int(obj.serializable_value("campaign"))  # the campaign_id column

    def _may(self, request: HttpRequest, action: str, obj: Any) -> bool:
        return _organiser_may(request, self.organiser_may, action,
                              None if obj is None else self.campaign_id_of(obj))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_view_permission(request, obj)
        return self._may(request, VIEW, obj)

    def has_add_permission(self, request: HttpRequest, *parent: Any) -> bool:
        # A model admin asks with the request alone, an inline with its parent row too.
        if _is_superuser(request):
            return super().has_add_permission(request, *parent)
        return self._may(request, ADD, parent[0] if parent else None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_change_permission(request, obj)
        return self._may(request, CHANGE, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _is_superuser(request):
            return super().has_delete_permission(request, obj)
        return self._may(request, DELETE, obj)


class OrganiserScopedAdmin(OrganiserPermissions[_M], admin.ModelAdmin[_M]):
    """A model admin whose rows belong to a campaign, scoped to its organisers."""

    #: The lookup from this model to its campaign's id, for the list's filter.
    campaign_lookup: ClassVar[str] = "campaign_id"

    def get_queryset(self, request: HttpRequest) -> QuerySet[_M]:
        rows = super().get_queryset(request)
        if _is_superuser(request):
            return rows
        return rows.filter(**{f"{self.campaign_lookup}__in": organised_campaign_ids(request)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        if _is_superuser(request):
            return super().has_module_permission(request)
        return bool(organised_campaign_ids(request))

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest,
                                 **kwargs: Any) -> Any:
        return _own_campaigns_only(
            request, super().formfield_for_foreignkey(db_field, request, **kwargs))


class OrganiserScopedInline(OrganiserPermissions[_M], admin.TabularInline[_M, _P]):
    """An inline of a scoped admin: the parent row's campaign decides."""


# The campaign list filter offers only the campaigns in the (scoped) list.
CAMPAIGN_FILTER = ("campaign", admin.RelatedOnlyFieldListFilter)


class TrackInline(OrganiserScopedInline[Track, Campaign]):
    model = Track
    extra = 0
    organiser_may = frozenset({VIEW, CHANGE, ADD})

    def campaign_id_of(self, obj: Campaign) -> int:
        return obj.pk  # the parent row is the campaign


class TeamInline(OrganiserScopedInline[Team, Campaign]):
    model = Team
    extra = 0

    def campaign_id_of(self, obj: Campaign) -> int:
        return obj.pk  # the parent row is the campaign


@admin.register(Campaign)
class CampaignAdmin(OrganiserScopedAdmin[Campaign]):
    list_display = ("slug", "title", "timezone", "topics_release", "pr_due", "ac_due",
                    "results_release")
    search_fields = ("slug", "title")
    inlines = [TrackInline, TeamInline]
    campaign_lookup = "pk"
    # A new campaign comes from a campaign file (which names its organisers).
    organiser_may = frozenset({VIEW, CHANGE})

    def campaign_id_of(self, obj: Campaign) -> int:
        return obj.pk

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The slug is in every URL and file name of the campaign.
        fields = tuple(super().get_readonly_fields(request, obj))
        return fields if _is_superuser(request) else (*fields, "slug")


class GoldAnswerInline(OrganiserScopedInline[GoldAnswer, Question]):
    model = GoldAnswer
    extra = 0
    organiser_may = frozenset({VIEW, CHANGE, ADD, DELETE})


@admin.register(Question)
class QuestionAdmin(OrganiserScopedAdmin[Question]):
    list_display = ("qid", "campaign", "category", "text")
    list_filter = (CAMPAIGN_FILTER, "category")
    search_fields = ("qid", "text")
    inlines = [GoldAnswerInline]
    organiser_may = frozenset({VIEW, CHANGE, ADD, DELETE})


@admin.register(Team)
class TeamAdmin(OrganiserScopedAdmin[Team]):
    list_display = ("name", "campaign")
    list_filter = (CAMPAIGN_FILTER,)


@admin.register(Membership)
class MembershipAdmin(OrganiserScopedAdmin[Membership]):
    list_display = ("user", "campaign", "role", "team")
    list_filter = (CAMPAIGN_FILTER, "role")
    search_fields = ("user__username",)


@admin.register(Track)
class TrackAdmin(OrganiserScopedAdmin[Track]):
    list_display = ("slug", "campaign", "kind", "max_runs_per_team", "answer_check")
    list_filter = (CAMPAIGN_FILTER, "kind")
    organiser_may = frozenset({VIEW, CHANGE, ADD})


@admin.register(CorpusPassage)
class CorpusPassageAdmin(OrganiserScopedAdmin[CorpusPassage]):
    list_display = ("docid", "campaign")
    list_filter = (CAMPAIGN_FILTER,)
    search_fields = ("=docid",)  # exact: a corpus may hold a million passages
    show_full_result_count = False


class TestBankEditInline(OrganiserScopedInline[TestBankEdit, TestBankItem]):
    model = TestBankEdit
    extra = 0
    can_delete = False
    readonly_fields = ("action", "user", "at", "note", "previous_text", "previous_answers",
                       "previous_status", "text", "answers")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TestBankItem)
class TestBankItemAdmin(OrganiserScopedAdmin[TestBankItem]):
    """Read-only: changes go through the API or the organiser page, which audit them."""

    list_display = ("item_id", "campaign", "question", "target", "status", "text")
    list_filter = (CAMPAIGN_FILTER, "target", "status")
    search_fields = ("item_id", "text")
    inlines = [TestBankEditInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
