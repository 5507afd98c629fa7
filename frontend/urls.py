from __future__ import annotations

from django.urls import path

from frontend import views

urlpatterns = [
    path("", views.home, name="home"),
    path("campaigns/<slug:slug>/", views.campaign_home, name="campaign-home"),
]
