from __future__ import annotations

from django import forms
from django.db.models import Q, QuerySet

from llmjudge.backends import BACKENDS
from llmjudge.judging import PAPER_TEMPERATURES, PAPER_VARIANTS
from llmjudge.kinds.persona.prompts import METHODS as PERSONA_METHODS
from llmjudge.models import Judge


def runnable_judges(user) -> QuerySet[Judge]:  # noqa: ANN001
    """Judges a user may run, with a callable backend: their own and shared ones; a superuser, all.

    Staff get no more than a researcher: a judge carries its owner's key variable and address, so
    running another's judge spends their key. An unowned judge that is not shared runs for nobody else.
    """
    judges = Judge.objects.filter(backend__in=list(BACKENDS))
    return judges if user.is_superuser else judges.filter(Q(owner=user) | Q(shared=True))


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    # Per-rater judges (personalized, persona): the split, for this run only (blank: the judge's own).
    profile_size = forms.IntegerField(required=False, min_value=1, label="Profile size k (personalized)")
    training_examples = forms.IntegerField(required=False, min_value=1, label="Training examples (persona)")
    held_out = forms.IntegerField(required=False, min_value=1, label="Held-out items per rater")
    split_seed = forms.IntegerField(required=False, min_value=0, label="Split seed")
    method = forms.ChoiceField(
        required=False, label="Persona method", choices=[("", "judge's own")] + [(m, m) for m in PERSONA_METHODS]
    )

    KIND_FIELDS = {
        "personalized": ("profile_size", "held_out", "split_seed"),
        "persona": ("training_examples", "held_out", "split_seed", "method"),
    }

    def kind_options(self) -> dict:
        """The options given for the chosen judge's kind; fields of other kinds are ignored."""
        kind = self.cleaned_data["judge"].kind
        return {
            name: self.cleaned_data[name]
            for name in self.KIND_FIELDS.get(kind, ())
            if self.cleaned_data.get(name) not in (None, "")
        }

    def __init__(self, *args, user, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = runnable_judges(user)


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

    def __init__(self, *args, user, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.fields["judges"].queryset = runnable_judges(user)


class AblationForm(forms.Form):
    """A persona judge run once per CINEMETRIC method on one split (the paper's tables 1-2)."""

    judge = forms.ModelChoiceField(queryset=Judge.objects.none(), label="Persona judge")
    methods = forms.MultipleChoiceField(
        choices=[(m, m) for m in PERSONA_METHODS], initial=list(PERSONA_METHODS), widget=forms.CheckboxSelectMultiple
    )
    training_examples = forms.IntegerField(required=False, min_value=1, label="Training examples")
    held_out = forms.IntegerField(required=False, min_value=1, label="Held-out items per rater")
    split_seed = forms.IntegerField(required=False, min_value=0, label="Split seed")

    def split_options(self) -> dict:
        return {
            name: self.cleaned_data[name]
            for name in ("training_examples", "held_out", "split_seed")
            if self.cleaned_data.get(name) is not None
        }

    def __init__(self, *args, user, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = runnable_judges(user).filter(kind=Judge.Kind.PERSONA)
