from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from evalhub import api

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("studies/", api.StudyListView.as_view(), name="api-studies"),
    path("studies/<slug:slug>/", api.StudyDetailView.as_view(), name="api-study"),
    path("studies/<slug:slug>/items/", api.StudyItemsView.as_view(), name="api-study-items"),
]
