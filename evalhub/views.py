from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations.models import Study


def home(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.none()
    if request.user.is_authenticated:
        studies = Study.objects.all() if request.user.is_staff else Study.objects.filter(owner=request.user)
    return render(request, "evalhub/home.html", {"studies": studies})
