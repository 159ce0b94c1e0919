from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from evalhub.pages import home as views
from evalhub.pages import studies as study_pages
from evalhub.server import health, login

urlpatterns = [
    path("", views.home, name="home"),
    # Before admin.site.urls, so the admin's own login is rate-limited too (evalhub/server/login.py).
    path("admin/login/", login.rate_limited_login(admin.site.login)),
    path("admin/", admin.site.urls),
    path("accounts/login/", login.researcher_login, name="login"),
    path("accounts/logout/", login.researcher_logout, name="logout"),
    path("healthz", health.healthz, name="healthz"),
    path("api/", include("evalhub.api.urls")),
    path("", include("annotations.urls")),
    path("studies/", include("evalhub.pages.urls")),
    path("new-study/", study_pages.study_new, name="study_new"),
    path("llm/", include("llmjudge.urls")),
]

if settings.BENCH_VIEWS:
    urlpatterns += [path("_bench/bare", views.bench_bare), path("_bench/lookup/<str:token>", views.bench_lookup)]
