from __future__ import annotations

from django.urls import path

from llmjudge import views

app_name = "llmjudge"

urlpatterns = [
    path("", views.index, name="index"),
    path("studies/<slug:slug>/", views.study_runs, name="study_runs"),
    path("studies/<slug:slug>/runs/", views.run_start, name="run_start"),
    path("studies/<slug:slug>/experiments/", views.experiment_start, name="experiment_start"),
    path("studies/<slug:slug>/ablations/", views.ablation_start, name="ablation_start"),
    path("studies/<slug:slug>/judges/new/", views.judge_new, name="judge_new"),
    path("studies/<slug:slug>/preview/", views.preview, name="preview"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<int:run_id>/ratings/<int:rating_id>/read/", views.rating_read, name="rating_read"),
    path("runs/<int:run_id>/progress.json", views.run_progress_json, name="run_progress"),
    path("runs/<int:run_id>/<str:action>/", views.run_control, name="run_control"),
]
