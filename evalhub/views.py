from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations.models import Study


def home(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.none()
    if request.user.is_authenticated:
        studies = Study.objects.all() if request.user.is_staff else Study.objects.filter(owner=request.user)
    return render(request, "evalhub/home.html", {"studies": studies})


def bench_bare(request: HttpRequest) -> HttpResponse:
    """The load benchmark's ceiling: the full middleware stack and nothing else (EVALHUB_BENCH_VIEWS=1 only)."""
    return HttpResponse("ok", content_type="text/plain")
