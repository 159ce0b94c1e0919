from __future__ import annotations

from django.urls import path

from annotations.prolific import views

# Included by annotations/urls.py, under its "annotations" namespace.
urlpatterns = [
    path("studies/<slug:slug>/prolific/", views.study_prolific, name="study_prolific"),
    path("studies/<slug:slug>/prolific/publish/", views.study_prolific_publish, name="study_prolific_publish"),
    path("studies/<slug:slug>/prolific/reject/", views.study_prolific_reject, name="study_prolific_reject"),
    path("studies/<slug:slug>/prolific/bonus/", views.study_prolific_bonus, name="study_prolific_bonus"),
    path("studies/<slug:slug>/prolific/<str:action>/", views.study_prolific_action, name="study_prolific_action"),
    path("prolific/webhook/", views.prolific_webhook, name="prolific_webhook"),
]
