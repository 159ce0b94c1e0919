from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from evalhub import health, views

urlpatterns = [
    path("", views.home, name="home"),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("api/", include("evalhub.api_urls")),
    path("", include("annotations.urls")),
    path("studies/", include("evalhub.dashboard_urls")),
    path("llm/", include("llmjudge.urls")),
]

if settings.BENCH_VIEWS:
    urlpatterns.append(path("_bench/bare", views.bench_bare))
