"""The dashboard's prediction-powered inference panel (issue 27): each judge's PPI mean and interval beside the
humans-only one, the PPI group difference beside Welch's, and what the judge's ratings are worth in human-rated
items; or, where the human-rated items are not a random subset, the note that PPI's guarantee does not hold and
no PPI figure. A pure function of the analysis result (``ppi_context``); docs/analysis.md explains the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalhub.analysis.reading import HUMAN
from evalhub.analysis.result import AnalysisResult, PPIDifferenceRow, PPIRow, WelchRow


@dataclass(frozen=True)
class PPIMeanLine:
    row: PPIRow
    pool_label: str
    gain: str  # "worth 3 more human-rated items here", or why there is no figure


@dataclass(frozen=True)
class PPIDifferenceLine:
    row: PPIDifferenceRow
    pool_label: str
    welch: WelchRow | None  # the humans-only Welch comparison of the same groups and question


@dataclass(frozen=True)
class PPIPanel:
    note: str | None  # why PPI does not apply (then no line below)
    declared: bool  # the subset was declared random by the researcher, not drawn by EvalHub
    means: tuple[PPIMeanLine, ...]
    differences: tuple[PPIDifferenceLine, ...]


def gain_sentence(row: PPIRow) -> str:
    """What the judge's ratings are worth here, in human-rated items (``extra_items`` rounded)."""
    if row.extra_items is None:
        return row.notes.get("estimate", "no PPI figure")
    extra = round(row.extra_items)
    if extra < 1:
        return "this judge's ratings add less than one human-rated item here"
    return f"this judge's ratings are worth {extra} more human-rated item{'s' if extra != 1 else ''} here"


def ppi_context(result: AnalysisResult, *, declared: bool) -> PPIPanel:
    labels = result.pool_labels()
    if result.ppi is None or result.ppi_differences is None:
        return PPIPanel(result.ppi_note, declared, (), ())
    welch = {(w.question, w.group_a, w.group_b): w for w in result.welch if w.pool == HUMAN}
    means = tuple(PPIMeanLine(r, labels.get(r.pool, r.pool), gain_sentence(r)) for r in result.ppi)
    differences = tuple(PPIDifferenceLine(d, labels.get(d.pool, d.pool), welch.get((d.question, *d.groups)))
                        for d in result.ppi_differences)
    return PPIPanel(None, declared, means, differences)
