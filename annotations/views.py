"""Rater pages (keyed by the rater's token) and the researcher's raters page.

Rater pages are one URL, /r/<token>/: GET shows the current step, POST applies only if the form's
hidden `page` still names the current step (otherwise a reload, back button or double click: nothing
is written and the rater is sent to where they really are). Every POST redirects (post/redirect/get).
"""
from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotations import services
from annotations.forms import (
    AttentionForm,
    ConsentForm,
    DemographicsForm,
    InviteForm,
    LikertForm,
    MetaForm,
    StartForm,
)
from annotations.guards.client_address import client_address
from annotations.guards.open_link_limit import new_open_rater_allowed
from annotations.models import Assignment, ProlificStudy, Question, Rater, Study
from annotations.rendering import display_fields, oriented_item, pair_split, rater_page
from annotations.selectors import (
    assignment_progress,
    study_changeable,
    study_for_researcher,
    study_has_free_seat,
    study_rater_stats,
)
from annotations.services import StaleSubmission, Step

# Tokens are URL-safe base64 (models.new_token). Anything else is refused before it reaches the database:
# PostgreSQL raises on a NUL byte in a query, which would be a 500 for an anonymous visitor.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Where each panel's open link puts the participant's id (docs/raters.md, "Other panels"): Prolific's PROLIFIC_PID,
# CloudResearch Connect's participantId, SONA's id (its %SURVEY_CODE%), and PID for any other panel. The first
# one present is the rater's external id.
PARTICIPANT_PARAMETERS = ("PROLIFIC_PID", "participantId", "id", "PID")


class _Unavailable(Exception):
    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def _not_open(study: Study) -> _Unavailable:
    if study.status == Study.Status.CLOSED:
        return _Unavailable(
            403, "Study closed", "This study has closed and takes no more ratings. Thank you for your interest."
        )
    return _Unavailable(403, "Study not open", "This study is not open yet. Please try again later.")


class _NotStarted(Exception):
    def __init__(self, rater: Rater) -> None:
        super().__init__("not started")
        self.rater = rater


def _get_assignment_for_rater(token: str, *, start: bool = False) -> Assignment:
    """The only way rater views reach an assignment: by the rater's own unguessable token.

    An open-link rater's assignment (and so their first seat) is made only when they press Start
    (`start`): a visit alone claims nothing, so made-up participant ids cannot hold a study's seats.
    """
    if not _TOKEN.fullmatch(token):
        raise Http404("No such invitation.")
    rater = Rater.objects.select_related("study", "assignment").filter(token=token).first()
    if rater is None or rater.source == Rater.Source.IMPORTED:
        raise Http404("No such invitation.")
    if rater.revoked_at:
        raise _Unavailable(410, "Link withdrawn", "This invitation link has been withdrawn by the researchers.")
    if rater.study.status == Study.Status.OPEN and rater.source == Rater.Source.OPEN and not start:
        if not hasattr(rater, "assignment"):
            raise _NotStarted(rater)
    assignment = services.assignment_start(rater=rater) if rater.study.status == Study.Status.OPEN else None
    if assignment is None:
        existing = Assignment.objects.filter(rater=rater, completed_at__isnull=False).first()
        if existing is None:  # a finished rater may still see their completion code after the study closes
            raise _not_open(rater.study)
        assignment = existing
    assignment.rater = rater
    return assignment


def _unavailable(request: HttpRequest, exc: _Unavailable) -> HttpResponse:
    return render(
        request, "annotations/unavailable.html", {"title": exc.title, "message": exc.message}, status=exc.status
    )


def rate(request: HttpRequest, token: str) -> HttpResponse:
    start = request.method == "POST" and request.POST.get("page") == "start"
    try:
        assignment = _get_assignment_for_rater(token, start=start)
    except _Unavailable as exc:
        return _unavailable(request, exc)
    except _NotStarted as exc:
        start_form = StartForm(initial={"page": "start"})
        return render(request, "annotations/start.html", {"study": exc.rater.study, "form": start_form})
    study = assignment.rater.study
    # The questions are read by the step, the form and the page: once.
    prefetch_related_objects([study], Prefetch("questions", queryset=Question.objects.order_by("order", "id")))
    here = reverse("annotations:rate", args=[token])
    data = request.POST if request.method == "POST" else None
    if data is not None:
        # Answer pages (items, checks) build their form from the posted key alone; the submit service
        # locks the assignment and applies the answers only if that key is still the current page.
        posted = services.posted_step(study=study, key=data.get("page", ""))
        if posted is not None:
            form = _form_for(assignment, posted, data)  # a posted step is an item or a check: it has a form
            if form is not None and form.is_valid():
                return _submit(request, assignment, posted, form, here)
            # Invalid answers: shown again below with their errors, if the page is still the current one.
    step = services.assignment_next_step(assignment=assignment)
    if data is not None and data.get("page") != step.key:
        # Stale page (back button, reload of a POST, double click): change nothing, show the current page.
        return redirect(here)
    form = _form_for(assignment, step, data)
    if data is not None and form is not None and form.is_valid():
        return _submit(request, assignment, step, form, here)
    return render(request, f"annotations/{step.kind}.html", _context(assignment, step, form), status=200)


def _submit(request: HttpRequest, assignment: Assignment, step: Step, form: forms.Form, here: str) -> HttpResponse:
    """Apply a valid page and go back to the rater's URL (post/redirect/get); a page that is no longer
    current changes nothing."""
    try:
        _apply(request, assignment, step, form)
    except StaleSubmission:
        pass
    return redirect(here)


def _questions_of(assignment: Assignment, step: Step) -> list[Question]:
    return services.question_parts(list(assignment.rater.study.questions.all()))[step.part]


def _form_for(assignment: Assignment, step: Step, data: object) -> forms.Form | None:
    study = assignment.rater.study
    initial = {"page": step.key}
    if step.kind == "item" and study.kind == Study.Kind.META:
        return MetaForm(data, initial=initial)
    if step.kind == "item":
        last = step.part == step.parts - 1
        return LikertForm(data, initial=initial, study=study, questions=_questions_of(assignment, step),
                          with_comment=last)
    if step.kind == "check":
        return AttentionForm(data, initial=initial, study=study)
    if step.kind == "consent":
        return ConsentForm(data, initial=initial)
    if step.kind == "demographics":
        return DemographicsForm(data, initial=initial)
    return None


def _apply(request: HttpRequest, assignment: Assignment, step: Step, form: forms.Form) -> None:
    """Call the one service the step's form is for."""
    elapsed = form.cleaned_data.get("elapsed_ms")
    if step.kind == "item" and isinstance(form, MetaForm):
        services.meta_answer_submit(assignment=assignment, item=step.item_id, verdict=form.cleaned_data["verdict"],
                                    comment=form.cleaned_data["comment"], time_spent_ms=elapsed)
    elif step.kind == "item" and isinstance(form, LikertForm):
        services.rating_submit(assignment=assignment, item=step.item_id, scores=form.scores(),
                               comment=form.cleaned_data.get("comment", ""), time_spent_ms=elapsed)
    elif step.kind == "check":
        passed = services.attention_check_submit(assignment=assignment, position=step.position,
                                                 answer=form.cleaned_data["answer"], time_spent_ms=elapsed)
        if not passed and assignment.rater.study.attention_rule == Study.AttentionRule.WARN:
            messages.warning(request, "That page was an attention check, and the answer was not the one it asked "
                                      "for. Please read every page carefully.")
    elif step.kind == "consent":
        services.consent_give(rater=assignment.rater)
    elif step.kind == "demographics" and isinstance(form, DemographicsForm):
        services.demographics_save(rater=assignment.rater, answers=form.answers())


def _context(assignment: Assignment, step: Step, form: forms.Form | None) -> dict[str, object]:
    study = assignment.rater.study
    context: dict[str, object] = {
        "study": study,
        "step": step,
        "form": form,
        "progress": assignment_progress(assignment=assignment),
        "assignment": assignment,
    }
    if step.kind == "item":
        # An item page always has its claim (assignment_next_step) and its form (_form_for).
        assert step.claim is not None and form is not None
        questions = list(study.questions.all())
        # Built from the same rendering as the judge's prompt; fields a later question reveals are left out.
        # A counterbalanced pairwise rater may see this item's candidates swapped (the claim says so).
        item = oriented_item(study=study, item=step.claim.item, swapped=step.claim.swapped)
        page = rater_page(study=study, item=item, questions=questions)
        shown = {q.key for q in _questions_of(assignment, step)} if study.kind != Study.Kind.META else set()
        shared, pair = pair_split(study=study, fields=display_fields(study=study, page=page))
        instruction_title, _, instruction_rest = page.instruction.partition("\n")
        context.update(
            instruction_title=instruction_title,
            instruction_rest=instruction_rest,
            # A pairwise page shows its two candidates side by side, under the shared fields.
            fields=shared,
            pair=pair,
            page_questions=[(q.context.strip(), q, form[f"q_{q.key}"]) for q in page.questions if q.key in shown],
            is_meta=study.kind == Study.Kind.META,
        )
    if step.kind == "check":
        context["expected_label"] = study.label_for(step.expected)
    if step.kind == "done" and assignment.completion_code and study.completion_redirect_url:
        # {pid}: the participant's own id, for panels whose return link names them (SONA's survey_code).
        context["redirect_url"] = study.completion_redirect_url.replace("{code}", assignment.completion_code).replace(
            "{pid}", assignment.rater.external_id)
    if step.kind == "done" and assignment.completion_code:
        # A study published on Prolific has one code, the one its Prolific study accepts (annotations/prolific).
        link = ProlificStudy.objects.filter(study=study).only("completion_code").first()
        context["completion_code"] = link.completion_code if link else assignment.completion_code
    return context


def open_link(request: HttpRequest, token: str) -> HttpResponse:
    """A study's open link: each participant id (Prolific's PROLIFIC_PID) becomes one rater, once.

    A visit without a participant id shows a start button, so link previews and crawlers (GET) do not
    create raters. A full study says so at once and stores nothing of the newcomer (no rater, no ids); a
    participant who finished gets their completion code back, whatever the study's status.
    """
    study = Study.objects.filter(open_token=token, open_link_enabled=True).first() if _TOKEN.fullmatch(token) else None
    if study is None:
        raise Http404("No such study link.")
    if any("\x00" in request.GET.get(name, "") for name in (*PARTICIPANT_PARAMETERS, "STUDY_ID", "SESSION_ID")):
        return _unavailable(request, _Unavailable(400, "Invalid link", "This link is damaged: ask for a new one."))
    given = (request.GET.get(name, "").strip() for name in PARTICIPANT_PARAMETERS)
    external_id = next((value for value in given if value), "")
    known = Rater.objects.filter(study=study, external_id=external_id[:200]).first() if external_id else None
    if known is not None and Assignment.objects.filter(rater=known, completed_at__isnull=False).exists():
        return redirect("annotations:rate", token=known.token)  # the done page, with their code
    if study.status != Study.Status.OPEN:
        return _unavailable(request, _not_open(study))
    if known is None and not study_has_free_seat(study=study):
        return render(request, "annotations/full.html", {"study": study})
    if not external_id and request.method != "POST":
        return render(request, "annotations/open_start.html", {"study": study})
    if known is None and not new_open_rater_allowed(address=client_address(request)):
        return _unavailable(request, _Unavailable(
            429, "Too many new participants",
            "Too many new participants have joined from your network in the last hour. Please try again later."))
    rater = services.open_link_join(
        study=study,
        external_id=external_id,
        platform_study_id=request.GET.get("STUDY_ID", "").strip(),
        session_id=request.GET.get("SESSION_ID", "").strip(),
    )
    if rater.revoked_at:
        return _unavailable(request, _Unavailable(410, "Link withdrawn", "Your participation has been withdrawn."))
    return redirect("annotations:rate", token=rater.token)


# --- researcher pages --------------------------------------------------------------------------------


@login_required
def study_raters(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug)
    # Rater links and the open link write ratings: a read-only viewer sees the statistics, never a link
    # (issue 23, finding 1: a viewer's walk through one stored 12 ratings in another researcher's study).
    can_change = study_changeable(user=request.user, study=study)
    base = request.build_absolute_uri("/").rstrip("/")
    open_url = base + reverse("annotations:open_link", args=[study.open_token]) if can_change else ""
    return render(
        request,
        "annotations/study_raters.html",
        {
            "study": study,
            "rows": study_rater_stats(study=study),
            "imported_raters": study.raters.filter(source=Rater.Source.IMPORTED).count(),
            "invite_form": InviteForm(),
            "can_change": can_change,
            "base": base,
            "open_url": open_url,
            # Prolific replaces these placeholders with the participant's ids.
            "prolific_url": open_url + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
            "&SESSION_ID={{%SESSION_ID%}}" if can_change else "",
        },
    )


@login_required
@require_POST
def study_invite(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            raters = services.invitations_create(study=study, count=form.cleaned_data["count"])
        except services.InvitationLimitError as exc:
            messages.error(request, f"{exc}. No links were created.")
        else:
            n = len(raters)
            messages.success(request, f"Created {n} invitation link{pluralize(n)}; they are listed below.")
    else:
        messages.error(request, "Choose between 1 and 1000 links.")
    return redirect("annotations:study_raters", slug=study.slug)


@login_required
@require_POST
def study_open_link(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    services.open_link_set(study=study, enabled=request.POST.get("enabled") == "1")
    return redirect("annotations:study_raters", slug=study.slug)


@login_required
@require_POST
def rater_revoke(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    rater = get_object_or_404(study.raters, pk=pk)
    services.rater_revoke(rater=rater)
    messages.success(request, f"Revoked the link of {rater}.")
    return redirect("annotations:study_raters", slug=study.slug)
