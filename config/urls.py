from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import ObtainAuthToken

from campaign import api as campaign_api
from config.api_errors import json_not_found
from config.health import healthz

api_v1 = [
    path("auth/token/", ObtainAuthToken.as_view(), name="api-token"),
    path("campaigns/", campaign_api.CampaignListView.as_view(), name="api-campaigns"),
    path("campaigns/<slug:slug>/", campaign_api.CampaignDetailView.as_view(),
         name="api-campaign"),
    path("campaigns/<slug:slug>/questions/", campaign_api.QuestionListView.as_view(),
         name="api-questions"),
    re_path(r"^.*$", json_not_found),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include(api_v1)),
    path("", include("frontend.urls")),
]
