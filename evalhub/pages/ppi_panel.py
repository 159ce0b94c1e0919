"""The dashboard's prediction-powered inference panel (issue 27): each judge's PPI mean and interval beside the
humans-only one, the PPI group difference beside Welch's, and what the judge's ratings are worth in human-rated
items; or, where the human-rated items are not a random subset, the note that PPI's guarantee does not hold and
no PPI figure. A pure function of the analysis result (``ppi_context``); docs/analysis.md explains the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalhub.analysis.ppi_rows import WITHHELD_BELOW
from evalhub.analysis.reading import HUMAN
from evalhub.analysis.result import AnalysisResult, PPIDifferenceRow, PPIRow, WelchRow


@dataclass(frozen=True)
class PPIMeanLine:
    row: PPIRow
    pool_label: str
    gain: str  # "worth 3 more human-rated items here", or why there is no figure
    withheld: bool = False  # too few human-rated items for any interval to be shown (the note instead)

    @property
    def caution(self) -> str:
        return caution_text(self.row.notes.get("interval", ""), self.withheld)


@dataclass(frozen=True)
class PPIDifferenceLine:
    row: PPIDifferenceRow
    pool_label: str
    welch: WelchRow | None  # the humans-only Welch comparison of the same groups and question
    withheld: bool = False

    @property
    def caution(self) -> str:
        return caution_text(self.row.notes.get("interval", ""), self.withheld)


@dataclass(frozen=True)
class PPIPanel:
    note: str | None  # why PPI does not apply (then no line below)
    declared: bool  # the subset was declared random by the researcher, not drawn by EvalHub
    means: tuple[PPIMeanLine, ...]
    differences: tuple[PPIDifferenceLine, ...]


def caution_text(note: str, withheld: bool) -> str:
    """A row's few-items note, saying so when its intervals are withheld from the page (the JSON keeps them)."""
    return f"{note}; no interval shown below {WITHHELD_BELOW}" if note and withheld else note


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
    fewest = {(r.question, r.pool, r.group): r.n_labelled for r in result.ppi}
    means = tuple(PPIMeanLine(r, labels.get(r.pool, r.pool), gain_sentence(r), r.n_labelled < WITHHELD_BELOW)
                  for r in result.ppi)
    differences = tuple(
        PPIDifferenceLine(d, labels.get(d.pool, d.pool), welch.get((d.question, *d.groups)),
                          min(fewest.get((d.question, d.pool, g), 0) for g in d.groups) < WITHHELD_BELOW)
        for d in result.ppi_differences)
    return PPIPanel(None, declared, means, differences)
