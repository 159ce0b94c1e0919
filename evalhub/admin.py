"""The study admin's parts that need evalhub: the uploads (items, demographics and ratings, the last for human
raters and LLM pools alike), which share the study page's rule for large files (evalhub.imports.uploads), and the
long-form CSV export of every rating, and the draw of the human subset when its setting changes (issue 27).

annotations may not import evalhub, so its StudyAdmin cannot offer these itself. The plainest way to add
them is a subclass registered in its place: the actions and URLs are declared as on any ModelAdmin, in one
class a reader can open, rather than patched onto annotations' admin at start-up (AppConfig.ready) where
nothing in annotations/admin.py would hint at them. Importing annotations.admin first makes its
registration happen before ours, whatever the order of INSTALLED_APPS.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import URLPattern, path, reverse

from annotations.admin import StudyAdmin
from annotations.forms import UPLOAD_FORMS, import_summary
from annotations.guards.signed_in import signed_in_user
from annotations.importing.services import ImportFileError
from annotations.models import Study
from evalhub.imports.uploads import UploadTooLarge, upload_import


class StudyWithUploadsAdmin(StudyAdmin):
    actions = [*StudyAdmin.actions, "export_ratings_csv"]

    @admin.action(description="Export ratings as CSV (long form, streamed)")
    def export_ratings_csv(self, request: HttpRequest, queryset: QuerySet[Study]) -> StreamingHttpResponse:
        # On use: exports imports the analysis (numpy and the statistics), and django.setup() imports this
        # module in every process (STYLE 15).
        from evalhub.imports.exports import csv_lines, rating_rows

        response = StreamingHttpResponse(csv_lines(rating_rows(queryset.order_by("slug"))), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="ratings.csv"'
        return response

    def save_model(self, request: HttpRequest, obj: Study, form: forms.Form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if "human_subset" in form.changed_data:  # checked by the form (StudyForm.clean_human_subset)
            from evalhub.analysis.planning.human_subset import study_human_subset_set  # on use: numpy (STYLE 15)

            study_human_subset_set(study=obj, setting=obj.human_subset)

    def get_urls(self) -> list[URLPattern]:
        # The names keep annotations' prefix: the study's change form and page link to them by those names.
        return [
            *(path(f"<int:pk>/import-{what}/", self.admin_site.admin_view(self.import_view),
                   {"what": what}, name=f"annotations_study_import_{what}") for what in UPLOAD_FORMS),
            *super().get_urls(),
        ]

    def import_view(self, request: HttpRequest, pk: int, what: str) -> HttpResponse:
        study = get_object_or_404(self.get_queryset(request), pk=pk)
        assert isinstance(study, Study)  # this admin's model; the scoped queryset is typed for any model
        if not self.has_change_permission(request, study):
            return HttpResponse(status=403)
        form = UPLOAD_FORMS[what](request.POST or None, request.FILES or None)
        status = 200
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                # The admin imports in the request and has no progress bar: a large file is refused and sent
                # to the study page, which imports it in the background.
                result = upload_import(study=study, kind=what, upload=upload, options=form.import_options(),
                                       user=signed_in_user(request.user), background=False)
            except ImportFileError as exc:
                messages.error(request, f"{upload.name}: {exc}. Nothing was imported.")
                status = 413 if isinstance(exc, UploadTooLarge) else 200
            else:
                messages.success(request, import_summary(what, result))
                return HttpResponseRedirect(reverse("admin:annotations_study_change", args=[study.pk]))
        context = {**self.admin_site.each_context(request), "form": form, "study": study, "what": what,
                   "opts": self.model._meta, "title": f"Import {what} into {study.slug}"}
        return render(request, "admin/annotations/study/import.html", context, status=status)


admin.site.unregister(Study)
admin.site.register(Study, StudyWithUploadsAdmin)
