"""The HTTP API for scripts: token authentication per researcher, who sees only their own studies.

Thin views over the same services the commands and pages use (study_create*, items_import, ...).
The OpenAPI schema is served at /api/schema/ (drf-spectacular).
"""
from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.importing import ImportFileError, items_import, uploaded_file
from annotations.lifecycle import LifecycleError, study_close, study_open
from annotations.models import Study
from annotations.selectors import studies_for_researcher, study_for_researcher
from annotations.services import invitations_create
from annotations.studies import StudySpecError, protocol_templates, study_create, study_create_from_template
from evalhub.analysis import study_analysis
from evalhub.exports import csv_lines, rating_rows
from llmjudge import judging
from llmjudge.forms import runnable_judges
from llmjudge.models import JudgeRun
from llmjudge.selectors import run_for_researcher, run_progress


class StudySerializer(serializers.ModelSerializer):
    questions = serializers.SerializerMethodField()
    n_items = serializers.IntegerField(source="items.count", read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "title", "kind", "status", "template", "template_version", "item_fields", "groups",
                  "scale_min", "scale_max", "scale_labels", "ordering", "raters_per_item", "questions", "n_items",
                  "created_at"]

    def get_questions(self, study: Study) -> list[dict[str, str]]:
        return [{"key": q.key, "text": q.text} for q in study.questions.all()]


class StudyCreateSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=100)
    template = serializers.ChoiceField(choices=sorted(protocol_templates()), required=False)
    spec = serializers.JSONField(required=False, help_text="A study specification (see docs): used without template")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("template" in attrs) == ("spec" in attrs):
            raise serializers.ValidationError("give exactly one of template and spec")
        return attrs


class ItemsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, help_text="CSV or JSONL, as for import_items")
    items = serializers.ListField(child=serializers.DictField(), required=False,
                                  help_text="Items as JSON objects (id, group and the study's item fields)")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("items" in attrs):
            raise serializers.ValidationError("give exactly one of file and items")
        return attrs


class StudyListView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses=StudySerializer(many=True))
    def get(self, request: Request) -> Response:
        studies = studies_for_researcher(user=request.user).prefetch_related("questions")
        return Response(StudySerializer(studies, many=True).data)

    @extend_schema(request=StudyCreateSerializer, responses={201: StudySerializer})
    def post(self, request: Request) -> Response:
        form = StudyCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            if "template" in data:
                study = study_create_from_template(slug=data["slug"], template=data["template"], owner=request.user)
            else:
                study = study_create(slug=data["slug"], spec=data["spec"], owner=request.user)
        except StudySpecError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(StudySerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses=StudySerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(StudySerializer(study_for_researcher(user=request.user, slug=slug)).data)


class StudyItemsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=ItemsUploadSerializer, responses={201: dict})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = ItemsUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data.get("file")
        if upload is None:
            # JSON items go through the very same validation as a JSONL file.
            lines = "\n".join(json.dumps(i) for i in form.validated_data["items"])
            upload = SimpleUploadedFile("items.jsonl", lines.encode("utf-8"))
        with uploaded_file(upload) as path:
            try:
                result = items_import(study=study, path=path)
            except ImportFileError as exc:
                return Response({"detail": f"{exc}; nothing was imported"}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created_items": result.created_items}, status=status.HTTP_201_CREATED)


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class StudyLifecycleView(APIView):
    """POST /api/studies/<slug>/open/ or /close/: the same services as open_study, close_study and the
    study page's buttons; a change that cannot happen (already open, no item, not open) is a 409."""

    permission_classes = [permissions.IsAuthenticated]
    action = "open"  # set per URL in api_urls

    @extend_schema(request=None, responses={200: StudySerializer, 404: DetailSerializer, 409: DetailSerializer})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        try:
            (study_open if self.action == "open" else study_close)(study=study)
        except LifecycleError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(StudySerializer(study).data)


class InvitationsSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, max_value=10_000, default=1)


class StudyInvitationsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=InvitationsSerializer, responses={201: dict})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = InvitationsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        raters = invitations_create(study=study, count=form.validated_data["count"])
        base = settings.PUBLIC_BASE_URL
        links = [base + reverse("annotations:rate", args=[rater.token]) for rater in raters]
        return Response({"links": links}, status=status.HTTP_201_CREATED)


class RunStartSerializer(serializers.Serializer):
    judge = serializers.CharField(help_text="the judge's name")


def run_json(run: JudgeRun) -> dict[str, Any]:
    return {"id": run.pk, "study": run.study.slug, "judge": run.judge.name, **run_progress(run=run).as_dict()}


class StudyRunsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: dict})
    def get(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug)
        runs = JudgeRun.objects.filter(study=study).select_related("judge", "study").order_by("id")
        return Response([run_json(run) for run in runs])

    @extend_schema(request=RunStartSerializer, responses={201: dict})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = RunStartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        judge = runnable_judges(request.user).filter(name=form.validated_data["judge"]).first()
        if judge is None:
            detail = f"no judge {form.validated_data['judge']!r}"
            return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        try:
            run = judging.judge_run_start(study=study, judge=judge)
        except judging.RunError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(run_json(run), status=status.HTTP_201_CREATED)


class RunDetailView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: dict})
    def get(self, request: Request, run_id: int) -> Response:
        return Response(run_json(run_for_researcher(user=request.user, run_id=run_id)))


class RunActionView(APIView):
    """POST /api/runs/<id>/<action>/ with action pause, resume or cancel."""

    permission_classes = [permissions.IsAuthenticated]
    actions = ("pause", "resume", "cancel")

    @extend_schema(request=None, responses={200: dict})
    def post(self, request: Request, run_id: int, action: str) -> Response:
        run = run_for_researcher(user=request.user, run_id=run_id, for_change=True)
        if action not in self.actions:
            return Response({"detail": f"unknown action {action!r}"}, status=status.HTTP_404_NOT_FOUND)
        try:
            changed = judging.judge_run_act(run=run, action=action)
        except judging.RunError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        if not changed and action == "resume":  # nothing to resume: say so (pause and cancel are idempotent)
            run.refresh_from_db()
            detail = f"run {run.pk} is {run.get_status_display().lower()}: nothing to resume"
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return Response(run_json(run))


class StudyAnalysisView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: dict})
    def get(self, request: Request, slug: str) -> Response:
        return Response(study_analysis(study=study_for_researcher(user=request.user, slug=slug)))


class StudyRatingsCSVView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/csv"): str})
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        study = study_for_researcher(user=request.user, slug=slug)
        response = StreamingHttpResponse(csv_lines(rating_rows([study])), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-ratings.csv"'
        return response
