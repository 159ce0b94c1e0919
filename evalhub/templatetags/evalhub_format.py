"""Number formatting for the dashboard: undefined values show as a dash, p-values as the paper writes them."""
from __future__ import annotations

from django import template

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
def band_class(band: str) -> str:
    return "band-" + band.replace(" ", "-")


@register.filter
def notes_text(notes: dict[str, str] | None) -> str:
    return "; ".join(f"{k}: {v}" for k, v in (notes or {}).items())


@register.filter
def short_note(note: str | None) -> str:
    """What a cell shows in place of a number it should not claim: the note up to its colon
    ("too few items (n = 2)", "no variation"); the whole note goes in the cell's tooltip."""
    return (note or "").split(":")[0]
