"""Forms of the study's home page, of "New study" and of the dashboard's epsilon: they check what a form can
check, for good messages next to the field; the services (study_create, the imports, study_alt_epsilon_set)
check everything again."""
from __future__ import annotations

import json
import math
import re
from typing import Any

from django import forms

from annotations.forms import form_field
from annotations.lifecycle import (
    CHANGEABLE_ONCE_OPEN,
    LOCKED_ONCE_OPEN,
    META_STUDY_REASON,
    SETTINGS_SPEC_KEYS,
    study_settings_of,
)
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

    gold_items = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Gold items",
                                 help_text='Items with known answers, which every rater rates and the analysis leaves '
                                           'out: {"item id": {"question key": answer}}, e.g. {"h1": {"grammaticality": '
                                           '1}}. Empty: none.')
    human_subset = forms.CharField(
        required=False, max_length=200, label="People rate",
        help_text='A setting in JSON, one of: {"share": 0.2}, a random 20 % of each group\'s items; {"count": 300}, a '
                  'random 300 of each group\'s items (either with "seed": 7 to fix the draw); {"declared_random": '
                  "true}, the items people rated were drawn at random elsewhere. Empty: people rate every item.")

    def clean_human_subset(self) -> object:
        return subset_from_text(self.cleaned_data["human_subset"])


def subset_from_text(text: str) -> object:
    """A JSON setting's text (human_subset, gold items; empty: {}); the service checks what it holds."""
    if not text.strip():
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


YES_NO = [("no", "No"), ("yes", "Yes")]


class StudySettingsForm(forms.Form):
    """Every study setting (issue 26, 1), as text a person types; annotations.studies.study_settings_set checks
    them all again with the spec's own rules. A setting the browser does not send keeps the study's value (a
    locked field is shown disabled, and browsers do not send disabled fields)."""

    title = forms.CharField(max_length=200)
    human_instruction = forms.CharField(label="Instruction", widget=forms.Textarea(attrs={"rows": 3}),
                                        help_text="Raters read it at the top of every page; its first line is the "
                                                  "page's heading.")
    consent_text = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}), label="Consent text",
                                   help_text="If set, raters must agree to it before rating.")
    ask_demographics = forms.ChoiceField(choices=YES_NO, label="Ask demographics",
                                         help_text="Age band, gender, region, education, native language, each with "
                                                   "“prefer not to say”, before the first item.")
    raters_per_item = forms.IntegerField(label="Raters per item")
    items_per_rater = forms.IntegerField(required=False, label="Items per rater",
                                         help_text="Empty: as many as still need raters.")
    ordering = forms.ChoiceField(choices=Study.Ordering.choices)
    attention_positions = forms.CharField(required=False, label="Attention checks after item",
                                          help_text="e.g. 5, 20: a check after the rater's 5th and 20th item.")
    attention_rule = forms.ChoiceField(choices=Study.AttentionRule.choices, label="A failed check")
    groups = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="The item groups your items file names, in the order a blocked study shows "
                                       "them; one per line or separated by commas.")
    contrasts = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                help_text="Group pairs to compare, one per line: “a vs b”. Empty: every pair.")
    pair_order = forms.ChoiceField(choices=Study.PairOrder.choices, label="Pair order")
    completion_redirect_url = forms.CharField(required=False, max_length=500, label="Completion redirect",
                                              help_text="Finished raters are sent here; {code} is replaced by their "
                                                        "completion code (e.g. a panel's completion URL).")
    gold_items = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Gold items",
                                 help_text='Items with known answers, which every rater rates and the analysis leaves '
                                           'out: {"item id": {"question key": answer}}, e.g. {"h1": {"grammaticality": '
                                           '1}}. Empty: none.')
    human_subset = forms.CharField(required=False, max_length=200, label="People rate",
                                   help_text=HumanSubsetForm.base_fields["human_subset"].help_text)

    def __init__(self, data: Any = None, *, study: Study) -> None:
        initial = settings_initial(study)
        if data is not None:  # what the browser did not send keeps the study's value
            data = {**initial, **{key: data[key] for key in data}}
        super().__init__(data, initial=initial, auto_id="settings_%s")  # ids apart from the subset panel's
        if not study.is_pairwise:
            del self.fields["pair_order"]
        if study.kind == Study.Kind.META:
            for name in set(SETTINGS_SPEC_KEYS) & set(self.fields):
                self.fields[name].widget.attrs["disabled"] = True
                self.fields[name].help_text = f"Fixed: {META_STUDY_REASON}."
        self.locked = study.status != Study.Status.DRAFT
        if self.locked:  # the form says what may still change, and why; the service refuses the rest
            for name, field in self.fields.items():
                if study.kind == Study.Kind.META and name in SETTINGS_SPEC_KEYS:
                    continue
                if name in LOCKED_ONCE_OPEN:
                    field.widget.attrs["disabled"] = True
                    field.help_text = f"Fixed while the study is {study.status}: {LOCKED_ONCE_OPEN[name]}."
                else:
                    field.help_text = f"{field.help_text} May still change: {CHANGEABLE_ONCE_OPEN[name]}.".strip()

    def clean_ask_demographics(self) -> bool:
        return self.cleaned_data["ask_demographics"] == "yes"

    def clean_attention_positions(self) -> list[int]:
        words = [w for w in re.split(r"[,\s]+", self.cleaned_data["attention_positions"]) if w]
        if not all(w.isdigit() for w in words):
            raise forms.ValidationError("whole numbers of rated items, separated by commas, e.g. 5, 20")
        return [int(w) for w in words]

    def clean_groups(self) -> list[str]:
        return [g.strip() for g in re.split(r"[,\n]", self.cleaned_data["groups"]) if g.strip()]

    def clean_contrasts(self) -> list[list[str]]:
        pairs = []
        for line in self.cleaned_data["contrasts"].splitlines():
            if line.strip():
                pair = [g.strip() for g in re.split(r"\s+vs\.?\s+", line.strip())]
                if len(pair) != 2 or not all(pair):
                    raise forms.ValidationError(f"{line.strip()!r}: write a pair as “a vs b”")
                pairs.append(pair)
        return pairs

    def clean_gold_items(self) -> object:
        return subset_from_text(self.cleaned_data["gold_items"])

    def clean_human_subset(self) -> object:
        return subset_from_text(self.cleaned_data["human_subset"])


def settings_initial(study: Study) -> dict[str, str]:
    """The form's text for the study's settings (the inverse of the form's clean_* methods)."""
    values = study_settings_of(study)
    return {
        **{key: str(values[key]) for key in ("title", "human_instruction", "consent_text", "ordering",
                                              "attention_rule", "pair_order", "completion_redirect_url",
                                              "raters_per_item")},
        "ask_demographics": "yes" if values["ask_demographics"] else "no",
        "items_per_rater": "" if values["items_per_rater"] is None else str(values["items_per_rater"]),
        "attention_positions": ", ".join(str(p) for p in values["attention_positions"]),
        "groups": "\n".join(values["groups"]),
        "contrasts": "\n".join(" vs ".join(pair) for pair in values["contrasts"]),
        "human_subset": json.dumps(values["human_subset"]) if values["human_subset"] else "",
        "gold_items": json.dumps(values["gold_items"]) if values["gold_items"] else "",
    }
