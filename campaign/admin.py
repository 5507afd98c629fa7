from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from campaign.models import (
    Campaign,
    CorpusPassage,
    GoldAnswer,
    Membership,
    Question,
    Team,
    TestBankEdit,
    TestBankItem,
    Track,
)


class TrackInline(admin.TabularInline[Track, Campaign]):
    model = Track
    extra = 0


class TeamInline(admin.TabularInline[Team, Campaign]):
    model = Team
    extra = 0


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin[Campaign]):
    list_display = ("slug", "title", "timezone", "topics_release", "pr_due", "ac_due",
                    "results_release")
    search_fields = ("slug", "title")
    inlines = [TrackInline, TeamInline]


class GoldAnswerInline(admin.TabularInline[GoldAnswer, Question]):
    model = GoldAnswer
    extra = 0


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin[Question]):
    list_display = ("qid", "campaign", "category", "text")
    list_filter = ("campaign", "category")
    search_fields = ("qid", "text")
    inlines = [GoldAnswerInline]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin[Team]):
    list_display = ("name", "campaign")
    list_filter = ("campaign",)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ("user", "campaign", "role", "team")
    list_filter = ("campaign", "role")
    search_fields = ("user__username",)


@admin.register(Track)
class TrackAdmin(admin.ModelAdmin[Track]):
    list_display = ("slug", "campaign", "kind", "max_runs_per_team", "answer_check")
    list_filter = ("campaign", "kind")


@admin.register(CorpusPassage)
class CorpusPassageAdmin(admin.ModelAdmin[CorpusPassage]):
    list_display = ("docid", "campaign")
    list_filter = ("campaign",)
    search_fields = ("=docid",)  # exact: a corpus may hold a million passages
    show_full_result_count = False


class TestBankEditInline(admin.TabularInline[TestBankEdit, TestBankItem]):
    model = TestBankEdit
    extra = 0
    can_delete = False
    readonly_fields = ("action", "user", "at", "note", "previous_text", "previous_answers",
                       "previous_status", "text", "answers")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TestBankItem)
class TestBankItemAdmin(admin.ModelAdmin[TestBankItem]):
    """Read-only: changes go through the API or the organiser page, which audit them."""

    list_display = ("item_id", "campaign", "question", "target", "status", "text")
    list_filter = ("campaign", "target", "status")
    search_fields = ("item_id", "text")
    inlines = [TestBankEditInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
