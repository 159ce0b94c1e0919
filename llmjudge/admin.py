from __future__ import annotations

from django.contrib import admin

from llmjudge.models import Judge, JudgeRun, LLMRating


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "backend", "model", "temperature", "top_p", "samples", "variant", "mode")
    list_filter = ("kind", "backend", "variant", "mode")
    search_fields = ("name", "model")


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "judge", "status", "calls_done", "calls_failed", "calls_total", "created_at")
    list_filter = ("status", "study", "judge")
    search_fields = ("study__slug", "judge__name")
    readonly_fields = ("params", "error", "created_at", "started_at", "finished_at")


@admin.register(LLMRating)
class LLMRatingAdmin(admin.ModelAdmin):
    list_display = ("run", "item", "question", "sample", "status", "score", "attempts", "latency_ms")
    list_filter = ("status", "run__judge", "run__study", "question__key")
    search_fields = ("item__external_id", "raw", "rationale")
    list_select_related = ("run__judge", "item", "question")
    readonly_fields = [f.name for f in LLMRating._meta.fields]

    def has_add_permission(self, request) -> bool:  # noqa: ANN001
        return False
