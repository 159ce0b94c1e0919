"""The HTTP API for scripts: token authentication per researcher, who sees only their own studies.

Thin views over the same services the commands and pages use (study_create*, items_import, ...).
The OpenAPI schema is served at /api/schema/ (drf-spectacular).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotations.guards.signed_in import signed_in_user
from annotations.importing.services import ImportFileError, ImportResult, uploaded_file
from annotations.lifecycle import LifecycleError, study_close, study_open
from annotations.models import Study
from annotations.selectors import studies_for_researcher, study_for_researcher
from annotations.services import InvitationLimitError, invitations_create
from annotations.spec_schema import STUDY_SPEC_SCHEMA
from annotations.studies import (
    HumanSubsetLocked,
    StudySlugTaken,
    StudySpecError,
    protocol_templates,
    refuse_unknown_keys,
    study_create,
    study_create_from_template,
    study_spec_check,
)
from evalhub.analysis import study_analysis
from evalhub.analysis.planning.human_subset import items_import_drawn, study_human_subset_set
from evalhub.analysis.result_json import analysis_json
from evalhub.api.plumbing import SafeJSONParser
from evalhub.imports.exports import csv_lines, demographic_rows, rating_rows
from evalhub.imports.uploads import UploadTooLarge, upload_import
from llmjudge.forms import runnable_judges
from llmjudge.models import JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.selectors import AmbiguousJudgeName, judge_named, run_for_researcher, run_progress

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


class ThrottledAPIView(APIView):
    """Throttles before permissions: DRF checks them after, so an anonymous caller guessing tokens got
    401 forever and was never throttled."""

    def check_permissions(self, request: Request) -> None:
        self.check_throttles(request)
        super().check_permissions(request)

    def check_throttles(self, request: Request) -> None:
        # DRF calls this again after the permissions: count each request once.
        if not getattr(request, "_evalhub_throttled", False):
            # A mark on this request only, which DRF's Request does not declare (read back just above).
            request._evalhub_throttled = True  # type: ignore[attr-defined]
            super().check_throttles(request)


@csrf_exempt  # no state changes here; with CSRF, a session's POST would get Django's HTML 403 instead
def not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Unknown API paths answer JSON like every other API error, not Django's HTML 404."""
    return JsonResponse({"detail": "Not found."}, status=404)


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    """The error statuses of an operation, each a ``{"detail": ...}`` body (400 may hold field errors)."""
    words = {400: "invalid input: field errors or {detail}", 401: "no or bad credentials",
             403: "not allowed", 404: "no such study or run (or another researcher's)",
             409: "the change cannot happen in the current state",
             413: "a file above IMPORT_TASK_THRESHOLD_BYTES: upload it on the study's page (a background import)",
             429: "too many requests: see Retry-After"}
    # A 400 is either {"detail": "..."} or the serializer's {"field": ["message", ...]}: any object.
    return {code: OpenApiResponse(OpenApiTypes.OBJECT if code == 400 else DetailSerializer, description=words[code])
            for code in codes}


# Every authenticated operation can answer 401 (no token), 403 (a session without CSRF) and 429.
AUTH = (401, 403, 429)


class StudySerializer(serializers.ModelSerializer):
    questions = serializers.SerializerMethodField()
    n_items = serializers.IntegerField(source="items.count", read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "title", "kind", "status", "template", "template_version", "item_fields", "groups",
                  "scale_min", "scale_max", "scale_labels", "ordering", "raters_per_item", "questions", "n_items",
                  "human_subset", "created_at"]
        read_only_fields = ["human_subset"]

    def get_questions(self, study: Study) -> list[dict[str, str]]:
        return [{"key": q.key, "text": q.text} for q in study.questions.all()]


class StrictSlugField(serializers.SlugField):
    """A slug that is a JSON string: DRF would turn 0 into "0", which the schema does not promise."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field(STUDY_SPEC_SCHEMA)
class SpecField(serializers.JSONField):
    """A study specification: the schema says its fields (annotations/spec_schema.py), the check the rest."""


class KnownKeysOnly(serializers.Serializer):
    """A request body of which every key is a field: an unknown or misspelt one is refused with the closest known
    key, as a spec's are (DRF would drop it without a word; issue 25 review)."""

    def to_internal_value(self, data: Any) -> Any:
        # Before the fields: a misspelt required key would otherwise read "This field is required." alone.
        if isinstance(data, Mapping):
            try:
                refuse_unknown_keys(data, tuple(self.fields), "the request")
            except StudySpecError as exc:
                raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [str(exc)]}) from None
        return super().to_internal_value(data)


class StudyCreateSerializer(KnownKeysOnly):
    slug = StrictSlugField(max_length=100)
    template = serializers.ChoiceField(choices=sorted(protocol_templates()), required=False)
    spec = SpecField(required=False, help_text="A study specification (see docs): used without template")

    def validate_spec(self, spec: object) -> object:  # any JSON value; study_spec_check says what it must be
        # The whole specification is checked here, before anything is written (the service checks again).
        try:
            study_spec_check(spec)
        except StudySpecError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return spec

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("template" in attrs) == ("spec" in attrs):
            raise serializers.ValidationError("give exactly one of template and spec")
        return attrs


class StudyFromTemplateSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=100)
    template = serializers.ChoiceField(choices=sorted(protocol_templates()))


class StudyFromSpecSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=100)
    spec = SpecField(help_text="A study specification (see docs)")


# What the schema promises: one shape or the other, never both (the server refuses both).
STUDY_CREATE_SHAPES = PolymorphicProxySerializer(
    component_name="StudyCreate", serializers=[StudyFromTemplateSerializer, StudyFromSpecSerializer],
    resource_type_field_name=None,
)


# An item's values as the import reads them: a string or a number (never a list, object, null or boolean).
_ITEM_VALUE = {"anyOf": [{"type": "string", "pattern": "^[^\\x00]*$"}, {"type": "number"}]}


@extend_schema_field({"type": "object", "required": ["id", "group"], "additionalProperties": _ITEM_VALUE,
                      "description": "id, group and each of the study's item fields (no other key)"})
class ItemField(serializers.DictField):
    def to_internal_value(self, data: Any) -> dict[str, str | int | float]:  # data: any JSON value
        item = super().to_internal_value(data)
        for key, value in item.items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise serializers.ValidationError(f"field {key!r} must be a string or number")
        return item


class ItemsFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV or JSONL, as for import_items (multipart/form-data)")


class ItemsJSONSerializer(serializers.Serializer):
    items = serializers.ListField(child=ItemField(), min_length=1,
                                  max_length=settings.API_ITEMS_PER_REQUEST,
                                  help_text="Items as JSON objects (id, group and the study's item fields)")


class CreatedItemsSerializer(serializers.Serializer):
    created_items = serializers.IntegerField()


class ItemsUploadSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, help_text="CSV or JSONL, as for import_items")
    items = serializers.ListField(child=ItemField(), required=False, min_length=1,
                                  max_length=settings.API_ITEMS_PER_REQUEST,
                                  help_text="Items as JSON objects (id, group and the study's item fields)")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("items" in attrs):
            raise serializers.ValidationError("give exactly one of file and items")
        return attrs


class StudyListView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [SafeJSONParser]  # a spec is JSON: form fields would carry it as a string

    @extend_schema(responses={200: StudySerializer(many=True), **_errors(*AUTH)})
    def get(self, request: Request) -> Response:
        studies = studies_for_researcher(user=request.user).prefetch_related("questions")
        return Response(StudySerializer(studies, many=True).data)

    @extend_schema(request=STUDY_CREATE_SHAPES, responses={201: StudySerializer, **_errors(400, 409, *AUTH)})
    def post(self, request: Request) -> Response:
        form = StudyCreateSerializer(data=request.data)
        if not form.is_valid():
            # A refused spec keeps its one-line {"detail": ...} answer, as from the service itself.
            if set(form.errors) == {"spec"}:
                return Response({"detail": form.errors["spec"][0]}, status=status.HTTP_400_BAD_REQUEST)
            return Response(form.errors, status=status.HTTP_400_BAD_REQUEST)
        data = form.validated_data
        owner = signed_in_user(request.user)
        try:
            if "template" in data:
                study = study_create_from_template(slug=data["slug"], template=data["template"], owner=owner)
            else:
                study = study_create(slug=data["slug"], spec=data["spec"], owner=owner)
        except StudySlugTaken as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except StudySpecError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(StudySerializer(study).data, status=status.HTTP_201_CREATED)


@extend_schema_field(STUDY_SPEC_SCHEMA["properties"]["human_subset"])
class HumanSubsetField(serializers.JSONField):
    """Which items people rate (docs/analysis.md, PPI); ``human_subset_checked`` says the rest."""


class StudySettingsSerializer(KnownKeysOnly):
    human_subset = HumanSubsetField(help_text='{"share": 0.2} or {"count": 300} per group with an optional "seed", '
                                              '{"declared_random": true}, or {} (every item)')


class StudyDetailView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: StudySerializer, **_errors(404, *AUTH)})
    def get(self, request: Request, slug: str) -> Response:
        return Response(StudySerializer(study_for_researcher(user=request.user, slug=slug)).data)

    @extend_schema(request=StudySettingsSerializer, responses={200: StudySerializer, **_errors(400, 404, 409, *AUTH)})
    def patch(self, request: Request, slug: str) -> Response:
        """Change the study's settings: ``human_subset`` (saving one with a share or a count draws the subset);
        409 once people have rated, when the change would redraw it."""
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = StudySettingsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            study_human_subset_set(study=study, setting=form.validated_data["human_subset"])
        except HumanSubsetLocked as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except StudySpecError as exc:
            return Response({"human_subset": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(StudySerializer(study).data)


def _json_items_import(*, study: Study, items: list[dict[str, Any]]) -> ImportResult:
    """JSON items go through the very same validation as a JSONL file. They are capped by count
    (API_ITEMS_PER_REQUEST), not by IMPORT_TASK_THRESHOLD_BYTES, which is a rule for uploaded files."""
    lines = "\n".join(json.dumps(item) for item in items)
    with uploaded_file(SimpleUploadedFile("items.jsonl", lines.encode("utf-8"))) as path:
        return items_import_drawn(study=study, path=path)


class StudyItemsView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request={"multipart/form-data": ItemsFileSerializer, "application/json": ItemsJSONSerializer},
                   responses={201: CreatedItemsSerializer, **_errors(400, 404, 413, *AUTH)})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = ItemsUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data.get("file")
        try:
            if upload is None:
                result = _json_items_import(study=study, items=form.validated_data["items"])
            else:
                # A request imports only what it can finish in the web worker's time: a larger file is refused
                # (413) and named to the study page, whose background import shows its progress.
                result = upload_import(study=study, kind="items", upload=upload, options={},
                                       user=signed_in_user(request.user), background=False)
        except UploadTooLarge as exc:
            return Response({"detail": f"{exc}; nothing was imported"}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except ImportFileError as exc:
            return Response({"detail": f"{exc}; nothing was imported"}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"created_items": result.created_items}, status=status.HTTP_201_CREATED)


class StudyLifecycleView(ThrottledAPIView):
    """POST /api/studies/<slug>/open/ or /close/: the same services as open_study, close_study and the
    study page's buttons; a change that cannot happen (already open, no item, not open) is a 409."""

    permission_classes = [permissions.IsAuthenticated]
    action = "open"  # set per URL in api_urls

    @extend_schema(request=None, responses={200: StudySerializer, **_errors(404, 409, *AUTH)})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        try:
            (study_open if self.action == "open" else study_close)(study=study)
        except LifecycleError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(StudySerializer(study).data)


class InvitationsSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=1, max_value=settings.INVITATIONS_PER_REQUEST, default=1)


class LinksSerializer(serializers.Serializer):
    links = serializers.ListField(child=serializers.URLField())


class StudyInvitationsView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]
    # JSON only: a multipart body that is not a form parsed as no fields, so garbage made one link.
    parser_classes = [SafeJSONParser]

    @extend_schema(request=InvitationsSerializer, responses={201: LinksSerializer, **_errors(400, 404, 409, *AUTH)})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = InvitationsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        count = form.validated_data["count"]
        try:
            raters = invitations_create(study=study, count=count)  # the per-study cap is the service's
        except InvitationLimitError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        base = settings.PUBLIC_BASE_URL
        links = [base + reverse("annotations:rate", args=[rater.token]) for rater in raters]
        return Response({"links": links}, status=status.HTTP_201_CREATED)


class RunStartSerializer(serializers.Serializer):
    judge = serializers.CharField(max_length=200, help_text="the judge's name")


class RunSerializer(serializers.Serializer):
    """A run and its progress (llmjudge.selectors.run_progress): more progress fields may follow."""

    id = serializers.IntegerField()
    study = serializers.SlugField()
    judge = serializers.CharField()


def run_json(run: JudgeRun, viewer: User | AnonymousUser) -> dict[str, Any]:
    """A run's progress; its error as ``viewer`` may read it (a judge server's words only for the judge's owner)."""
    progress = run_progress(run=run, viewer=viewer).as_dict()
    return {"id": run.pk, "study": run.study.slug, "judge": run.judge.name, **progress}


class StudyRunsView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: RunSerializer(many=True), **_errors(404, *AUTH)})
    def get(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug)
        runs = JudgeRun.objects.filter(study=study).select_related("judge", "study").order_by("id")
        return Response([run_json(run, request.user) for run in runs])

    @extend_schema(request=RunStartSerializer, responses={201: RunSerializer, **_errors(400, 404, *AUTH)})
    def post(self, request: Request, slug: str) -> Response:
        study = study_for_researcher(user=request.user, slug=slug, for_change=True)
        form = RunStartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            judge = judge_named(judges=runnable_judges(request.user), name=form.validated_data["judge"],
                                owner=signed_in_user(request.user))
        except AmbiguousJudgeName as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        if judge is None:
            detail = f"no judge {form.validated_data['judge']!r}"
            return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)
        try:
            run = judging.judge_run_start(study=study, judge=judge)
        except judging.RunError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(run_json(run, request.user), status=status.HTTP_201_CREATED)


class RunDetailView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: RunSerializer, **_errors(404, *AUTH)})
    def get(self, request: Request, run_id: int) -> Response:
        return Response(run_json(run_for_researcher(user=request.user, run_id=run_id), request.user))


class RunActionView(ThrottledAPIView):
    """POST /api/runs/<id>/<action>/ with action pause, resume or cancel."""

    permission_classes = [permissions.IsAuthenticated]
    actions = ("pause", "resume", "cancel")

    @extend_schema(request=None, responses={200: RunSerializer, **_errors(404, 409, *AUTH)},
                   parameters=[OpenApiParameter("action", str, OpenApiParameter.PATH, enum=actions)])
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
        return Response(run_json(run, request.user))


class StudyAnalysisView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: dict, **_errors(404, *AUTH)})
    def get(self, request: Request, slug: str) -> Response:
        return Response(analysis_json(study_analysis(study=study_for_researcher(user=request.user, slug=slug))))


class StudyRatingsCSVView(ThrottledAPIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/csv"): str, **_errors(404, *AUTH)})
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        study = study_for_researcher(user=request.user, slug=slug)
        response = StreamingHttpResponse(csv_lines(rating_rows([study])), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-ratings.csv"'
        return response


class StudyDemographicsCSVView(ThrottledAPIView):
    """One row per rater: external ids, the Prolific submission's status, the demographics answers; no token."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={(200, "text/csv"): str, **_errors(404, *AUTH)})
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        study = study_for_researcher(user=request.user, slug=slug)
        response = StreamingHttpResponse(csv_lines(demographic_rows(study)), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-demographics.csv"'
        return response
