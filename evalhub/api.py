"""The HTTP API for scripts: token authentication per researcher, who sees only their own studies.

Thin views over the same services the commands and pages use (study_create*, items_import, ...).
The OpenAPI schema is served at /api/schema/ (drf-spectacular).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.importing import ImportFileError, items_import
from annotations.models import Study
from annotations.studies import StudySpecError, protocol_templates, study_create, study_create_from_template


def researcher_studies(user: Any) -> QuerySet[Study]:
    """The studies a researcher may see through the API: their own (staff: all)."""
    return Study.objects.all() if user.is_staff else Study.objects.filter(owner=user)


def get_study_for_researcher(user: Any, slug: str) -> Study:
    # Another researcher's study answers 404, not 403: its existence is not revealed.
    return get_object_or_404(researcher_studies(user), slug=slug)


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
        studies = researcher_studies(request.user).prefetch_related("questions")
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
        return Response(StudySerializer(get_study_for_researcher(request.user, slug)).data)


class StudyItemsView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=ItemsUploadSerializer, responses={201: dict})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        form = ItemsUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        with tempfile.TemporaryDirectory() as tmp:
            if "file" in form.validated_data:
                upload = form.validated_data["file"]
                path = Path(tmp) / f"upload{Path(upload.name).suffix}"
                with path.open("wb") as handle:
                    for chunk in upload.chunks():
                        handle.write(chunk)
            else:
                # JSON items go through the very same validation as a JSONL file.
                path = Path(tmp) / "items.jsonl"
                path.write_text("\n".join(json.dumps(i) for i in form.validated_data["items"]), encoding="utf-8")
            try:
                result = items_import(study=study, path=path)
            except ImportFileError as exc:
                return Response({"detail": f"{exc}; nothing was imported"}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created_items": result.created_items}, status=status.HTTP_201_CREATED)
