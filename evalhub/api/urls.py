from __future__ import annotations

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView

from evalhub.api import views as api

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("studies/", api.StudyListView.as_view(), name="api-studies"),
    path("studies/<slug:slug>/", api.StudyDetailView.as_view(), name="api-study"),
    path("studies/<slug:slug>/items/", api.StudyItemsView.as_view(), name="api-study-items"),
    path("studies/<slug:slug>/open/", api.StudyLifecycleView.as_view(action="open"), name="api-study-open"),
    path("studies/<slug:slug>/close/", api.StudyLifecycleView.as_view(action="close"), name="api-study-close"),
    path("studies/<slug:slug>/invitations/", api.StudyInvitationsView.as_view(), name="api-study-invitations"),
    path("studies/<slug:slug>/runs/", api.StudyRunsView.as_view(), name="api-study-runs"),
    path("studies/<slug:slug>/analysis/", api.StudyAnalysisView.as_view(), name="api-study-analysis"),
    path("studies/<slug:slug>/ratings.csv", api.StudyRatingsCSVView.as_view(), name="api-study-ratings"),
    path("studies/<slug:slug>/demographics.csv", api.StudyDemographicsCSVView.as_view(),
         name="api-study-demographics"),
    path("runs/<int:run_id>/", api.RunDetailView.as_view(), name="api-run"),
    path("runs/<int:run_id>/<str:action>/", api.RunActionView.as_view(), name="api-run-action"),
    # Last: any other path under api/ answers a JSON 404.
    re_path(r"^(?P<path>[\s\S]*)$", api.not_found, name="api-not-found"),
]
