"""Number formatting for the dashboard: undefined values show as a dash, p-values as the paper writes them."""
from __future__ import annotations

from collections.abc import Mapping

from django import template
from django.utils.html import format_html

from evalhub.analysis.planning.alt_test_plan import chance_error
from evalhub.analysis.reading import ALL_GROUPS
from evalhub.analysis.text_report import fmt, p_text, p_with_method, scoring_words, stars
from evalhub.analysis.trust_notes import (
    FEW_FOR_INTERVAL,
    POOLED_MARK,
    group_title,
    interval_note,
    no_ci_text,
    note_name,
    p_adjusted_note,
    short_note,
    shown_notes,
    value_note,
)

register = template.Library()


@register.filter
def num(value: float | None, digits: int = 2) -> str:
    return fmt(value, int(digits))  # the text report's: "–" when undefined, never "-0.00"


@register.filter
def ptext(value: float | None) -> str:
    return p_text(value)


@register.filter
def ptext_method(value: float | None, method: str | None) -> str:
    return p_with_method(value, method)  # Kendall's p with its kind: "p = 0.333 (exact)", "p = 0.304 (normal approx.)"


register.filter("stars", stars)  # *** below 0.001, ** below 0.01, * below 0.05


register.filter("group_title", group_title)  # never bare: a group may share a word with a pool


@register.filter
def band_class(band: str) -> str:
    return "band-" + band.replace(" ", "-")


register.filter("scoring_words", scoring_words)  # a score's name in words, never its key
register.filter("chance_error", chance_error)  # a simulated chance's error; never "± 0 %" when all or none passed


@register.filter
def notes_text(notes: dict[str, str] | None) -> str:
    return "; ".join(f"{note_name(k)}: {v}" for k, v in (notes or {}).items())


# The rule for a number withheld in its place is trust_notes' (the text report asks it too): these filters only
# hand it a row.
register.filter("short_note", short_note)


@register.filter("p_adjusted_note")
def p_adjusted_note_filter(notes: Mapping[str, str] | None) -> str:
    """``{{ k.notes|p_adjusted_note }}``: "unfiltered only", "–" or "" (trust_notes.p_adjusted_note)."""
    return p_adjusted_note(notes or {})


@register.filter("value_note")
def value_note_filter(notes: Mapping[str, str] | None, keys: str) -> str:
    """``{{ k.notes|value_note:"kappa" }}``: the note in place of the value, or "" (keys comma-separated)."""
    return value_note(notes or {}, *keys.split(","))


@register.filter("interval_note")
def interval_note_filter(row: object, keys: str) -> str:
    """``{{ k|interval_note:"ci95,kappa" }}``: the row's interval attribute and note key first, then its value's
    keys; "no CI: <the note>" in place of the interval ("–" when the value is withheld), or "" to show it."""
    ci_key, *value_keys = keys.split(",")
    note = interval_note(getattr(row, "notes", {}), getattr(row, ci_key, None), ci_key, *value_keys)
    # A reason in the interval's place says it is none (review 18: "few items ..." alone, "no CI: ..." elsewhere).
    return note if note in ("", "–") else no_ci_text(note)


@register.filter("shown_notes_text")
def shown_notes_text(notes: Mapping[str, str] | None, keys: str) -> str:
    """``{{ k.notes|shown_notes_text:"kappa;ci95,p" }}``: the notes a reader meets, as ``notes_text``; the notes of
    the keys after ";" (an interval, a p) go when the value of the keys before it is withheld (issue 25 review, U8:
    a tooltip described the bootstrap of an interval shown as "–")."""
    value_keys, hidden = keys.split(";")
    return notes_text(shown_notes(notes or {}, tuple(hidden.split(",")), *value_keys.split(",")))


@register.filter
def pairs_text(row: object) -> str:
    """``{{ r|pairs_text }}``: table 6's second line, "3 pairs, n = 3", or "1 of 3 pairs, n = 3" when some pairs
    are undefined (their note says why); shown under a withheld mean too (seventh review, U5)."""
    n_pairs, n_items = getattr(row, "n_pairs", 0), getattr(row, "n_items", 0)
    note = getattr(row, "notes", {}).get("n_pairs", "")
    pairs = note.split(";")[0] if note else f"{n_pairs} pair{'' if n_pairs == 1 else 's'}"
    return f"{pairs}, n = {n_items}"


@register.filter
def few_for_ci(note: str | None) -> bool:
    """``{% if k.notes.ci95|few_for_ci %}``: the value's interval is withheld on few items, so the value is shown
    greyed with its n (ninth review, M2: a pooled α of 0.74 on 6 items read as firm)."""
    return FEW_FOR_INTERVAL in (note or "")  # also after "no variation: ..." (tenth review, M1: a black 0.000)


@register.filter
def pooled_mark(group: str, pooled_caveat: str) -> str:
    """``{{ c.group|pooled_mark:pooled_caveat }}``: " ⚠ pooled" beside a figure of all groups pooled, where the view
    has the pooled-groups caveat (the mark the titles use, ``trust_notes.POOLED_MARK``), else ""."""
    if not (pooled_caveat and group == ALL_GROUPS):
        return ""
    return format_html(' <span class="pooled-mark">{}</span>', POOLED_MARK)
