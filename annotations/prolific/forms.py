"""The Prolific page's forms. They repeat the services' rules only for readable messages; the services decide."""
from __future__ import annotations

from typing import Any

from django import forms

from annotations.forms import form_field
from annotations.prolific.records import REJECTION_CATEGORIES, REJECTION_MESSAGE_MIN_LENGTH


class PublishForm(forms.Form):
    token_env = forms.ChoiceField(label="Prolific token (environment variable)")
    reward_cents = forms.IntegerField(min_value=1, max_value=100_000, initial=150, label="Reward (cents)")
    minutes = forms.IntegerField(min_value=1, max_value=600, initial=10, label="Estimated minutes")

    def __init__(self, *args: Any, token_variables: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        form_field(self, "token_env", forms.ChoiceField).choices = [(name, name) for name in token_variables]


class RejectForm(forms.Form):
    submission_id = forms.CharField(max_length=64, widget=forms.HiddenInput)
    category = forms.ChoiceField(choices=[(c, c.replace("_", " ").lower()) for c in REJECTION_CATEGORIES],
                                 initial="FAILED_CHECK")
    message = forms.CharField(min_length=REJECTION_MESSAGE_MIN_LENGTH, max_length=2000,
                              widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
                              help_text=f"Shown to the participant; {REJECTION_MESSAGE_MIN_LENGTH} characters or more.")


class BonusForm(forms.Form):
    submission_id = forms.CharField(max_length=64, widget=forms.HiddenInput)
    amount_cents = forms.IntegerField(min_value=1, max_value=100_000, label="Bonus (cents)")
    key = forms.SlugField(max_length=100, label="Bonus key",
                          help_text="Paying again under the same key never pays twice.")
