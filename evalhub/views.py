from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations.selectors import studies_for_researcher


def home(request: HttpRequest) -> HttpResponse:
    studies = studies_for_researcher(user=request.user).annotate(n_items=Count("items"))
    return render(request, "evalhub/home.html", {"studies": studies})


def bench_bare(request: HttpRequest) -> HttpResponse:
    """The load benchmark's ceiling: the full middleware stack and nothing else (EVALHUB_BENCH_VIEWS=1 only)."""
    return HttpResponse("ok", content_type="text/plain")
