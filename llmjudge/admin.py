from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin, messages
from django.db.models import ForeignKey, Model, Q, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import pluralize

from annotations.admin_access import FK_STUDY_PATHS, StudyScopedAdmin
from annotations.forms import form_field
from annotations.guards.signed_in import signed_in_user
from annotations.models import Study
from annotations.selectors import studies_for_researcher
from llmjudge.backends.endpoint_rules import EndpointRefused, KeyHolder, check_key_variable
from llmjudge.kinds import kind_for, kind_names, kind_options
from llmjudge.models import Experiment, Judge, JudgeCall, JudgeRun, LLMRating
from llmjudge.selectors import history_words_hidden, owns_judge, run_error_for, server_words_hidden

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

FK_STUDY_PATHS.update({JudgeRun: "study", Experiment: "study"})
# llmjudge.forms and the run lifecycle are imported in the methods that use them: django.setup() imports every
# admin module in every process, and they bring the judge kinds, the answer parsers and the run machinery.


class JudgeForm(forms.ModelForm):
    """The kind's options checked as the judge-creation service checks them (a rubric option is a template:
    issue 23, finding 2); the key variable and base URL by the model's validators; the name per owner."""

    # Set by JudgeAdmin.get_form: the owner of a judge whose form has no owner field.
    request_user: User | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # The owner is often not a field of the form (only a superuser picks one), so the database's per-owner
        # constraint is checked here, with words that name only that owner's judges (issue 23, finding 8).
        owner = data.get("owner") or (self.instance.owner if self.instance.pk else None) or self.request_user
        name = data.get("name")
        if name and owner is not None and Judge.objects.filter(owner=owner, name=name).exclude(
                pk=self.instance.pk).exists():
            self.add_error("name", f"a judge named {name!r} already exists among {owner.get_username()}'s judges")
        if data.get("api_key_env") and "api_key_env" not in self.errors:
            try:  # the key is the owner's to spend: granted to them (JUDGE_KEY_VARIABLES scopes)
                check_key_variable(data["api_key_env"], KeyHolder.of(owner))
            except EndpointRefused as exc:
                self.add_error("api_key_env", str(exc))
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

    def get_form(self, request: HttpRequest, obj: Judge | None = None, change: bool = False, **kwargs: Any
                 ) -> type[forms.ModelForm[Judge]]:
        form = super().get_form(request, obj, change=change, **kwargs)
        # A class made for this request (modelform_factory).
        setattr(form, "request_user", signed_in_user(request.user))  # noqa: B010
        return form

    def save_model(self, request: HttpRequest, obj: Judge, form: forms.Form, change: bool) -> None:
        # Every judge has an owner: the admin's user unless a superuser chose one.
        if not change and (obj.owner is None or not request.user.is_superuser):
            obj.owner = signed_in_user(request.user)
        super().save_model(request, obj, form, change)

    @admin.action(description="Run the selected judges on a study")
    def run_on_study(self, request: HttpRequest, queryset: QuerySet[Judge]) -> HttpResponse | None:
        from llmjudge.forms import runnable_judges
        from llmjudge.runs import lifecycle as judging

        form = RunOnStudyForm(request.POST if "apply" in request.POST else None)
        form_field(form, "study", forms.ModelChoiceField).queryset = studies_for_researcher(user=request.user,
                                                                                            for_change=True)
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


# Who reads a change page, for the read-only fields that depend on it (a ModelAdmin is shared by every request).
_reader: ContextVar[User | AnonymousUser] = ContextVar("admin_reader")


class _ReaderAware(StudyScopedAdmin):
    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        token = _reader.set(request.user)
        try:
            response = super().changeform_view(request, *args, **kwargs)
            # A TemplateResponse renders after the view returns: render it while the reader is known.
            return response.render() if hasattr(response, "render") else response
        finally:
            _reader.reset(token)


@admin.register(JudgeRun)
class JudgeRunAdmin(_ReaderAware):
    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Model] | None:
        if db_field.name == "judge":
            from llmjudge.forms import runnable_judges

            kwargs["queryset"] = runnable_judges(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    list_display = ("id", "study", "judge", "status", "calls_done", "calls_failed", "calls_total", "created_at")
    list_filter = ("status", "study", "judge")
    search_fields = ("study__slug", "judge__name")
    # The error read-only, a judge server's words only for the judge's owner (_ReaderAware, issue 23, finding 9).
    readonly_fields = ("params", "error_shown", "created_at", "started_at", "finished_at")
    exclude = ("error",)

    @admin.display(description="error")
    def error_shown(self, run: JudgeRun) -> str:
        return run_error_for(run=run, user=_reader.get())
    actions = ["pause_runs", "resume_runs", "cancel_runs"]

    @admin.action(description="Pause the selected runs")
    def pause_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        from llmjudge.runs import lifecycle as judging

        done = sum(judging.judge_run_pause(run=run) for run in queryset)
        self.message_user(request, f"Paused {done} run{pluralize(done)}.")

    @admin.action(description="Resume the selected runs (only what is missing)")
    def resume_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        from llmjudge.runs import lifecycle as judging

        for run in queryset:
            try:
                judging.judge_run_resume(run=run)
            except judging.RunError as exc:
                self.message_user(request, f"Run {run.pk}: {exc}", messages.ERROR)

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request: HttpRequest, queryset: QuerySet[JudgeRun]) -> None:
        from llmjudge.runs import lifecycle as judging

        done = sum(judging.judge_run_cancel(run=run) for run in queryset)
        self.message_user(request, f"Cancelled {done} run{pluralize(done)}.")


@admin.register(Experiment)
class ExperimentAdmin(StudyScopedAdmin):
    list_display = ("name", "study", "owner", "created_at")
    readonly_fields = ("grid", "created_at")


class _ServerWordsForOwner(_ReaderAware):
    """Read-only rows whose text fields can quote a judge's server (an error body): anyone but the judge's owner
    reads them with the server's words reduced to the status (issue 23, finding 9). Those fields are not
    searchable either, so a search cannot guess the hidden words piece by piece."""

    hidden_text_fields: tuple[str, ...] = ()

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        run = getattr(obj, "run", None)
        if obj is None or run is None or owns_judge(run=run, user=request.user):
            return fields
        return [f"{f}_shown" if f in (*self.hidden_text_fields, "history") else f for f in fields]

    def get_exclude(self, request: HttpRequest, obj: Model | None = None) -> list[str]:
        run = getattr(obj, "run", None)
        hidden = run is not None and not owns_judge(run=run, user=request.user)
        excluded = (*self.hidden_text_fields, "history") if hidden else ()
        return [*(super().get_exclude(request, obj) or ()), *excluded]

    @admin.display(description="history")
    def history_shown(self, row: LLMRating | JudgeCall) -> str:
        return history_words_hidden(row.history)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(LLMRating)
class LLMRatingAdmin(_ServerWordsForOwner):
    study_path = "run__study"
    list_display = ("run", "item", "question", "sample", "target_rater", "status", "score", "attempts", "latency_ms")
    list_filter = ("status", "run__judge", "run__study", "question__key")
    search_fields = ("item__external_id", "raw")  # not the rationale: an error's rationale quotes the server
    list_select_related = ("run__judge", "item", "question")
    readonly_fields = [f.name for f in LLMRating._meta.fields]
    hidden_text_fields = ("rationale",)

    @admin.display(description="rationale")
    def rationale_shown(self, rating: LLMRating) -> str:
        return server_words_hidden(rating.rationale)


@admin.register(JudgeCall)
class JudgeCallAdmin(_ServerWordsForOwner):
    """Persona and panel preparation steps (characters, verifications, roles): read-only, as ratings."""

    study_path = "run__study"
    list_display = ("run", "step", "key", "status", "attempts", "latency_ms")
    list_filter = ("status", "step", "run__judge")
    search_fields = ("key",)  # not the text fields: a failed call's text can quote the server
    list_select_related = ("run__judge",)
    readonly_fields = [f.name for f in JudgeCall._meta.fields]
    hidden_text_fields = ("raw",)

    @admin.display(description="raw")
    def raw_shown(self, call: JudgeCall) -> str:
        return server_words_hidden(call.raw)
