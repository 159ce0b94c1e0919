"""The study-access rule in the admin: one base class for every admin of study data (issue 18, finding 2).

Each admin names the path from its model to the study (``study_path``): rows are listed from the studies
the user may see, and changed or deleted only where the user may change the study. Foreign-key menus
(and raw-id inputs, which the form validates against the same queryset) offer only what the user may
change, so nothing can be moved into another researcher's study. Actions run on the selected rows the
user may change, whatever else the list shows (a VIEW_ALL_STUDIES holder reads; they do not act).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.db.models import ForeignKey, Model, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest, HttpResponse

from annotations.models import Assignment, Item, Question, Rater, Study
from annotations.selectors import studies_for_researcher, study_changeable

if TYPE_CHECKING:
    from django.contrib.admin.options import _ListFilterT
    from django.utils.datastructures import _ListOrTuple

# How a foreign key's target reaches its study, for the menus; apps add their own models (llmjudge's runs).
FK_STUDY_PATHS: dict[type[Model], str] = {
    Study: "", Question: "study", Item: "study", Rater: "study", Assignment: "rater__study",
}


ModelT = TypeVar("ModelT", bound=Model)


# Credentials: whoever holds one rates (a rater's link token, a study's open link) or claims a payment (a
# completion code). The admin never filters or searches on them, for anyone: a filter such as
# ``token__startswith=`` answered yes or no and gave a whole token away in about a thousand requests
# (issue 23, finding 1). Lists and change pages show them only to those who may change the study.
CREDENTIAL_FIELDS = frozenset({"token", "open_token", "completion_code"})


def names_a_credential(lookup: str) -> bool:
    return any(part in CREDENTIAL_FIELDS for part in lookup.split("__"))


def _within(queryset: QuerySet[ModelT], path: str, studies: QuerySet[Study]) -> QuerySet[ModelT]:
    return queryset.filter(pk__in=studies.values("pk")) if not path else queryset.filter(**{f"{path}__in": studies})


def study_of(obj: Model, path: str) -> Study | None:
    for part in filter(None, path.split("__")):
        obj = getattr(obj, part)
        if obj is None:
            return None
    return obj if isinstance(obj, Study) else None


class StudyScopedAdmin(admin.ModelAdmin):
    study_path = "study"  # "" for the Study admin itself

    def get_queryset(self, request: HttpRequest) -> QuerySet[Model]:
        return _within(super().get_queryset(request), self.study_path, studies_for_researcher(user=request.user))

    def _may_change(self, request: HttpRequest, obj: Model | None) -> bool:
        return obj is None or study_changeable(user=request.user, study=study_of(obj, self.study_path))

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_change_permission(request, obj) and self._may_change(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_change(request, obj)

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Model] | None:
        path = FK_STUDY_PATHS.get(db_field.related_model)
        if path is not None:
            kwargs["queryset"] = _within(
                db_field.related_model._default_manager.all(), path,
                studies_for_researcher(user=request.user, for_change=True),
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        return not names_a_credential(lookup) and super().lookup_allowed(lookup, value, request)

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        return [f for f in super().get_search_fields(request) if not names_a_credential(f.lstrip("^=@"))]

    def get_list_filter(self, request: HttpRequest) -> list[_ListFilterT]:
        # A relation's filter lists every row of the related table (every study's slug, every judge's
        # name) unless it is limited to the values the list itself holds.
        filters: list[_ListFilterT] = []
        for entry in super().get_list_filter(request):
            if isinstance(entry, str) and get_fields_from_path(self.model, entry)[-1].is_relation:
                entry = (entry, admin.RelatedOnlyFieldListFilter)
            filters.append(entry)
        return filters

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> _ListOrTuple[str]:
        # Only a superuser gives a row to someone else.
        fields = list(super().get_readonly_fields(request, obj))
        owned = any(f.name == "owner" for f in self.model._meta.fields)
        return fields + ["owner"] if owned and not request.user.is_superuser else fields

    # django-stubs 6.1 gives response_action Django 6's action_location parameter even on Python 3.11, where
    # only Django 5.x runs (its other action methods are split by version); Django 5.2 has no such parameter.
    def response_action(  # type: ignore[override]
        self, request: HttpRequest, queryset: QuerySet[Model]
    ) -> HttpResponse | None:
        changeable = studies_for_researcher(user=request.user, for_change=True)
        return super().response_action(request, _within(queryset, self.study_path, changeable))
