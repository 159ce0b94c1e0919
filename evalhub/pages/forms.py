"""Forms of the study's home page, of "New study" and of the dashboard's epsilon: they check what a form can
check, for good messages next to the field; the services (study_create, the imports, study_alt_epsilon_set)
check everything again."""
from __future__ import annotations

import json
import math
from typing import Any

from django import forms

from annotations.forms import form_field
from annotations.models import Study
from annotations.studies import protocol_templates

# A study specification is a few kilobytes; anything much larger is not one.
SPEC_MAX_BYTES = 1024 * 1024


def template_choices() -> list[tuple[str, str]]:
    return [("", "— choose a template —")] + [
        (slug, f"{entry.get('title', slug)} ({slug})") for slug, entry in sorted(protocol_templates().items())
    ]


class StudyNewForm(forms.Form):
    slug = forms.SlugField(max_length=100, help_text="Letters, digits, - and _; it names the study in every URL.")
    template = forms.ChoiceField(required=False, label="From a protocol template")
    file = forms.FileField(required=False, label="Or from a JSON file",
                           help_text="One object shaped like an entry of the protocol file (create_study --file).")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        form_field(self, "template", forms.ChoiceField).choices = template_choices()

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise forms.ValidationError(f"a study with slug {slug!r} already exists")
        return slug

    def clean_file(self) -> dict[str, Any] | None:
        upload = self.cleaned_data.get("file")
        if upload is None:
            return None
        if upload.size > SPEC_MAX_BYTES:
            raise forms.ValidationError(f"the file is {upload.size} bytes; a study specification is under 1 MB")
        try:
            spec = json.loads(upload.read().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise forms.ValidationError(f"not a UTF-8 file: {exc}") from None
        except RecursionError:
            raise forms.ValidationError("not a usable JSON file: it is nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not a JSON file: {exc}") from None
        except ValueError as exc:
            # JSONDecodeError, and a number longer than Python reads (4,300 digits): a 400, as the API answers,
            # never a 500 (issue 23, finding 7).
            raise forms.ValidationError(f"not a usable JSON file: {str(exc)[:200]}") from None
        if not isinstance(spec, dict):
            raise forms.ValidationError("the file must hold one JSON object (one study), not a list or a value")
        return spec

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns; its stub allows None for forms that return nothing
        if "file" in self.errors:
            return data
        if bool(data.get("template")) == bool(data.get("file")):
            self.add_error("template", "choose a template or upload a JSON file (one of the two)")
        return data


class EpsilonForm(forms.Form):
    """The alternative annotator test's epsilon of a study (the dashboard's verdict)."""

    epsilon = forms.FloatField(label="ε")

    def clean_epsilon(self) -> float:
        value = self.cleaned_data["epsilon"]
        if not (math.isfinite(value) and 0.0 < value < 1.0):
            raise forms.ValidationError(f"ε must be strictly between 0 and 1, got {value}")
        return float(value)


class HumanSubsetForm(forms.Form):
    """The study setting ``human_subset`` as JSON (docs/analysis.md, PPI); the service checks it again."""

    human_subset = forms.CharField(
        required=False, max_length=200, label="People rate",
        help_text='{"share": 0.2} or {"count": 300} per group, optional "seed"; {"declared_random": true}; '
                  "empty: every item.")

    def clean_human_subset(self) -> object:
        text = self.cleaned_data["human_subset"].strip()
        if not text:
            return {}
        try:
            return json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"not JSON: {str(exc)[:200]}") from None


class BudgetForm(forms.Form):
    """The human budget planner's target width, and optionally a stated judge-human correlation."""

    width = forms.FloatField(label="Interval width", help_text="of the group difference's 95 % interval, in scale "
                                                                "points")
    rho = forms.FloatField(required=False, label="Judge-human correlation", help_text="empty: the pilot's")

    def clean_width(self) -> float:
        value = self.cleaned_data["width"]
        if not (math.isfinite(value) and value > 0):
            raise forms.ValidationError(f"the width must be a positive number, got {value}")
        return float(value)

    def clean_rho(self) -> float | None:
        value = self.cleaned_data.get("rho")
        if value is not None and not (math.isfinite(value) and -1.0 <= value <= 1.0):
            raise forms.ValidationError(f"the correlation must be between -1 and 1, got {value}")
        return value
