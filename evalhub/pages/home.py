from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations.models import Rater
from annotations.selectors import studies_for_researcher


def home(request: HttpRequest) -> HttpResponse:
    studies = studies_for_researcher(user=request.user).annotate(n_items=Count("items"))
    return render(request, "evalhub/home.html", {"studies": studies})


def bench_bare(request: HttpRequest) -> HttpResponse:
    """The load benchmark's ceiling: the full middleware stack and nothing else (EVALHUB_BENCH_VIEWS=1 only)."""
    return HttpResponse("ok", content_type="text/plain")


def bench_lookup(request: HttpRequest, token: str) -> HttpResponse:
    """The load benchmark's second reference: the bare view plus the one query every rater page starts
    with (the rater, study and assignment by the link's token), to show what a single ORM query costs."""
    rater = Rater.objects.select_related("study", "assignment").filter(token=token).first()
    return HttpResponse("ok" if rater else "no", content_type="text/plain")
