from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from annotations.admin_access import StudyScopedAdmin
from annotations.forms import DemographicsUploadForm, UploadForm, import_summary
from annotations.importing.services import (
    ImportFileError,
    ImportResult,
    demographics_import,
    items_import,
    uploaded_file,
)
from annotations.models import (
    Assignment,
    AttentionCheck,
    HumanRating,
    Item,
    ItemClaim,
    MetaAnswer,
    Question,
    Rater,
    Study,
)
from annotations.placeholders import TemplateError, plain_placeholders
from annotations.selectors import study_changeable
from annotations.services import InvitationLimitError, invitations_create, rater_revoke


def _plain_template(value: str, where: str) -> str:
    try:
        plain_placeholders(value or "", where)
    except TemplateError as exc:
        raise forms.ValidationError(str(exc)) from None
    return value


class QuestionForm(forms.ModelForm):
    """The admin edits templates the spec check never saw: the same check here (annotations.placeholders)."""

    def clean_context(self) -> str:
        return _plain_template(self.cleaned_data.get("context", ""), "context")


class StudyForm(forms.ModelForm):
    def clean_llm_template(self) -> str:
        return _plain_template(self.cleaned_data.get("llm_template", ""), "llm_template")


class QuestionInline(admin.StackedInline):
    model = Question
    form = QuestionForm
    extra = 0
    fields = ("order", "key", "text", "context", "reveals", "rubric")


@admin.register(Study)
class StudyAdmin(StudyScopedAdmin):
    """The study admin of this app's rows; evalhub.admin extends it with what also touches LLM pools."""

    study_path = ""
    form = StudyForm
    list_display = ("slug", "title", "kind", "status", "ordering", "raters_per_item", "owner", "created_at")
    list_filter = ("status", "kind", "ordering", "template")
    search_fields = ("slug", "title")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [QuestionInline]
    readonly_fields = ("template", "template_version", "created_at")
    change_form_template = "admin/annotations/study/change_form.html"
    actions = ["create_invitations"]

    @admin.action(description="Create 10 invitation links (listed on the study's raters page)")
    def create_invitations(self, request: HttpRequest, queryset) -> None:  # noqa: ANN001
        for study in queryset:
            try:
                invitations_create(study=study, count=10)
            except InvitationLimitError as exc:
                messages.error(request, f"{exc}. No links were created.")
                continue
            url = reverse("annotations:study_raters", args=[study.slug])
            messages.success(request, f"{study.slug}: 10 new invitation links, listed at {url}")

    def save_model(self, request: HttpRequest, obj: Study, form: forms.Form, change: bool) -> None:
        if not change and (obj.owner is None or not request.user.is_superuser):
            obj.owner = request.user
        super().save_model(request, obj, form, change)

    def get_urls(self):  # noqa: ANN201
        return [
            path("<int:pk>/import-items/", self.admin_site.admin_view(self.import_items_view),
                 name="annotations_study_import_items"),
            path("<int:pk>/import-demographics/", self.admin_site.admin_view(self.import_demographics_view),
                 name="annotations_study_import_demographics"),
            *super().get_urls(),
        ]

    def import_items_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._import_view(request, pk, "items", items_import)

    def import_demographics_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._import_view(request, pk, "demographics", demographics_import, DemographicsUploadForm)

    def _import_view(
        self, request: HttpRequest, pk: int, what: str, service: Callable[..., ImportResult],
        form_class: type[UploadForm] | None = None,
    ) -> HttpResponse:
        study = get_object_or_404(self.get_queryset(request), pk=pk)
        if not self.has_change_permission(request, study):
            return HttpResponse(status=403)
        form = (form_class or UploadForm)(request.POST or None, request.FILES or None)
        status = 200
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            options = {k: v for k, v in form.cleaned_data.items() if k != "file"}
            limit = settings.IMPORT_TASK_THRESHOLD_BYTES
            if upload.size > limit:
                # The admin imports in the request; larger files go through the study page's background import.
                messages.error(request, f"{upload.name}: {upload.size} bytes, above {limit} "
                                        "(IMPORT_TASK_THRESHOLD_BYTES): upload it on the study's page, where it is "
                                        "imported in the background. Nothing was imported.")
                status = 413
            else:
                with uploaded_file(upload) as target:
                    try:
                        result = service(study=study, path=target, **options)
                    except ImportFileError as exc:
                        messages.error(request, f"{upload.name}: {exc}. Nothing was imported.")
                    else:
                        messages.success(request, import_summary(what, result))
                        return HttpResponseRedirect(reverse("admin:annotations_study_change", args=[study.pk]))
        context = {**self.admin_site.each_context(request), "form": form, "study": study, "what": what,
                   "opts": self.model._meta, "title": f"Import {what} into {study.slug}"}
        return render(request, "admin/annotations/study/import.html", context, status=status)


@admin.register(Question)
class QuestionAdmin(StudyScopedAdmin):
    form = QuestionForm
    list_display = ("study", "order", "key", "text")
    list_filter = ("study",)
    search_fields = ("key", "text")


@admin.register(Item)
class ItemAdmin(StudyScopedAdmin):
    list_display = ("external_id", "study", "group", "position")
    list_filter = ("study", "group")
    search_fields = ("external_id",)


@admin.register(Rater)
class RaterAdmin(StudyScopedAdmin):
    list_display = ("__str__", "study", "source", "external_id", "created_at")
    list_filter = ("study", "source")
    search_fields = ("external_id",)
    exclude = ("token",)
    actions = ["revoke_links"]

    @admin.action(description="Revoke the selected raters' links")
    def revoke_links(self, request: HttpRequest, queryset) -> None:  # noqa: ANN001
        for rater in queryset:
            rater_revoke(rater=rater)
        messages.success(request, f"Revoked {queryset.count()} link(s).")


@admin.register(Assignment)
class AssignmentAdmin(StudyScopedAdmin):
    study_path = "rater__study"
    list_display = ("rater", "position", "started_at", "completed_at")
    list_filter = ("rater__study",)
    readonly_fields = ("position",)  # the rater's finished items, counted by the submit service
    search_fields = ("rater__external_id",)  # never the completion code (admin_access.CREDENTIAL_FIELDS)

    def get_list_display(self, request: HttpRequest) -> Any:
        # The completion code of the rows whose study the user may change; a read-only viewer sees a dash.
        def completion_code(obj: Assignment) -> str:
            return obj.completion_code if study_changeable(user=request.user, study=obj.rater.study) else "–"

        return ("rater", "position", completion_code, "started_at", "completed_at")

    def get_exclude(self, request: HttpRequest, obj: Assignment | None = None) -> Any:
        changeable = obj is None or study_changeable(user=request.user, study=obj.rater.study)
        return [*(super().get_exclude(request, obj) or ()), *(() if changeable else ("completion_code",))]


@admin.register(HumanRating)
class HumanRatingAdmin(StudyScopedAdmin):
    study_path = "item__study"
    list_display = ("item", "question", "rater", "score", "time_spent_ms", "updated_at")
    list_filter = ("item__study", "question__key", "item__group")
    search_fields = ("item__external_id", "rater__external_id", "comment")
    list_select_related = ("item", "question", "rater")
    raw_id_fields = ("rater", "item", "question")


@admin.register(ItemClaim)
class ItemClaimAdmin(StudyScopedAdmin):
    study_path = "item__study"
    list_display = ("assignment", "item", "seat", "claimed_at", "touched_at", "completed_at", "time_spent_ms")
    list_filter = ("item__study",)
    raw_id_fields = ("assignment", "item")


@admin.register(AttentionCheck)
class AttentionCheckAdmin(StudyScopedAdmin):
    study_path = "assignment__rater__study"
    list_display = ("assignment", "position", "expected", "answer", "passed", "answered_at")
    list_filter = ("assignment__rater__study", "passed")


@admin.register(MetaAnswer)
class MetaAnswerAdmin(StudyScopedAdmin):
    study_path = "item__study"
    list_display = ("item", "rater", "verdict", "updated_at")
    list_filter = ("item__study", "verdict")
    raw_id_fields = ("rater", "item")
