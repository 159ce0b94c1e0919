"""The study admin's parts that span both pools: the ratings upload (human raters and LLM pools) and the
long-form CSV export of every rating.

annotations may not import evalhub, so its StudyAdmin cannot offer these itself. The plainest way to add
them is a subclass registered in its place: the actions and URLs are declared as on any ModelAdmin, in one
class a reader can open, rather than patched onto annotations' admin at start-up (AppConfig.ready) where
nothing in annotations/admin.py would hint at them. Importing annotations.admin first makes its
registration happen before ours, whatever the order of INSTALLED_APPS.
"""
from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import URLPattern, path

from annotations.admin import StudyAdmin
from annotations.models import Study
from evalhub.imports.ratings import ratings_import


class StudyWithRatingsAdmin(StudyAdmin):
    actions = [*StudyAdmin.actions, "export_ratings_csv"]

    @admin.action(description="Export ratings as CSV (long form, streamed)")
    def export_ratings_csv(self, request: HttpRequest, queryset) -> StreamingHttpResponse:  # noqa: ANN001
        # On use: exports imports the analysis (numpy and the statistics), and django.setup() imports this
        # module in every process (STYLE 15).
        from evalhub.imports.exports import csv_lines, rating_rows

        response = StreamingHttpResponse(csv_lines(rating_rows(queryset.order_by("slug"))), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="ratings.csv"'
        return response

    def get_urls(self) -> list[URLPattern]:
        return [
            # The name keeps annotations' prefix: the study page's template links to it by that name.
            path("<int:pk>/import-ratings/", self.admin_site.admin_view(self.import_ratings_view),
                 name="annotations_study_import_ratings"),
            *super().get_urls(),
        ]

    def import_ratings_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._import_view(request, pk, "ratings", ratings_import)


admin.site.unregister(Study)
admin.site.register(Study, StudyWithRatingsAdmin)
