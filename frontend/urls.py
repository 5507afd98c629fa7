from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from frontend import (
    agreement,
    archive_views,
    organiser,
    results,
    rubric,
    run_overrides,
    sign_in,
    validation,
    views,
)

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", sign_in.SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("campaigns/<slug:slug>/", views.campaign_home, name="campaign-home"),
    path("campaigns/<slug:slug>/runs/", views.campaign_runs, name="campaign-runs"),
    path("campaigns/<slug:slug>/team/", views.team_page, name="team"),
    path("campaigns/<slug:slug>/runs/upload/", views.run_upload, name="run-upload"),
    path("campaigns/<slug:slug>/results/", results.results, name="campaign-results"),
    path("campaigns/<slug:slug>/results/<str:run_name>/", results.results_run,
         name="results-run"),
    path("campaigns/<slug:slug>/dashboard/", organiser.dashboard, name="dashboard"),
    path("campaigns/<slug:slug>/dashboard/grade/", organiser.start_grading, name="start-grading"),
    path("campaigns/<slug:slug>/dashboard/score/", organiser.start_scoring, name="start-scoring"),
    path("campaigns/<slug:slug>/dashboard/testbank/", organiser.start_testbank_generation,
         name="start-testbank-generation"),
    path("campaigns/<slug:slug>/dashboard/publish/<slug:track>/", organiser.publish,
         name="publish"),
    path("campaigns/<slug:slug>/dashboard/validate/", validation.start_validation,
         name="start-validation"),
    path("campaigns/<slug:slug>/validations/<int:validation_id>/",
         validation.validation_detail, name="validation-detail"),
    path("campaigns/<slug:slug>/judgments/", organiser.judgments, name="judgments"),
    path("judgments/<int:judgment_id>/", organiser.judgment_detail, name="judgment-detail"),
    path("judgments/<int:judgment_id>/confirm/", organiser.confirm_judgment,
         name="judgment-confirm"),
    path("campaigns/<slug:slug>/testbank/", rubric.testbank, name="testbank"),
    path("campaigns/<slug:slug>/testbank/<int:item_id>/", rubric.testbank_item,
         name="testbank-item"),
    path("campaigns/<slug:slug>/testbank/<int:item_id>/retire/", rubric.testbank_item_retire,
         name="testbank-item-retire"),
    path("campaigns/<slug:slug>/tracks/<slug:track>/grid/", rubric.grid, name="rubric-grid"),
    path("campaigns/<slug:slug>/tracks/<slug:track>/verify/", rubric.verify_grading,
         name="rubric-verify"),
    path("campaigns/<slug:slug>/tracks/<slug:track>/passage/", rubric.passage,
         name="rubric-passage"),
    path("campaigns/<slug:slug>/tracks/<slug:track>/grades/<int:judgment_id>/",
         rubric.grade_edit, name="rubric-grade"),
    path("campaigns/<slug:slug>/tracks/<slug:track>/missing-and-spurious/",
         rubric.testbank_gaps, name="rubric-gaps"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/download/", views.run_download, name="run-download"),
]


# Run overrides and quotas.
urlpatterns += [
    path("runs/<int:run_id>/overrides/", run_overrides.run_overrides, name="run-overrides"),
    path("campaigns/<slug:slug>/quota/", run_overrides.quota, name="quota"),
]

# Stalled grading: runs by age in their state, workers' heartbeats.
urlpatterns += [
    path("campaigns/<slug:slug>/dashboard/stalls/", organiser.grading_stalls,
         name="grading-stalls"),
]

# The results archive: organisers' full one, a team's public part.
urlpatterns += [
    path("campaigns/<slug:slug>/dashboard/archive/", archive_views.archive_page,
         name="archive"),
    path("campaigns/<slug:slug>/dashboard/archive/full.zip", archive_views.archive_full,
         name="archive-full"),
    path("campaigns/<slug:slug>/team/archive.zip", archive_views.archive_public,
         name="archive-public"),
]

# Blind samples of judgments, labelled by people, and the agreement they measure.
urlpatterns += [
    path("campaigns/<slug:slug>/blind-samples/", agreement.blind_samples, name="blind-samples"),
    path("blind-samples/<int:sample_id>/label/", agreement.blind_label, name="blind-label"),
    path("campaigns/<slug:slug>/agreement/cascade/", agreement.cascade,
         name="agreement-cascade"),
]
