"""Researcher pages for judge runs: list and start, live progress, pause/resume/cancel, prompt preview."""
from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotations.guards.signed_in import signed_in_user
from annotations.models import Study
from annotations.rendering import rater_page
from annotations.selectors import studies_for_researcher, study_changeable, study_for_researcher
from llmjudge.forms import AblationForm, ExperimentForm, JudgeCreateForm, ReadingForm, RunStartForm, runnable_judges
from llmjudge.models import Experiment, Judge, JudgeRun, LLMRating
from llmjudge.prompting.preview import judge_preview
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.review import ReadingError, rating_read_by_person, reading_choices
from llmjudge.selectors import run_for_researcher, run_progress, run_review, runs_for_study
from llmjudge.services import JudgeSpecError, judge_create

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # reads; anything else changes the study


def _get_study_for_researcher(request: HttpRequest, slug: str) -> Study:
    """The study if the user may see it (a POST: change it); 404 otherwise (no hint that it exists)."""
    return study_for_researcher(user=request.user, slug=slug, for_change=request.method not in SAFE_METHODS)


def _get_run_for_researcher(request: HttpRequest, run_id: int) -> JudgeRun:
    return run_for_researcher(user=request.user, run_id=run_id, for_change=request.method not in SAFE_METHODS)


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "llmjudge/index.html", {"studies": studies_for_researcher(user=request.user)})


def _runs_page(request: HttpRequest, study: Study, run_form: RunStartForm | None = None,
               status: int = 200) -> HttpResponse:
    runs = [(run, run_progress(run=run)) for run in runs_for_study(study=study)]
    return render(
        request,
        "llmjudge/study_runs.html",
        {
            "study": study,
            "runs": runs,
            "run_form": run_form or RunStartForm(user=request.user),
            "experiment_form": ExperimentForm(user=request.user),
            # Its own ids: the run form's judge menu is already id_judge.
            "ablation_form": AblationForm(user=request.user, auto_id="ablation_%s"),
        },
        status=status,
    )


@login_required
@require_GET
def study_runs(request: HttpRequest, slug: str) -> HttpResponse:
    return _runs_page(request, _get_study_for_researcher(request, slug))


@login_required
@require_POST
def run_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_researcher(request, slug)
    form = RunStartForm(request.POST, user=request.user)
    if not form.is_valid():  # the page again, with the error under the judge menu
        return _runs_page(request, study, form, status=400)
    try:
        run = judging.judge_run_start(
            study=study, judge=form.cleaned_data["judge"], kind_options=form.kind_options(),
            overrides=form.overrides(),
        )
    except judging.RunError as exc:
        form.add_error("judge", str(exc))
        return _runs_page(request, study, form, status=400)
    return redirect("llmjudge:run_detail", run_id=run.pk)


@login_required
@require_http_methods(["GET", "POST"])
def judge_new(request: HttpRequest, slug: str) -> HttpResponse:
    """Create a judge owned by the researcher, from the study's runs page, and go back to it."""
    study = _get_study_for_researcher(request, slug)
    form = JudgeCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            judge = judge_create(name=form.cleaned_data["name"], owner=signed_in_user(request.user), **form.spec())
        except JudgeSpecError as exc:
            form.add_spec_error(str(exc))
        else:
            messages.success(request, f"Created judge {judge.name}: choose it below and run it.")
            return redirect("llmjudge:study_runs", slug=study.slug)
    status = 400 if form.is_bound else 200
    return render(request, "llmjudge/judge_new.html", {"study": study, "form": form}, status=status)


def _launch_experiment(
    request: HttpRequest, study: Study, form: forms.Form, invalid: str, launch: Callable[[], Experiment]
) -> HttpResponse:
    """Validate the form, launch the experiment's runs, say what started; back to the study's runs."""
    if not form.is_valid():
        messages.error(request, invalid)
        return redirect("llmjudge:study_runs", slug=study.slug)
    try:
        experiment = launch()
    except judging.RunError as exc:
        messages.error(request, str(exc))
        return redirect("llmjudge:study_runs", slug=study.slug)
    messages.success(request, f"Launched {experiment.runs.count()} runs: {experiment.name}")
    return redirect("llmjudge:study_runs", slug=study.slug)


@login_required
@require_POST
def experiment_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_researcher(request, slug)
    form = ExperimentForm(request.POST, user=request.user)
    return _launch_experiment(
        request, study, form, "Choose at least one judge, one temperature and one variant.",
        lambda: judging.experiment_launch(
            study=study,
            judges=form.cleaned_data["judges"],
            temperatures=form.cleaned_data["temperatures"],
            variants=form.cleaned_data["variants"],
            owner=signed_in_user(request.user),
        ),
    )


@login_required
@require_POST
def ablation_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = _get_study_for_researcher(request, slug)
    form = AblationForm(request.POST, user=request.user)
    return _launch_experiment(
        request, study, form, "Choose a persona judge and at least one method.",
        lambda: judging.persona_ablation_launch(
            study=study,
            judge=form.cleaned_data["judge"],
            methods=form.cleaned_data["methods"],
            kind_options=form.split_options(),
            owner=signed_in_user(request.user),
        ),
    )


def _get_rating_for_owner(request: HttpRequest, run_id: int, rating_id: int) -> LLMRating:
    """A rating of a run the user may change; 404 when they may not see the run (as for one that does not exist),
    403 when they only read it (a staff member's read-only permission)."""
    run = run_for_researcher(user=request.user, run_id=run_id)
    if not study_changeable(user=request.user, study=run.study):
        raise PermissionDenied("a read-only viewer cannot record a reading")
    return get_object_or_404(LLMRating.objects.select_related("run__study", "run__judge"), run=run, pk=rating_id)


def _run_page(request: HttpRequest, run: JudgeRun, errors: dict[int, str] | None = None,
              status: int = 200) -> HttpResponse:
    recent = run.ratings.exclude(status="pending").select_related("item", "question").order_by("-updated_at")[:20]
    review = run_review(run=run)
    errors = errors or {}
    return render(
        request, "llmjudge/run_detail.html",
        {"run": run, "progress": run_progress(run=run, viewer=request.user), "recent": recent, "review": review,
         "to_review": [(r, errors.get(r.pk, "")) for r in review.to_review],
         "can_read": study_changeable(user=request.user, study=run.study),
         "scale": (run.study.scale_min, run.study.scale_max), "choices": reading_choices(run.study)},
        status=status,
    )


@login_required
@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    return _run_page(request, _get_run_for_researcher(request, run_id))


@login_required
@require_POST
def rating_read(request: HttpRequest, run_id: int, rating_id: int) -> HttpResponse:
    """The owner records the score they read in an unparseable answer (llmjudge/runs/review.py)."""
    rating = _get_rating_for_owner(request, run_id, rating_id)
    form = ReadingForm(request.POST, rating=rating)
    if not form.is_valid():
        return _run_page(request, rating.run, {rating.pk: " ".join(str(e) for e in form.errors.get("score", []))}, 400)
    try:
        rating_read_by_person(rating=rating, user=signed_in_user(request.user), score=form.cleaned_data["score"])
    except ReadingError as exc:
        return _run_page(request, rating.run, {rating.pk: str(exc)}, 400)
    messages.success(request, f"Recorded your reading {form.cleaned_data['score']:g} of item "
                              f"{rating.item.external_id} / {rating.question.key} (sample {rating.sample}).")
    return redirect("llmjudge:run_detail", run_id=rating.run_id)


@login_required
@require_GET
def run_progress_json(request: HttpRequest, run_id: int) -> JsonResponse:
    run = _get_run_for_researcher(request, run_id)
    return JsonResponse(run_progress(run=run, viewer=request.user).as_dict())


@login_required
@require_POST
def run_control(request: HttpRequest, run_id: int, action: str) -> HttpResponse:
    run = _get_run_for_researcher(request, run_id)
    if action not in judging.RUN_ACTIONS:
        raise Http404("unknown action")
    try:
        if not judging.judge_run_act(run=run, action=action):
            messages.error(request, f"Run {run.pk} is {run.get_status_display().lower()}: cannot {action} it.")
    except judging.RunError as exc:
        messages.error(request, str(exc))
    return redirect("llmjudge:run_detail", run_id=run.pk)


@login_required
@require_GET
def preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The rater's view of an item next to what each judge would be sent for it."""
    study = _get_study_for_researcher(request, slug)
    items = study.items.order_by("position", "id")
    item_id = request.GET.get("item", "")
    # A non-numeric ?item= (a hand-edited URL) shows the first item instead of a 500.
    item = (items.filter(pk=item_id).first() if item_id.isascii() and item_id.isdigit() else None) or items.first()
    if item is None:
        raise Http404("this study has no items yet")
    judges = list(runnable_judges(request.user))
    judge: Judge | None = next((j for j in judges if str(j.pk) == request.GET.get("judge")), None)
    questions = list(study.questions.order_by("order", "id"))
    shown = judge_preview(study=study, judge=judge, item=item, questions=questions)
    return render(
        request,
        "llmjudge/preview.html",
        {
            "study": study,
            "item": item,
            "items": items,
            "judges": judges,
            "judge": judge,
            "page": rater_page(study=study, item=item, questions=questions),
            "prompts": shown.prompts,
            "chat": shown.chat,
            "example_rater": shown.rater,
            "note": shown.note,
        },
    )
