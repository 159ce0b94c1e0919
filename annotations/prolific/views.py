"""The study's Prolific page (publish, follow, pause and resume, reject, bonuses) and the webhook endpoint.

Each view: check access, validate a form, call one service, redirect (STYLE.md 3). What Prolific or the token
rule refuses becomes a message; those messages name variables, never their values (the client scrubs the
token from whatever Prolific answers).
"""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotations.guards.signed_in import signed_in_user
from annotations.models import ProlificStudy, Study
from annotations.prolific.bonuses import BonusError, prolific_bonus_pay
from annotations.prolific.following import prolific_reject, prolific_sync, prolific_webhook_receive
from annotations.prolific.forms import BonusForm, PublishForm, RejectForm
from annotations.prolific.publishing import PublishError, prolific_pause, prolific_publish, prolific_resume
from annotations.prolific.records import ProlificError
from annotations.prolific.selectors import prolific_panel
from annotations.prolific.tokens import TokenRefused, granted_token_variables
from annotations.selectors import study_changeable, study_for_researcher

REFUSALS = (ProlificError, TokenRefused, PublishError, BonusError, ValueError)


@login_required
def study_prolific(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    can_change = study_changeable(user=request.user, study=study)
    variables = granted_token_variables(user=request.user) if can_change else []
    return render(request, "annotations/study_prolific.html", {
        "study": study,
        "can_change": can_change,
        "panel": prolific_panel(study=study),
        "publish_form": PublishForm(token_variables=variables),
        "token_variables": variables,
        "reject_form": RejectForm(),
    })


def _changeable_link(request: HttpRequest, slug: str) -> tuple[Study, ProlificStudy | None]:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    return study, ProlificStudy.objects.filter(study=study).first()


def _refused(request: HttpRequest, exc: Exception) -> None:
    messages.error(request, exc.message if isinstance(exc, ProlificError) else str(exc))


@login_required
@require_POST
def study_prolific_publish(request: HttpRequest, slug: str) -> HttpResponse:
    study, _ = _changeable_link(request, slug)
    form = PublishForm(request.POST, token_variables=granted_token_variables(user=request.user))
    if not form.is_valid():
        messages.error(request, "Choose a token variable granted to you, a reward and the minutes.")
        return redirect("annotations:study_prolific", slug=study.slug)
    try:
        link = prolific_publish(study=study, base_url=settings.PUBLIC_BASE_URL, user=signed_in_user(request.user),
                                **form.cleaned_data)
    except REFUSALS as exc:
        _refused(request, exc)
    else:
        messages.success(request, f"Published on Prolific as {link.prolific_id} with {link.places} places.")
    return redirect("annotations:study_prolific", slug=study.slug)


@login_required
@require_POST
def study_prolific_action(request: HttpRequest, slug: str, action: str) -> HttpResponse:
    """sync, pause or resume."""
    study, link = _changeable_link(request, slug)
    if link is None or link.published_at is None or action not in ("sync", "pause", "resume"):
        messages.error(request, "The study is not published on Prolific.")
        return redirect("annotations:study_prolific", slug=study.slug)
    try:
        if action == "sync":
            prolific_sync(link=link)
        elif action == "pause":
            prolific_pause(link=link, user=signed_in_user(request.user))
        else:
            prolific_resume(link=link, user=signed_in_user(request.user))
    except REFUSALS as exc:
        _refused(request, exc)
    else:
        messages.success(request, {"sync": "Submissions followed.", "pause": "Paused on Prolific.",
                                   "resume": "Resumed on Prolific."}[action])
    return redirect("annotations:study_prolific", slug=study.slug)


@login_required
@require_POST
def study_prolific_reject(request: HttpRequest, slug: str) -> HttpResponse:
    study, link = _changeable_link(request, slug)
    form = RejectForm(request.POST)
    if link is None or not form.is_valid():
        messages.error(request, "A rejection needs a category and a message of at least 100 characters.")
        return redirect("annotations:study_prolific", slug=study.slug)
    try:
        prolific_reject(link=link, user=signed_in_user(request.user), **form.cleaned_data)
    except REFUSALS as exc:
        _refused(request, exc)
    else:
        messages.success(request, f"Rejected {form.cleaned_data['submission_id']}; its seats are free again.")
    return redirect("annotations:study_prolific", slug=study.slug)


@login_required
@require_POST
def study_prolific_bonus(request: HttpRequest, slug: str) -> HttpResponse:
    study, link = _changeable_link(request, slug)
    form = BonusForm(request.POST)
    if link is None or not form.is_valid():
        messages.error(request, "A bonus needs an amount in cents and a key.")
        return redirect("annotations:study_prolific", slug=study.slug)
    data = form.cleaned_data
    try:
        bonus = prolific_bonus_pay(link=link, submission_id=data["submission_id"], amount_cents=data["amount_cents"],
                                   key=f"{study.slug}:{data['key']}", user=signed_in_user(request.user))
    except REFUSALS as exc:
        _refused(request, exc)
    else:
        messages.success(request, f"Bonus {data['key']}: {bonus.state}.")
    return redirect("annotations:study_prolific", slug=study.slug)


@csrf_exempt
@require_POST
def prolific_webhook(request: HttpRequest) -> HttpResponse:
    """Prolific's signed deliveries; no session, no CSRF token: the signature is the check."""
    return HttpResponse(status=prolific_webhook_receive(body=request.body, headers=request.headers))
