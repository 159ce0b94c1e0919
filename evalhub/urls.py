from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from evalhub import views

urlpatterns = [
    path("", views.home, name="home"),
    path("admin/", admin.site.urls),
    path("studies/", include("evalhub.dashboard_urls")),
]
