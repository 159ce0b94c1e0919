from __future__ import annotations

from django.urls import path

from evalhub.pages import dashboard, docs
from evalhub.pages import studies as study_pages

urlpatterns = [
    # The docs the pages cite (issue 25 review, C7). No study page ends in ".md": a study called "docs" keeps them all.
    path("docs/<str:name>.md", docs.doc_page, name="doc_page"),
    path("<slug:slug>/", dashboard.study_dashboard, name="study_dashboard"),
    path("<slug:slug>/alt-epsilon/", dashboard.study_alt_epsilon, name="study_alt_epsilon"),
    path("<slug:slug>/analysis.json", dashboard.study_analysis_json, name="study_analysis_json"),
    path("<slug:slug>/export/ratings.csv", dashboard.study_ratings_csv, name="study_ratings_csv"),
    path("<slug:slug>/export/demographics.csv", dashboard.study_demographics_csv, name="study_demographics_csv"),
    path("<slug:slug>/export/<str:table>.csv", dashboard.study_table_csv, name="study_table_csv"),
    # The study's home page (evalhub/pages/studies.py): status, lifecycle, uploads, links and runs.
    path("<slug:slug>/home/", study_pages.study_home, name="study_home"),
    path("<slug:slug>/open/", study_pages.study_lifecycle, {"action": "open"}, name="study_open"),
    path("<slug:slug>/close/", study_pages.study_lifecycle, {"action": "close"}, name="study_close"),
    path("<slug:slug>/upload/<str:what>/", study_pages.study_upload, name="study_upload"),
    path("<slug:slug>/imports/<int:job_id>/progress.json", study_pages.import_progress, name="import_progress"),
    path("<slug:slug>/settings/", study_pages.study_settings, name="study_settings"),  # issue 26, 1
    path("<slug:slug>/plan/", study_pages.study_plan, name="study_plan"),  # the alt-test plan (issue 19, 5)
    # Which items people rate and how many (issue 27)
    path("<slug:slug>/human-subset/", study_pages.study_human_subset, name="study_human_subset"),
    path("<slug:slug>/plan-human-budget/", study_pages.study_budget_plan, name="study_budget_plan"),
]
