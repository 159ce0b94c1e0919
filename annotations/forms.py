"""Forms of the rater pages, the researcher's invitation form and the import uploads.

They repeat the database's rules only to give raters a readable message; the services and the
constraints decide.
"""
from __future__ import annotations

from typing import Any, TypeVar

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import pluralize

from annotations.importing.services import ImportResult
from annotations.models import MetaAnswer, Question, Study

# An answer time above a day is a tab left open, not a measurement.
_MAX_ELAPSED_MS = 24 * 3600 * 1000

FieldT = TypeVar("FieldT", bound=forms.Field)


def form_field(form: forms.BaseForm, name: str, kind: type[FieldT]) -> FieldT:
    """The form's own copy of a declared field, as the class it was declared with: what a form's __init__ sets
    choices or a queryset on. ``form.fields`` holds plain Fields as far as a type checker knows."""
    field = form.fields[name]
    if not isinstance(field, kind):
        raise TypeError(f"field {name!r} is a {type(field).__name__}, not a {kind.__name__}")
    return field


class _BrowserTime(forms.IntegerField):
    """The page script's measure of the time on the page.

    A value the script cannot have sent (tampered, negative, over a day) is dropped, and the server's own
    measure used: refusing the page would show the rater an error about a hidden field they cannot fix.
    """

    def clean(self, value: Any) -> int | None:
        try:
            return super().clean(value)
        except forms.ValidationError:
            return None


class _PageForm(forms.Form):
    page = forms.CharField(widget=forms.HiddenInput)
    elapsed_ms = _BrowserTime(required=False, min_value=0, max_value=_MAX_ELAPSED_MS, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")  # labels are questions; a colon after "Where do you live?" reads oddly
        super().__init__(*args, **kwargs)


def _scale_choices(study: Study) -> list[tuple[int, str]]:
    return [(value, study.label_for(value)) for value in study.scale_points()]


SCALE_ROW_MAX_POINTS = 7  # up to 7 points fit one row on a 390 px phone
SCALE_SHORT_LABEL = 4  # labels up to this many characters ("10", "tie") fit a seventh of a phone's width


class ScaleField(forms.TypedChoiceField):
    """A scale's radio group, with how it reads in order on every screen (issue 25; _layout.html's .scale):
    ``row`` (short labels: one row everywhere), ``words`` (one row on wide screens, a vertical list on a phone,
    where worded points would not fit one row) or ``vertical`` (more than 7 points: a vertical list)."""

    @property
    def layout(self) -> str:
        choices = list(self.widget.choices)  # the normalised (value, label) pairs
        if len(choices) > SCALE_ROW_MAX_POINTS:
            return "vertical"
        return "row" if all(len(str(label)) <= SCALE_SHORT_LABEL for _, label in choices) else "words"


class LikertForm(_PageForm):
    """One page of an item: a required Likert radio group per question, an optional comment on the last page."""

    comment = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2}), label="Comment (optional)"
    )

    def __init__(self, *args: Any, study: Study, questions: list[Question], with_comment: bool, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.questions = questions
        if not with_comment:
            del self.fields["comment"]
        for question in questions:
            self.fields[f"q_{question.key}"] = ScaleField(
                choices=_scale_choices(study),
                coerce=int,
                widget=forms.RadioSelect,
                label=question.text,
                error_messages={"required": "Please choose an answer to this question."},
            )

    def scores(self) -> dict[str, int]:
        return {q.key: self.cleaned_data[f"q_{q.key}"] for q in self.questions}


class AttentionForm(_PageForm):
    def __init__(self, *args: Any, study: Study, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["answer"] = ScaleField(
            choices=_scale_choices(study),
            coerce=int,
            widget=forms.RadioSelect,
            error_messages={"required": "Please choose an answer."},
        )


class MetaForm(_PageForm):
    verdict = forms.ChoiceField(
        choices=MetaAnswer.Verdict.choices,
        widget=forms.RadioSelect,
        label="Do you agree with their rating and explanation?",
        error_messages={"required": "Please choose an answer."},
    )
    comment = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}), label="Why? (comment)"
    )


class ConsentForm(_PageForm):
    agree = forms.BooleanField(
        label="I have read the information above and agree to take part.",
        error_messages={"required": "Please tick the box to continue, or close this page."},
    )


class StartForm(_PageForm):
    """An open-link rater's Start button: the page key alone."""


_PREFER_NOT = ("prefer-not", "Prefer not to say")
_CHOOSE = ("", "Choose…")  # no preselected answer: a rater who just clicks Continue must not become "18-24"


class DemographicsForm(_PageForm):
    """Kept short and optional in substance: every question offers "prefer not to say"."""

    age_band = forms.ChoiceField(
        label="Age",
        choices=[_CHOOSE, ("18-24", "18-24"), ("25-34", "25-34"), ("35-44", "35-44"), ("45-54", "45-54"),
                 ("55-64", "55-64"), ("65+", "65 or older"), _PREFER_NOT],
    )
    gender = forms.ChoiceField(
        choices=[_CHOOSE, ("woman", "Woman"), ("man", "Man"), ("non-binary", "Non-binary"), ("self-described", "Other"),
                 _PREFER_NOT],
    )
    region = forms.ChoiceField(
        label="Where do you live?",
        choices=[_CHOOSE, ("africa", "Africa"), ("asia", "Asia"), ("europe", "Europe"),
                 ("latin-america", "Latin America and the Caribbean"), ("north-america", "North America"),
                 ("oceania", "Oceania"), _PREFER_NOT],
    )
    education = forms.ChoiceField(
        label="Highest completed education",
        choices=[_CHOOSE, ("secondary", "Secondary school or less"), ("vocational", "Vocational training"),
                 ("bachelor", "Bachelor's degree"), ("master", "Master's degree"), ("doctorate", "Doctorate"),
                 _PREFER_NOT],
    )
    native_language = forms.CharField(label="Native language(s)", max_length=100, required=False)

    def answers(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in ("age_band", "gender", "region", "education",
                                                            "native_language")}


class InviteForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=1000, initial=10, label="Number of invitation links")


class UploadForm(forms.Form):
    """A file for one of the imports (the admin's and the study page's upload forms)."""

    file = forms.FileField(help_text="CSV (with a header row) or JSONL, UTF-8.")

    def clean_file(self) -> UploadedFile:
        # Refused before it is copied for the import, with the import's own message for a file too large.
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise forms.ValidationError(
                f"the file is {upload.size} bytes, above the limit of {settings.IMPORT_MAX_BYTES} bytes")
        return upload

    def import_options(self) -> dict[str, bool]:
        """The import service's keyword flags: every field but the file (the demographics' ``replace``)."""
        return {name: value for name, value in self.cleaned_data.items() if name != "file"}


class DemographicsUploadForm(UploadForm):
    replace = forms.BooleanField(required=False, label="Replace demographics raters already have")


# The upload form of each import (ImportJob.Kind), shared by the study page and the admin.
UPLOAD_FORMS: dict[str, type[UploadForm]] = {"items": UploadForm, "ratings": UploadForm,
                                             "demographics": DemographicsUploadForm}


def import_summary(what: str, result: ImportResult) -> str:
    """What an import did, in one line for the page that started it."""
    if what == "demographics":
        return (f"Set the demographics of {result.updated_raters} rater{pluralize(result.updated_raters)} "
                f"({result.unchanged_raters} already had exactly these).")
    items, ratings = result.created_items, result.created_ratings
    return f"Imported {items} item{pluralize(items)} and {ratings} rating{pluralize(ratings)}."
