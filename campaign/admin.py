from __future__ import annotations

from django.contrib import admin

from campaign.models import Campaign, GoldAnswer, Membership, Question, Team, Track


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
