from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotations.admin_access import FK_STUDY_PATHS, StudyScopedAdmin
from annotations.models import Study
from annotations.selectors import studies_for_researcher
from llmjudge.forms import runnable_judges
from llmjudge.kinds import kind_for, kind_names, kind_options
from llmjudge.models import Experiment, Judge, JudgeCall, JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging

FK_STUDY_PATHS.update({JudgeRun: "study", Experiment: "study"})


class JudgeForm(forms.ModelForm):
    """The kind's options checked as the judge-creation service checks them (a rubric option is a template:
    issue 23, finding 2); the key variable and base URL by the model's validators; the name per owner."""

    request_user: Any = None  # set by JudgeAdmin.get_form: the owner of a judge whose form has no owner field

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # The owner is often not a field of the form (only a superuser picks one), so the database's per-owner
        # constraint is checked here, with words that name only that owner's judges (issue 23, finding 8).
        owner = data.get("owner") or (self.instance.owner if self.instance.pk else None) or self.request_user
        name = data.get("name")
        if name and owner is not None and Judge.objects.filter(owner=owner, name=name).exclude(
                pk=self.instance.pk).exists():
            self.add_error("name", f"a judge named {name!r} already exists among {owner.get_username()}'s judges")
        kind = data.get("kind") or Judge.Kind.PLAIN
        if kind in kind_names() and kind_for(kind).has_options:
            try:
                kind_options(kind, data.get("options"))
            except ValueError as exc:
                self.add_error("options", str(exc))
        return data


class RunOnStudyForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.none())


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    """Judges are listed as they are runnable (own and shared; a superuser: all), changed by their owner.

    The key variable and base URL are checked by the model's validators (llmjudge.backends.endpoint_rules).
    """

    form = JudgeForm
    list_display = ("name", "kind", "backend", "model", "temperature", "top_p", "samples", "variant", "mode",
                    "owner", "shared")
    list_filter = ("kind", "backend", "variant", "mode", "shared")
    search_fields = ("name", "model")
    actions = ["run_on_study"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Judge]:
        judges = super().get_queryset(request)
        return judges if request.user.is_superuser else judges.filter(Q(owner=request.user) | Q(shared=True))

    def _owns(self, request: HttpRequest, obj: Judge | None) -> bool:
        return obj is None or request.user.is_superuser or obj.owner_id == request.user.pk

    def has_change_permission(self, request: HttpRequest, obj: Judge | None = None) -> bool:
        return super().has_change_permission(request, obj) and self._owns(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Judge | None = None) -> bool:
        return super().has_delete_permission(request, obj) and self._owns(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Judge | None = None) -> list[str]:
        return [] if request.user.is_superuser else ["owner"]

    def get_form(self, request: HttpRequest, obj: Judge | None = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        form.request_user = request.user  # a class made for this request (modelform_factory)
        return form

    def save_model(self, request: HttpRequest, obj: Judge, form: forms.Form, change: bool) -> None:
        # Every judge has an owner: the admin's user unless a superuser chose one.
        if not change and (obj.owner is None or not request.user.is_superuser):
            obj.owner = request.user
        super().save_model(request, obj, form, change)

    @admin.action(description="Run the selected judges on a study")
    def run_on_study(self, request: HttpRequest, queryset: QuerySet[Judge]) -> HttpResponse | None:
        form = RunOnStudyForm(request.POST if "apply" in request.POST else None)
        form.fields["study"].queryset = studies_for_researcher(user=request.user, for_change=True)
        if "apply" in request.POST and form.is_valid():
            for judge in queryset & runnable_judges(request.user):
                try:
                    run = judging.judge_run_start(study=form.cleaned_data["study"], judge=judge)
                except judging.RunError as exc:
                    self.message_user(request, str(exc), messages.ERROR)
                else:
                    self.message_user(request, f"Started run {run.pk}: {judge.name} on {run.study.slug}")
            return None
        return render(
            request,
            "admin/llmjudge/judge/run_on_study.html",
            {**self.admin_site.each_context(request), "form": form, "judges": queryset, "title": "Run judges"},
        )


@admin.register(JudgeRun)
class JudgeRunAdmin(StudyScopedAdmin):
    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "judge":
            kwargs["queryset"] = runnable_judges(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    list_display = ("id", "study", "judge", "status", "calls_done", "calls_failed", "calls_total", "created_at")
    list_filter = ("status", "study", "judge")
    search_fields = ("study__slug", "judge__name")
    readonly_fields = ("params", "error", "created_at", "started_at", "finished_at")
    actions = ["pause_runs", "resume_runs", "cancel_runs"]

    @admin.action(description="Pause the selected runs")
    def pause_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        done = sum(judging.judge_run_pause(run=run) for run in queryset)
        self.message_user(request, f"Paused {done} run(s).")

    @admin.action(description="Resume the selected runs (only what is missing)")
    def resume_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        for run in queryset:
            try:
                judging.judge_run_resume(run=run)
            except judging.RunError as exc:
                self.message_user(request, f"Run {run.pk}: {exc}", messages.ERROR)

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        done = sum(judging.judge_run_cancel(run=run) for run in queryset)
        self.message_user(request, f"Cancelled {done} run(s).")


@admin.register(Experiment)
class ExperimentAdmin(StudyScopedAdmin):
    list_display = ("name", "study", "owner", "created_at")
    readonly_fields = ("grid", "created_at")


@admin.register(LLMRating)
class LLMRatingAdmin(StudyScopedAdmin):
    study_path = "run__study"
    list_display = ("run", "item", "question", "sample", "target_rater", "status", "score", "attempts", "latency_ms")
    list_filter = ("status", "run__judge", "run__study", "question__key")
    search_fields = ("item__external_id", "raw", "rationale")
    list_select_related = ("run__judge", "item", "question")
    readonly_fields = [f.name for f in LLMRating._meta.fields]

    def has_add_permission(self, request) -> bool:  # noqa: ANN001
        return False


@admin.register(JudgeCall)
class JudgeCallAdmin(StudyScopedAdmin):
    """Persona and panel preparation steps (characters, verifications, roles): read-only, as ratings."""

    study_path = "run__study"
    list_display = ("run", "step", "key", "status", "attempts", "latency_ms")
    list_filter = ("status", "step", "run__judge")
    search_fields = ("key", "raw")
    list_select_related = ("run__judge",)
    readonly_fields = [f.name for f in JudgeCall._meta.fields]

    def has_add_permission(self, request) -> bool:  # noqa: ANN001
        return False
