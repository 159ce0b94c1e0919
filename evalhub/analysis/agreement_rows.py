"""Chance-corrected agreement beside the verdict: kappa, the confusion matrix and the human ceiling (issue 19).

Per question x group x LLM pool, against the human raters of the same cell:

- ``kappa``: flat rows. Cohen's kappa of the pool's label against the human majority label (unweighted;
  linear and quadratic too on Likert studies), against each human rater (unweighted, with the z-test of
  kappa = 0 and its Benjamini-Hochberg adjusted p), and Fleiss' kappa among the human raters (one row per
  question x group, pool ``human``); each with its bootstrap CI over items;
- ``confusion``: the pool's label against the human majority label;
- ``ceiling``: each rater's leave-one-out agreement with the other raters, beside the judge's on the same
  items, and where the judge falls among them.

A pool with several samples per item is represented, for kappa and the confusion matrix, by its majority
label (nominal studies) or its mean rounded to the scale's nearest whole point (Likert), ``stats.pool_label``;
for the ceiling, as in the alternative annotator test, by its majority (nominal) or its unrounded mean
(Likert). The human majority of each cell is computed once and shared by every pool's kappa and confusion.
``stats`` does the arithmetic; this module only shapes and labels (docs/analysis.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from evalhub import stats
from evalhub.analysis.cells import Cell, common_items
from evalhub.analysis.reading import ALL_GROUPS, HUMAN, AnalysisOptions, StudyData
from evalhub.analysis.result import CeilingRater, CeilingRow, CellRow, ConfusionRow, Interval, KappaRow, Notes, WelchRow
from evalhub.analysis.trust_notes import (
    bootstrap_interval_notes,
    ceiling_interval_note,
    cut_interval,
    degenerate_interval,
    too_few_items,
)
from evalhub.stats.alt_test import Scoring

Against = Literal["majority", "rater", "raters"]

# Per-rater kappa and the ceiling need the items x raters matrix; a crowd study with thousands of workers
# would not fit in memory as rater columns (see cells.py), so above this many cells they are left out.
MAX_RATER_CELLS = 20_000_000
# Each rater costs a kappa bootstrap per pool (and a ceiling interval): a few ms, so a crowd of thousands of
# workers would cost minutes per analysis; their rows would not be read either.
MAX_RATERS = 500


def _ci(ci: stats.BootstrapCI | stats.MeanCI) -> Interval | None:
    return None if ci.low is None or ci.high is None else (ci.low, ci.high)


@dataclass(frozen=True)
class _Where:
    question: str
    group: str
    pool: str


def _kappa_row(where: _Where, against: Against, weights: str, result: stats.KappaResult,
               rater: str | None = None, test: stats.KappaTest | None = None) -> KappaRow:
    notes: Notes = {}
    ci95 = _ci(result.ci)
    if result.value is None:
        notes["kappa"] = result.reason or "undefined"
    elif few := too_few_items(result.n_items):
        notes["kappa"] = few  # the value stays; pages show the note in its place, and no interval
    elif ci95 is None:
        notes["ci95"] = result.ci.reason or "undefined"
    elif no_variation := bootstrap_interval_notes(ci95, result.n_items):
        notes["ci95"] = no_variation
    if test is not None and test.p is None and result.value is not None:
        notes["p"] = test.reason or "undefined"
    return KappaRow(where.question, where.group, where.pool, against=against, rater=rater, weights=weights,
                    kappa=result.value, ci95=ci95, n_items=result.n_items, n_tied=result.n_tied,
                    n_unpaired=result.n_unpaired, p=None if test is None else test.p, p_adjusted=None, notes=notes)


def _label(data: StudyData, value: float) -> str:
    if data.study.is_pairwise and value == 3 and "3" not in data.study.scale_labels:
        return "tie"  # pairwise studies store a tie as 3 (docs/judge-kinds.md)
    if float(value).is_integer():
        return data.study.label_for(int(value))
    return f"{value:g}"


class _HumanSide:
    """A question x group's human ratings, read once for every pool: matrix, majority, alpha, categories."""

    def __init__(self, cell: Cell, data: StudyData, alpha: stats.Stat, alpha_withheld: str | None = None) -> None:
        self.items = cell.items_and_inverse()[0] if cell.item.size else np.empty(0, dtype=np.int64)
        self.alpha = alpha
        self.alpha_withheld = alpha_withheld  # table 1's note in place of a defined alpha (too few items)
        self.within: str | None = None  # all groups pooled: how the raters agree within groups (not the alpha)
        n_raters = int(cell.raters()[0].size) if cell.item.size else 0
        self.too_many: str | None = None
        if self.items.size * n_raters > MAX_RATER_CELLS:
            self.too_many = f"{self.items.size} items x {n_raters} raters exceed {MAX_RATER_CELLS} cells"
        elif n_raters > MAX_RATERS:
            self.too_many = f"{n_raters} raters: at most {MAX_RATERS} are compared one by one"
        if self.items.size == 0:
            self.matrix, self.rater_names = np.empty((0, 0)), list[str]()
        elif self.too_many:
            self.matrix, self.rater_names = cell.compact_matrix(), []
        else:
            self.matrix, columns = cell.rater_matrix()
            pool = cell.pool
            self.rater_names = [pool.rater_labels.get(int(pool.raters[c]), str(int(pool.raters[c]))) for c in columns]
        # Counted once per cell (the cell rows' alpha counts them too), shared by the majority and Fleiss' kappa.
        self.counts = cell.value_counts()
        # The costly step on large studies: once per cell, shared by every pool's kappas and confusion.
        self.majority = stats.majority_choice(self.matrix, counts=self.counts)
        scale = [float(p) for p in data.study.scale_points()] if data.nominal else \
            [float(v) for v in range(data.study.scale_min, data.study.scale_max + 1)]
        self.scale = scale
        self.categories = np.union1d(np.asarray(scale, dtype=float), self.counts.values)


def _pool_labels(side: _HumanSide, cell: Cell, data: StudyData) -> tuple[np.ndarray, np.ndarray]:
    """(label for kappa and confusion, label for the ceiling) per human item; NaN where the pool has none."""
    labels, ceiling = np.full(side.items.size, np.nan), np.full(side.items.size, np.nan)
    if cell.item.size == 0 or side.items.size == 0:
        return labels, ceiling
    samples = cell.compact_matrix()
    hi, li = common_items(side.items, cell.items_and_inverse()[0])
    if data.nominal:
        labels[hi] = stats.pool_label(samples[li], reduction="majority")
        ceiling[hi] = labels[hi]
    else:
        labels[hi] = stats.pool_label(samples[li], reduction="rounded_mean", scale=side.scale)
        ceiling[hi] = cell.item_means()[1][li]
    return labels, ceiling


def _confusion_row(where: _Where, data: StudyData, confusion: stats.Confusion) -> ConfusionRow:
    return ConfusionRow(where.question, where.group, where.pool, categories=tuple(confusion.categories),
                        labels=tuple(_label(data, c) for c in confusion.categories),
                        counts=tuple(tuple(row) for row in confusion.counts), n_items=confusion.n_items,
                        n_tied=confusion.n_tied, n_unpaired=confusion.n_unpaired)


POOLED_ALPHA = "the raters' alpha over all groups includes the difference between the groups, so it is not used here"


def within_groups_note(data: StudyData, cells: dict[tuple[str, str, str], Cell], question: str) -> str:
    """For a ceiling over all groups pooled: how well the human raters agree within each group, which the pooled
    alpha does not say (seventh and eighth reviews, M: a pooled 0.74 with no "agree little", within the groups
    -0.20 and -0.33, each withheld on 3 items). Judged as the ceiling judges one group's alpha."""
    few, low = [], []
    for group in data.groups:
        cell = cells.get((question, group, HUMAN))
        if cell is None or cell.item.size == 0:
            continue
        matrix = cell.compact_matrix()
        n_pairable = int((np.sum(~np.isnan(matrix), axis=1) >= 2).sum())
        alpha = stats.krippendorff_alpha(matrix, level=data.ci_level, value_domain=data.domain)
        if too_few_items(n_pairable) or alpha.value is None:
            few.append(f"“{group}” {'n = ' + str(n_pairable) if alpha.value is not None else 'undefined'}")
        elif alpha.value < stats.LOW_HUMAN_ALPHA:
            low.append(f"“{group}” {alpha.value:.2f}")
    if few:
        return (f"{POOLED_ALPHA}; within the groups it is unknown (too few items or undefined: {', '.join(few)}), "
                "so whether the raters agree is unknown: comparisons with them may mean little")
    if low:
        return (f"{POOLED_ALPHA}; within the groups the raters agree little (alpha {', '.join(low)} < "
                f"{stats.LOW_HUMAN_ALPHA}): comparisons with them mean little")
    return f"{POOLED_ALPHA}; within each group it is at least {stats.LOW_HUMAN_ALPHA}"


def _ceiling_notes(side: _HumanSide, ceiling: stats.HumanCeiling, n_items: int,
                   within: str | None = None) -> tuple[str, ...]:
    """The ceiling's trust notes (trust_notes: too few items, or each zero-width rater interval), then its own.
    ``within``: for an all-groups row of a study with several groups, ``within_groups_note`` in place of the
    pooled alpha's notes."""
    notes: list[str] = []
    bounds = stats.score_range(ceiling.scoring)
    if ceiling.raters and (few := too_few_items(n_items)):
        notes.append(few)  # the values stay; pages show the note and withhold the intervals
    else:
        for r in ceiling.raters:
            for who, ci in (("rater", r.human_ci), ("judge", r.judge_ci)):
                if note := degenerate_interval(_ci(ci), "t") or cut_interval(_ci(ci), bounds):
                    notes.append(ceiling_interval_note(side.rater_names[r.rater], who, note))
    if within:
        notes.append(within)
    elif side.alpha_withheld:
        # No nested parentheses around the note's own "(n = 3)" (issue 25 review, C5).
        notes.append(f"the raters' alpha is withheld, {side.alpha_withheld}: comparisons with them mean little")
    return (*notes, *ceiling.notes)


def _ceiling_summary(ceiling: stats.HumanCeiling, raters: Sequence[CeilingRater], n_items: int) -> str | None:
    """The ceiling's headline, or None where it is withheld: below ``MIN_ITEMS`` items, as kappa withholds its
    interval (issue 25 review: "better than 3 of 3 of them" on 3 items of noise); the notes say why. "Better" is a
    point comparison of two means: where a compared rater's interval and the judge's overlap, the words say so."""
    if ceiling.summary is None or too_few_items(n_items):
        return None
    compared = [r for r in raters if r.judge_better is not None]
    overlap = any(r.rater_ci95 is None or r.judge_ci95 is None
                  or (r.judge_ci95[0] <= r.rater_ci95[1] and r.rater_ci95[0] <= r.judge_ci95[1]) for r in compared)
    return f"{ceiling.summary} (a point comparison: see the intervals)" if overlap else ceiling.summary


def _ceiling_row(where: _Where, side: _HumanSide, ceiling: stats.HumanCeiling, n_items: int,
                 within: str | None = None) -> CeilingRow:
    raters = tuple(CeilingRater(rater=side.rater_names[r.rater], n_items=r.n_items, rater_score=r.human,
                                rater_ci95=_ci(r.human_ci), judge_score=r.judge, judge_ci95=_ci(r.judge_ci),
                                judge_better=None if r.human is None or r.judge is None else r.judge > r.human,
                                reason=r.reason) for r in ceiling.raters)
    return CeilingRow(
        where.question, where.group, where.pool, scoring=ceiling.scoring,
        summary=_ceiling_summary(ceiling, raters, n_items),
        judge_better=ceiling.judge_better, n_compared=ceiling.n_compared,
        notes=_ceiling_notes(side, ceiling, n_items, within), raters=raters)


FILTERED_P_ADJUSTED = ("given on the unfiltered analysis only: its Benjamini-Hochberg family is every per-rater test "
                       "of the study, whatever a filter shows")
ALL_GROUPS_P_ADJUSTED = ("not adjusted: all groups together are in no Benjamini-Hochberg family (the study's per-rater "
                         "tests are per group, and the unfiltered analysis has no all-groups rows); the unadjusted p "
                         "is in the JSON and the CSV")


@dataclass(frozen=True)
class Evidence:
    """The ``kappa``, ``confusion`` and ``ceiling`` sections of the result."""

    kappa: tuple[KappaRow, ...]
    confusion: tuple[ConfusionRow, ...]
    ceiling: tuple[CeilingRow, ...]


def agreement_sections(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: Sequence[str],
                       options: AnalysisOptions, cell_rows: Sequence[CellRow]) -> Evidence:
    """The ``kappa``, ``confusion`` and ``ceiling`` sections of the result (docs/analysis.md).

    ``cell_rows`` are the analysis's cell rows already computed: the ceiling's low-alpha note reads the
    human alpha there instead of computing it again.
    """
    level = data.ci_level
    alphas = {(c.question, c.group): stats.Stat(c.alpha[level], c.notes.get(f"alpha.{level}"))
              for c in cell_rows if c.pool == HUMAN}
    withheld = {(c.question, c.group): c.notes["alpha"] for c in cell_rows
                if c.pool == HUMAN and "alpha" in c.notes and c.alpha[level] is not None}
    kappa: list[KappaRow] = []
    confusion: list[ConfusionRow] = []
    ceiling: list[CeilingRow] = []
    for question in data.questions:
        for group in groups:
            human_cell = cells.get((question.key, group, HUMAN))
            if human_cell is None:
                continue
            alpha = alphas.get((question.key, group), stats.Stat(None, "no human cell"))
            side = _HumanSide(human_cell, data, alpha, withheld.get((question.key, group)))
            if group == ALL_GROUPS and len(data.groups) > 1:
                side.within = within_groups_note(data, cells, question.key)
            fleiss = stats.fleiss_kappa(side.matrix, categories=side.categories.tolist(), n_boot=options.n_boot,
                                        seed=options.seed, counts=side.counts)
            kappa.append(_kappa_row(_Where(question.key, group, HUMAN), "raters", "unweighted", fleiss))
            for pool in data.pools:
                if pool.kind == "llm":
                    _pool_evidence(_Where(question.key, group, pool.name), side,
                                   cells[(question.key, group, pool.name)], data, options, kappa, confusion, ceiling)
    rater_rows = [n for n, row in enumerate(kappa) if row.against == "rater"]
    if options.questions is not None or options.groups is not None or options.runs is not None:
        # The family would be what the filter shows, so a filtered page would give the same test a smaller
        # adjusted p (issue 25 review, as Welch's); the whole family needs every cell's bootstraps: withheld.
        for n in rater_rows:
            note = ALL_GROUPS_P_ADJUSTED if kappa[n].group == ALL_GROUPS else FILTERED_P_ADJUSTED
            kappa[n] = replace(kappa[n], notes={**kappa[n].notes, "p_adjusted": note})
        return Evidence(tuple(kappa), tuple(confusion), tuple(ceiling))
    for n, p in zip(rater_rows, adjusted_p([kappa[n] for n in rater_rows]), strict=True):
        kappa[n] = replace(kappa[n], p_adjusted=p)
    return Evidence(tuple(kappa), tuple(confusion), tuple(ceiling))


def _pool_evidence(where: _Where, side: _HumanSide, cell: Cell, data: StudyData, options: AnalysisOptions,
                   kappa: list[KappaRow], confusion: list[ConfusionRow], ceiling: list[CeilingRow]) -> None:
    """One LLM pool's kappas, confusion matrix and ceiling against one question x group's humans."""
    cats = side.categories.tolist()
    labels, ceiling_labels = _pool_labels(side, cell, data)
    weightings = ("unweighted",) if data.nominal else stats.WEIGHTS
    results = stats.kappas_vs_majority(side.matrix, labels, weights=weightings, categories=cats,
                                       majority=side.majority, n_boot=options.n_boot, seed=options.seed)
    for weights, result in zip(weightings, results, strict=True):
        kappa.append(_kappa_row(where, "majority", weights, result))
    confusion.append(_confusion_row(where, data, stats.confusion_vs_majority(
        side.matrix, labels, categories=cats, majority=side.majority)))
    if side.too_many:
        note = f"{side.too_many}: per-rater kappa and the ceiling are left out"
        ceiling.append(CeilingRow(where.question, where.group, where.pool, scoring=None, summary=None,
                                  judge_better=0, n_compared=0, notes=(note,), raters=()))
        return
    # Every rater's kappa and z-test from one pass over the matrix (the same values as one
    # cohen_kappa and kappa_z_test call per rater column).
    per_rater = stats.rater_kappas_and_tests(side.matrix, labels, categories=cats, n_boot=options.n_boot,
                                             seed=options.seed)
    for name, (result, test) in zip(side.rater_names, per_rater, strict=True):
        kappa.append(_kappa_row(where, "rater", "unweighted", result, rater=name, test=test))
    scoring: Scoring = "accuracy" if data.nominal else "neg_rmse"
    # The ceiling's items: two ratings or more and a judge label (stats.human_ceiling's I_j, over all raters).
    n_items = int(((np.sum(~np.isnan(side.matrix), axis=1) >= 2) & ~np.isnan(ceiling_labels)).sum())
    # A withheld alpha is quoted by its note; a pooled one is not used (``within_groups_note`` instead).
    human_alpha = None if side.alpha_withheld or side.within else side.alpha
    ceiling.append(_ceiling_row(where, side, stats.human_ceiling(
        side.matrix, ceiling_labels, scoring=scoring, human_alpha=human_alpha), n_items, side.within))


def adjusted_p(rows: Sequence[KappaRow | WelchRow]) -> list[float | None]:
    """The Benjamini-Hochberg adjusted ``p`` of each row; the rows are one family.

    Undefined p-values stay None and are not counted in the family (``stats.bh_adjust``).
    """
    return stats.bh_adjust([row.p if isinstance(row, KappaRow) else row.test.p for row in rows])
