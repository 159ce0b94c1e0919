"""Number formatting for the dashboard: undefined values show as a dash, p-values as the paper writes them."""
from __future__ import annotations

from django import template

from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.text_report import p_text, stars

register = template.Library()


@register.filter
def num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{int(digits)}f}"


@register.filter
def ptext(value: float | None) -> str:
    return p_text(value)


register.filter("stars", stars)  # *** below 0.001, ** below 0.01, * below 0.05


@register.filter
def group_title(group: str) -> str:
    """How a title names a group: never bare, since a group may share a word with a pool ("human")."""
    return "all groups" if group == ALL_GROUPS else f"group “{group}”"


@register.filter
def band_class(band: str) -> str:
    return "band-" + band.replace(" ", "-")


# What a reader sees of a note's key: the statistic's name, never the JSON key ("icc1k", "alpha_ci95").
NOTE_NAMES = {
    "mean": "mean", "std": "standard deviation", "alpha": "α", "alpha_ci95": "α 95% CI",
    "full_agreement_pct": "full agreement", "icc": "ICC", "icc1": "ICC(1)", "icc1k": "ICC(1,k)", "tau": "τ",
    "mean_tau": "mean pairwise τ", "kappa": "κ", "ci95": "95% CI", "p": "p", "t": "t", "df": "degrees of freedom",
    "mean_diff": "mean difference", "cohens_d": "Cohen's d", "agreement_pct": "agreement",
}


# A score's name in words, never its key (issue 25 review: "scoring neg_rmse" in the verdict's heading).
SCORING_WORDS = {
    "neg_rmse": "negative RMSE against the other raters (higher = closer; 0 = identical)",
    "accuracy": "accuracy against the other raters (the share who gave the same label; higher = closer)",
}


@register.filter
def scoring_words(scoring: str | None) -> str:
    return SCORING_WORDS.get(scoring or "", scoring or "")


def note_name(key: str) -> str:
    """The name of a note's statistic: ``alpha.ordinal`` reads "α (ordinal)"."""
    if key.startswith("alpha."):
        return f"α ({key.removeprefix('alpha.')})"
    return NOTE_NAMES.get(key, key.replace("_", " "))


@register.filter
def notes_text(notes: dict[str, str] | None) -> str:
    return "; ".join(f"{note_name(k)}: {v}" for k, v in (notes or {}).items())


@register.filter
def short_note(note: str | None) -> str:
    """What a cell shows in place of a number it should not claim: the note up to its colon
    ("too few items (n = 2)", "no variation"); the whole note goes in the cell's tooltip."""
    return (note or "").split(":")[0]
