from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerView

from campaign import api as campaign_api
from config.auth_token import ThrottledObtainAuthToken
from config.health import healthz
from config.schema import SchemaView
from grading import api as grading_api
from grading.agreement import api as agreement_api
from grading.review import overrides_api
from grading.rubric import api as testbank_api
from infrastructure.api_errors import json_not_found
from scoring import api as scoring_api
from scoring import meta_api
from scoring.verification import api as verification_api
from submissions import api as submissions_api

api_v1 = [
    path("auth/token/", ThrottledObtainAuthToken.as_view(), name="api-token"),
    path("campaigns/", campaign_api.CampaignListView.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/", campaign_api.CampaignDetailView.as_view(),
         name="api-campaign"),
    path("campaigns/<slug:slug>/questions/", campaign_api.QuestionListView.as_view(),
         name="api-questions"),
    path("campaigns/<slug:slug>/runs/", submissions_api.CampaignRunsView.as_view(),
         name="api-runs"),
    path("campaigns/<slug:slug>/runs/bulk/", submissions_api.CampaignRunsBulkView.as_view(),
         name="api-runs-bulk"),
    path("campaigns/<slug:slug>/shared-pr-runs.zip", submissions_api.SharedPrRunsZipView.as_view(),
         name="api-shared-pr-runs"),
    path("campaigns/<slug:slug>/testbank/", testbank_api.TestBankView.as_view(),
         name="api-testbank"),
    path("campaigns/<slug:slug>/testbank/generate/", testbank_api.TestBankGenerateView.as_view(),
         name="api-testbank-generate"),
    path("testbank/<int:item_id>/", testbank_api.TestBankItemView.as_view(),
         name="api-testbank-item"),
    path("runs/<int:run_id>/", submissions_api.RunDetailView.as_view(), name="api-run"),
    path("runs/<int:run_id>/file/", submissions_api.RunFileView.as_view(), name="api-run-file"),
    path("campaigns/<slug:slug>/grading/", grading_api.GradingView.as_view(),
         name="api-grading"),
    path("campaigns/<slug:slug>/judgments/", grading_api.JudgmentListView.as_view(),
         name="api-judgments"),
    path("judgments/<int:judgment_id>/", grading_api.JudgmentDetailView.as_view(),
         name="api-judgment"),
    path("judgments/<int:judgment_id>/confirm/", grading_api.JudgmentConfirmView.as_view(),
         name="api-judgment-confirm"),
    path("runs/<int:run_id>/marked/", grading_api.MarkedRunView.as_view(), name="api-run-marked"),
    path("campaigns/<slug:slug>/scoring/", scoring_api.ScoringView.as_view(), name="api-scoring"),
    path("campaigns/<slug:slug>/leaderboards/", scoring_api.LeaderboardsView.as_view(),
         name="api-leaderboards"),
    path("campaigns/<slug:slug>/leaderboards/<slug:track>/publish/",
         scoring_api.PublishView.as_view(), name="api-publish"),
    path("campaigns/<slug:slug>/qrels/", scoring_api.QrelsView.as_view(), name="api-qrels"),
    path("campaigns/<slug:slug>/rubric-qrels/", scoring_api.RubricQrelsView.as_view(),
         name="api-rubric-qrels"),
    path("campaigns/<slug:slug>/exports/<str:name>", scoring_api.ExportView.as_view(),
         name="api-export"),
    path("campaigns/<slug:slug>/reference/", meta_api.ReferenceView.as_view(),
         name="api-reference"),
    path("campaigns/<slug:slug>/meta-evaluation/", meta_api.MetaEvaluationView.as_view(),
         name="api-meta-evaluation"),
    path("campaigns/<slug:slug>/verification/grid/", verification_api.GridView.as_view(),
         name="api-verification-grid"),
    path("campaigns/<slug:slug>/verification/answers/", verification_api.AnswersView.as_view(),
         name="api-verification-answers"),
    path("campaigns/<slug:slug>/verification/testbank-gaps/",
         verification_api.TestBankGapsView.as_view(), name="api-verification-testbank-gaps"),
    path("runs/<int:run_id>/scores/", scoring_api.RunScoresView.as_view(), name="api-run-scores"),
    path("runs/<int:run_id>/overrides/", overrides_api.RunOverridesView.as_view(),
         name="api-run-overrides"),
    path("campaigns/<slug:slug>/quota/", submissions_api.CampaignQuotaView.as_view(),
         name="api-quota"),
    path("campaigns/<slug:slug>/blind-samples/", agreement_api.BlindSampleListView.as_view(),
         name="api-blind-samples"),
    path("blind-samples/<int:sample_id>/", agreement_api.BlindSampleView.as_view(),
         name="api-blind-sample"),
    path("blind-items/<int:blind_item_id>/label/", agreement_api.BlindItemLabelView.as_view(),
         name="api-blind-item-label"),
    path("campaigns/<slug:slug>/agreement/", agreement_api.AgreementView.as_view(),
         name="api-agreement"),
    path("campaigns/<slug:slug>/agreement/cascade/", agreement_api.CascadeView.as_view(),
         name="api-agreement-cascade"),
    re_path(r"^.*$", json_not_found),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # GET only: the page renders through a template, and DRF's answer to OPTIONS (the
    # view's metadata) has no template of its own, which was a 500.
    path("api/docs/", SpectacularSwaggerView.as_view(
        url_name="api-schema", http_method_names=["get", "head"]), name="api-docs"),
    path("api/v1/", include(api_v1)),
    path("", include("frontend.urls")),
]
