from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.db.models import Q, QuerySet

from annotations.forms import form_field
from llmjudge.backends.registry import BACKENDS
from llmjudge.kinds import kind_names
from llmjudge.kinds.persona.prompts import METHODS as PERSONA_METHODS
from llmjudge.models import Judge, LLMRating
from llmjudge.runs.lifecycle import PAPER_TEMPERATURES, PAPER_VARIANTS
from llmjudge.runs.review import ReadingError, reading_checked
from llmjudge.services import JudgeSpec

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def runnable_judges(user: User | AnonymousUser) -> QuerySet[Judge]:
    """Judges a user may run, with a callable backend: their own and shared ones; a superuser, all.

    Staff get no more than a researcher: a judge carries its owner's key variable and address, so
    running another's judge spends their key. An unowned judge that is not shared runs for nobody else.
    """
    judges = Judge.objects.filter(backend__in=list(BACKENDS))
    return judges if user.is_superuser else judges.filter(Q(owner=user) | Q(shared=True))


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none(), error_messages={"required": "Choose a judge to run."})
    # Per-rater judges (personalized, persona): the split, for this run only (blank: the judge's own).
    profile_size = forms.IntegerField(required=False, min_value=1, label="Profile size k (personalized)")
    training_examples = forms.IntegerField(required=False, min_value=1, label="Training examples (persona)")
    held_out = forms.IntegerField(required=False, min_value=1, label="Held-out items per rater")
    split_seed = forms.IntegerField(required=False, min_value=0, label="Split seed")
    method = forms.ChoiceField(
        required=False, label="Persona method", choices=[("", "judge's own")] + [(m, m) for m in PERSONA_METHODS]
    )

    # Pairwise studies, plain judges: the share of items asked again with A and B swapped (position bias).
    swap_share = forms.FloatField(required=False, min_value=0, max_value=1,
                                  label="Swap share (pairwise: items re-asked with A and B swapped, 0-1)")

    KIND_FIELDS = {
        "personalized": ("profile_size", "held_out", "split_seed"),
        "persona": ("training_examples", "held_out", "split_seed", "method"),
    }

    def kind_options(self) -> dict[str, int | str]:
        """The options given for the chosen judge's kind; fields of other kinds are ignored."""
        kind = self.cleaned_data["judge"].kind
        return {
            name: self.cleaned_data[name]
            for name in self.KIND_FIELDS.get(kind, ())
            if self.cleaned_data.get(name) not in (None, "")
        }

    def overrides(self) -> dict[str, float]:
        """The run's own settings: the swap share when one is given."""
        share = self.cleaned_data.get("swap_share")
        return {"swap_share": share} if share else {}

    def __init__(self, *args: Any, user: User | AnonymousUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        judges = runnable_judges(user)
        judge = form_field(self, "judge", forms.ModelChoiceField)
        judge.queryset = judges
        only = list(judges[:2])
        if len(only) == 1:  # one judge: nothing to choose, so it is chosen
            judge.initial = only[0].pk


class ExperimentForm(forms.Form):
    judges = forms.ModelMultipleChoiceField(queryset=Judge.objects.none(), widget=forms.CheckboxSelectMultiple)
    temperatures = forms.TypedMultipleChoiceField(
        choices=[(str(t), f"{t:g}") for t in PAPER_TEMPERATURES],
        coerce=float,
        initial=[str(t) for t in PAPER_TEMPERATURES],
        widget=forms.CheckboxSelectMultiple,
    )
    variants = forms.MultipleChoiceField(
        choices=[(v, v) for v in PAPER_VARIANTS], initial=list(PAPER_VARIANTS), widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, user: User | AnonymousUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        form_field(self, "judges", forms.ModelMultipleChoiceField).queryset = runnable_judges(user)


class AblationForm(forms.Form):
    """A persona judge run once per CINEMETRIC method on one split (the paper's tables 1-2)."""

    judge = forms.ModelChoiceField(queryset=Judge.objects.none(), label="Persona judge")
    methods = forms.MultipleChoiceField(
        choices=[(m, m) for m in PERSONA_METHODS], initial=list(PERSONA_METHODS), widget=forms.CheckboxSelectMultiple
    )
    training_examples = forms.IntegerField(required=False, min_value=1, label="Training examples")
    held_out = forms.IntegerField(required=False, min_value=1, label="Held-out items per rater")
    split_seed = forms.IntegerField(required=False, min_value=0, label="Split seed")

    def split_options(self) -> dict[str, int]:
        return {
            name: self.cleaned_data[name]
            for name in ("training_examples", "held_out", "split_seed")
            if self.cleaned_data.get(name) is not None
        }

    def __init__(self, *args: Any, user: User | AnonymousUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        persona_judges = runnable_judges(user).filter(kind=Judge.Kind.PERSONA)
        form_field(self, "judge", forms.ModelChoiceField).queryset = persona_judges


def _field_of(message: str) -> str | None:
    """The form field a JudgeSpecError message is about: it starts with the command's flag or the
    model field's name (the messages of judge_specs and of the model's validators)."""
    for name in JudgeCreateForm.base_fields:
        if message.startswith((f"--{name.replace('_', '-')} ", f"{name}: ")):
            return name
    return "name" if message.startswith("a judge named") else None


class JudgeCreateForm(forms.Form):
    """A judge from the web UI. Only the *name* of the environment variable that holds the key is asked
    for: the key itself never reaches the database. Every check is judge_specs.judge_create's."""

    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(initial="plain", help_text="roleplay (DRPE) de-duplicates the roles it generates with "
                             "a sentence embedder of the gpu extra: the server needs `make install-gpu` "
                             "(docs/judge-kinds.md)")
    backend = forms.ChoiceField(initial="fake", help_text="fake: the offline demo judge, no key needed")
    model = forms.CharField(required=False, max_length=200, help_text="e.g. gpt-4o-mini; blank for the fake backend")
    base_url = forms.CharField(required=False, max_length=500, label="Base URL",
                               help_text="openai-compatible servers only, e.g. http://localhost:8000/v1")
    api_key_env = forms.CharField(required=False, max_length=100, label="Key variable",
                                  help_text="The NAME of the environment variable holding the key (e.g. "
                                            "OPENAI_API_KEY), never the key itself")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        form_field(self, "kind", forms.ChoiceField).choices = [(k, k) for k in kind_names()]
        form_field(self, "backend", forms.ChoiceField).choices = [(b, b) for b in BACKENDS]

    def spec(self) -> JudgeSpec:
        """The judge_create settings; blank optional fields are left to the service's defaults."""
        data = self.cleaned_data
        spec = JudgeSpec(kind=data["kind"], backend=data["backend"])
        if data["model"]:
            spec["model"] = data["model"]
        if data["base_url"]:
            spec["base_url"] = data["base_url"]
        if data["api_key_env"]:
            spec["api_key_env"] = data["api_key_env"]
        return spec

    def add_spec_error(self, message: str) -> None:
        self.add_error(_field_of(message), message)


class ReadingForm(forms.Form):
    """The score a person reads in an unparseable answer. The scale is checked here for the message and again by
    the service (llmjudge.runs.review.reading_checked), which is what decides."""

    score = forms.FloatField(label="Score you read")

    def __init__(self, *args: Any, rating: LLMRating, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rating = rating

    def clean_score(self) -> float:
        try:
            return reading_checked(rating=self.rating, score=self.cleaned_data["score"])
        except ReadingError as exc:
            raise forms.ValidationError(str(exc)) from None
