from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import pluralize
from django.urls import reverse

from annotations.admin_access import StudyScopedAdmin
from annotations.guards.placeholders import TemplateError, plain_placeholders
from annotations.guards.signed_in import signed_in_user
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
from annotations.selectors import study_changeable
from annotations.services import InvitationLimitError, invitations_create, rater_revoke
from annotations.studies import StudySpecError, human_subset_changeable, pair_order_check


def _plain_template(value: str, where: str) -> str:
    try:
        plain_placeholders(value or "", where)
    except TemplateError as exc:
        raise forms.ValidationError(str(exc)) from None
    return value


class QuestionForm(forms.ModelForm):
    """The admin edits templates the spec check never saw: the same check here (annotations.guards.placeholders)."""

    def clean_context(self) -> str:
        return _plain_template(self.cleaned_data.get("context", ""), "context")


class StudyForm(forms.ModelForm):
    def clean_llm_template(self) -> str:
        return _plain_template(self.cleaned_data.get("llm_template", ""), "llm_template")

    def clean_human_subset(self) -> dict[str, Any]:
        # The draw itself is evalhub's (evalhub.admin saves through evalhub.analysis.planning.human_subset).
        try:
            return human_subset_changeable(study=self.instance, setting=self.cleaned_data.get("human_subset"))
        except StudySpecError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        # The spec's rule, for the admin too (issue 25 review: "fixed" saved beside "the order is random").
        cleaned = super().clean() or {}
        if cleaned.get("kind") == Study.Kind.PAIRWISE or self.instance.kind == Study.Kind.PAIRWISE:
            spec = {"pair_order": cleaned.get("pair_order", self.instance.pair_order),
                    "human_instruction": cleaned.get("instruction", ""),
                    "llm_template": cleaned.get("llm_template", "")}
            try:
                pair_order_check(spec)
            except StudySpecError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned


class QuestionInline(admin.StackedInline):
    model = Question
    form = QuestionForm
    extra = 0
    fields = ("order", "key", "text", "context", "reveals", "rubric")


@admin.register(Study)
class StudyAdmin(StudyScopedAdmin):
    """The study admin of this app's rows; evalhub.admin extends it with the uploads (they share the study
    page's hand-off rule, evalhub.imports.uploads) and what also touches LLM pools."""

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
    def create_invitations(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
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
            obj.owner = signed_in_user(request.user)
        super().save_model(request, obj, form, change)


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
    def revoke_links(self, request: HttpRequest, queryset: QuerySet[Rater]) -> None:
        for rater in queryset:
            rater_revoke(rater=rater)
        messages.success(request, f"Revoked {(n := queryset.count())} link{pluralize(n)}.")


@admin.register(Assignment)
class AssignmentAdmin(StudyScopedAdmin):
    study_path = "rater__study"
    list_display = ("rater", "position", "started_at", "completed_at")
    list_filter = ("rater__study",)
    readonly_fields = ("position",)  # the rater's finished items, counted by the submit service
    search_fields = ("rater__external_id",)  # never the completion code (admin_access.CREDENTIAL_FIELDS)

    def get_list_display(self, request: HttpRequest) -> tuple[str | Callable[[Assignment], str], ...]:
        # The completion code of the rows whose study the user may change; a read-only viewer sees a dash.
        def completion_code(obj: Assignment) -> str:
            return obj.completion_code if study_changeable(user=request.user, study=obj.rater.study) else "–"

        return ("rater", "position", completion_code, "started_at", "completed_at")

    def get_exclude(self, request: HttpRequest, obj: Assignment | None = None) -> list[str]:
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
