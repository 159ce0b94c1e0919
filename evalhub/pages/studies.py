"""A study's home page for its owner, its lifecycle buttons and uploads, and "New study".

They live in evalhub because the page shows both pools (the raters' progress and the judge runs) and
the ratings upload writes both (evalhub.imports.ratings). Each view checks access through the one
study-access rule, validates a form, calls the service the management command calls, and redirects.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotations.forms import UPLOAD_FORMS, InviteForm, UploadForm, import_summary
from annotations.guards.signed_in import signed_in_user
from annotations.importing.services import ImportFileError
from annotations.lifecycle import LifecycleError, StudySettingsError, study_close, study_open
from annotations.models import ImportJob, Study
from annotations.prolific.selectors import submission_counts
from annotations.selectors import study_changeable, study_for_researcher, study_overview
from annotations.studies import StudySpecError, study_create, study_create_from_template
from evalhub.analysis import pool_names
from evalhub.analysis.planning.alt_test_plan import (
    PAGE_RATING_BUDGET,
    PAGE_REPLICATES,
    StudyPlan,
    alt_test_plan_for_study,
)
from evalhub.analysis.planning.costs import cost_summary
from evalhub.analysis.planning.human_subset import (
    budget_lines,
    human_budget_plan,
    human_subset_drawn,
    study_human_subset_set,
    study_settings_save,
)
from evalhub.imports.jobs import import_job_progress
from evalhub.imports.uploads import upload_import
from evalhub.pages.forms import BudgetForm, HumanSubsetForm, StudyNewForm, StudySettingsForm
from llmjudge.selectors import run_progress, runs_for_study

LIFECYCLE: dict[str, Callable[..., Study]] = {"open": study_open, "close": study_close}


@dataclass(frozen=True)
class HumanSubsetPanel:
    """The study page's panel on which items people rate (issue 27): the setting, its draw, the budget plan."""

    form: HumanSubsetForm
    drawn: dict[str, tuple[int, int]]  # group -> (drawn, items); empty when nothing is drawn
    budget_form: BudgetForm
    budget: list[str] | None = None  # the plan's lines
    budget_note: str = ""


def _subset_panel(study: Study, form: HumanSubsetForm | None = None, budget_form: BudgetForm | None = None,
                  budget: list[str] | None = None, budget_note: str = "") -> HumanSubsetPanel:
    initial = json.dumps(study.human_subset) if study.human_subset else ""
    return HumanSubsetPanel(form or HumanSubsetForm(initial={"human_subset": initial}), human_subset_drawn(study=study),
                            budget_form or BudgetForm(), budget, budget_note)


def _home(request: HttpRequest, study: Study, forms: dict[str, UploadForm] | None = None,
          status: int = 200, plan: StudyPlan | None = None, plan_note: str = "",
          subset: HumanSubsetPanel | None = None, settings_form: StudySettingsForm | None = None) -> HttpResponse:
    can_change = study_changeable(user=request.user, study=study)
    # The open link writes (whoever holds it becomes a rater): only for those who may change the study,
    # never for a read-only viewer (issue 23, finding 1).
    open_url = ""
    if can_change:
        open_url = request.build_absolute_uri(reverse("annotations:open_link", args=[study.open_token]))
    uploads = {what: form_class(prefix=what) for what, form_class in UPLOAD_FORMS.items()}
    uploads.update(forms or {})
    context: dict[str, object] = {
        "study": study,
        "overview": study_overview(study=study),
        "runs": [(run, run_progress(run=run)) for run in runs_for_study(study=study)],
        # A list, not the dict: in a template, uploads.items would look up the "items" key.
        "uploads": list(uploads.items()),
        "invite_form": InviteForm(),
        "open_url": open_url,
        "plan": plan,
        "can_plan": can_change,
        "can_change": can_change,
        "plan_note": plan_note,
        "subset": subset or _subset_panel(study),
        "settings_form": settings_form or StudySettingsForm(study=study),
        "import_jobs": [import_job_progress(job=job) for job in study.import_jobs.all()[:5]],
        "import_threshold": settings.IMPORT_TASK_THRESHOLD_BYTES,
        # Human beside judge cost per rating, once the study is on Prolific (None otherwise).
        "cost": cost_summary(study=study, runs=pool_names(study)),
        "prolific_submissions": submission_counts(study=study),
    }
    return render(request, "evalhub/study_home.html", context, status=status)


@login_required
@require_GET
def study_home(request: HttpRequest, slug: str) -> HttpResponse:
    return _home(request, study_for_researcher(user=request.user, slug=slug))


@login_required
@require_POST
def study_lifecycle(request: HttpRequest, slug: str, action: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    try:
        LIFECYCLE[action](study=study)
    except LifecycleError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Study {study.slug} is now {study.get_status_display().lower()}.")
    return redirect("study_home", slug=study.slug)


@login_required
@require_POST
def study_upload(request: HttpRequest, slug: str, what: str) -> HttpResponse:
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    if what not in UPLOAD_FORMS:
        raise Http404("unknown upload")
    form = UPLOAD_FORMS[what](request.POST, request.FILES, prefix=what)
    if not form.is_valid():
        return _home(request, study, {what: form}, status=400)
    upload = form.cleaned_data["file"]
    try:
        done = upload_import(study=study, kind=what, upload=upload, options=form.import_options(),
                             user=signed_in_user(request.user), background=True)
    except ImportFileError as exc:
        form.add_error("file", f"{upload.name}: {exc}. Nothing was imported.")
        return _home(request, study, {what: form}, status=400)
    if isinstance(done, ImportJob):  # its progress bar polls import_progress below
        messages.info(request, f"{upload.name}: {upload.size} bytes, imported in the background (job {done.pk}); "
                               "its progress is shown under Upload.")
    else:
        messages.success(request, f"{upload.name}: {import_summary(what, done)}")
    return redirect("study_home", slug=study.slug)


@login_required
@require_GET
def import_progress(request: HttpRequest, slug: str, job_id: int) -> JsonResponse:
    """The progress bar's poll: one import job of a study the user may see."""
    study = study_for_researcher(user=request.user, slug=slug)
    job = study.import_jobs.filter(pk=job_id).first()
    if job is None:
        raise Http404("no such import")
    return JsonResponse(import_job_progress(job=job))


@login_required
@require_POST
def study_plan(request: HttpRequest, slug: str) -> HttpResponse:
    """The alt-test plan on a button, not on every page view: it reads every rating and simulates
    (PAGE_REPLICATES replicates per design point, fewer for a design beyond PAGE_RATING_BUDGET ratings, keep
    it to a second or so). Owner only: for_change."""
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    note = ""
    try:
        plan = alt_test_plan_for_study(study=study, from_pilot=True, replicates=PAGE_REPLICATES,
                                       rating_budget=PAGE_RATING_BUDGET)
    except ValueError as exc:
        # No usable pilot yet: the plan from the defaults, saying why.
        note = f"{exc}; the plan below uses the default assumptions."
        plan = alt_test_plan_for_study(study=study, replicates=PAGE_REPLICATES, rating_budget=PAGE_RATING_BUDGET)
    return _home(request, study, plan=plan, plan_note=note)


@login_required
@require_POST
def study_human_subset(request: HttpRequest, slug: str) -> HttpResponse:
    """Save the study's human_subset (a share or a count draws the subset). Owner only: for_change."""
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = HumanSubsetForm(request.POST)
    if form.is_valid():
        try:
            study_human_subset_set(study=study, setting=form.cleaned_data["human_subset"])
        except StudySpecError as exc:
            form.add_error("human_subset", str(exc))
    if not form.is_valid():
        study.refresh_from_db()
        return _home(request, study, status=400, subset=_subset_panel(study, form=form))
    messages.success(request, f"People rate: {json.dumps(study.human_subset) if study.human_subset else 'every item'}.")
    return redirect(reverse("study_home", args=[study.slug]) + "#human-subset")


@login_required
@require_POST
def study_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """Save the study's settings form (issue 26, 1). Owner only: for_change. A refused setting answers 400 with
    the field's error and changes nothing (an open study's locked settings included, whatever the browser sent)."""
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = StudySettingsForm(request.POST, study=study)
    if form.is_valid():
        try:
            changed = study_settings_save(study=study, values=form.cleaned_data)
        except StudySettingsError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
    if not form.is_valid():
        study.refresh_from_db()
        return _home(request, study, status=400, settings_form=form)
    messages.success(request, f"Settings saved ({', '.join(changed)})." if changed else "Nothing changed.")
    return redirect(reverse("study_home", args=[study.slug]) + "#settings")


@login_required
@require_POST
def study_budget_plan(request: HttpRequest, slug: str) -> HttpResponse:
    """The human budget planner (plan_human_budget) on a button: it reads every rating. Owner only: for_change."""
    study = study_for_researcher(user=request.user, slug=slug, for_change=True)
    form = BudgetForm(request.POST)
    if not form.is_valid():
        return _home(request, study, status=400, subset=_subset_panel(study, budget_form=form))
    try:
        budget = human_budget_plan(study=study, width=form.cleaned_data["width"], rho=form.cleaned_data["rho"])
    except ValueError as exc:
        return _home(request, study, subset=_subset_panel(study, budget_form=form, budget_note=str(exc)))
    return _home(request, study, subset=_subset_panel(study, budget_form=form, budget=budget_lines(budget)))


@login_required
@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    form = StudyNewForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        owner = signed_in_user(request.user)
        try:
            if data["template"]:
                study = study_create_from_template(slug=data["slug"], template=data["template"], owner=owner)
            else:
                study = study_create(slug=data["slug"], spec=data["file"], owner=owner)
        except StudySpecError as exc:
            form.add_error("template" if data["template"] else "file", str(exc))
        else:
            messages.success(request, f"Created study {study.slug}. Next: upload its items, then open it.")
            return redirect("study_home", slug=study.slug)
    status = 400 if form.is_bound else 200
    return render(request, "evalhub/study_new.html", {"form": form}, status=status)
