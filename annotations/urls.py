from __future__ import annotations

from django.urls import path

from annotations import views
from annotations.prolific.urls import urlpatterns as prolific_urlpatterns

app_name = "annotations"

urlpatterns = [
    path("r/<str:token>/", views.rate, name="rate"),
    path("s/<str:token>/", views.open_link, name="open_link"),
    path("studies/<slug:slug>/raters/", views.study_raters, name="study_raters"),
    path("studies/<slug:slug>/raters/invite/", views.study_invite, name="study_invite"),
    path("studies/<slug:slug>/raters/open-link/", views.study_open_link, name="study_open_link"),
    path("studies/<slug:slug>/raters/<int:pk>/revoke/", views.rater_revoke, name="rater_revoke"),
    *prolific_urlpatterns,
]
