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
from typing import Any

import numpy as np

from evalhub import stats
from evalhub.analysis.cells import Cell
from evalhub.analysis.reading import HUMAN, AnalysisOptions, StudyData

# Per-rater kappa and the ceiling need the items x raters matrix; a crowd study with thousands of workers
# would not fit in memory as rater columns (see cells.py), so above this many cells they are left out.
MAX_RATER_CELLS = 20_000_000
# Each rater costs a kappa bootstrap per pool (and a ceiling interval): a few ms, so a crowd of thousands of
# workers would cost minutes per analysis; their rows would not be read either.
MAX_RATERS = 500


def _ci(ci: stats.BootstrapCI | stats.MeanCI) -> list[float] | None:
    return None if ci.low is None or ci.high is None else [ci.low, ci.high]


def _kappa_row(base: dict[str, Any], against: str, weights: str, result: stats.KappaResult,
               rater: str | None = None) -> dict[str, Any]:
    row = {**base, "against": against, "rater": rater, "weights": weights, "kappa": result.value,
           "ci95": _ci(result.ci), "n_items": result.n_items, "n_tied": result.n_tied,
           "n_unpaired": result.n_unpaired, "p": None, "p_adjusted": None, "notes": {}}
    if result.value is None:
        row["notes"]["kappa"] = result.reason or "undefined"
    elif row["ci95"] is None:
        row["notes"]["ci95"] = result.ci.reason or "undefined"
    return row


def _label(data: StudyData, value: float) -> str:
    if data.study.is_pairwise and value == 3 and "3" not in data.study.scale_labels:
        return "tie"  # pairwise studies store a tie as 3 (docs/judge-kinds.md)
    if float(value).is_integer():
        return data.study.label_for(int(value))
    return f"{value:g}"


class _HumanSide:
    """A question x group's human ratings, read once for every pool: matrix, majority, alpha, categories."""

    def __init__(self, cell: Cell, data: StudyData, alpha: stats.Stat) -> None:
        self.items = cell.items_and_inverse()[0] if cell.item.size else np.empty(0, dtype=np.int64)
        self.alpha = alpha
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
        # The costly step on large studies: once per cell, shared by every pool's kappas and confusion.
        self.majority = stats.majority_choice(self.matrix)
        observed = self.matrix[~np.isnan(self.matrix)]
        scale = [float(p) for p in data.study.scale_points()] if data.nominal else \
            [float(v) for v in range(data.study.scale_min, data.study.scale_max + 1)]
        self.scale = scale
        self.categories = np.union1d(np.asarray(scale, dtype=float), observed)


def _pool_labels(side: _HumanSide, cell: Cell, data: StudyData) -> tuple[np.ndarray, np.ndarray]:
    """(label for kappa and confusion, label for the ceiling) per human item; NaN where the pool has none."""
    labels, ceiling = np.full(side.items.size, np.nan), np.full(side.items.size, np.nan)
    if cell.item.size == 0 or side.items.size == 0:
        return labels, ceiling
    samples = cell.compact_matrix()
    _, hi, li = np.intersect1d(side.items, cell.items_and_inverse()[0], assume_unique=True, return_indices=True)
    if data.nominal:
        labels[hi] = stats.pool_label(samples[li], reduction="majority")
        ceiling[hi] = labels[hi]
    else:
        labels[hi] = stats.pool_label(samples[li], reduction="rounded_mean", scale=side.scale)
        ceiling[hi] = cell.item_means()[1][li]
    return labels, ceiling


def _confusion_row(base: dict[str, Any], data: StudyData, confusion: stats.Confusion) -> dict[str, Any]:
    return {**base, "categories": list(confusion.categories),
            "labels": [_label(data, c) for c in confusion.categories],
            "counts": [list(row) for row in confusion.counts], "n_items": confusion.n_items,
            "n_tied": confusion.n_tied, "n_unpaired": confusion.n_unpaired}


def _ceiling_row(base: dict[str, Any], side: _HumanSide, ceiling: stats.HumanCeiling) -> dict[str, Any]:
    return {**base, "scoring": ceiling.scoring, "summary": ceiling.summary, "judge_better": ceiling.judge_better,
            "n_compared": ceiling.n_compared, "notes": list(ceiling.notes),
            "raters": [{"rater": side.rater_names[r.rater], "n_items": r.n_items, "human": r.human,
                        "human_ci95": _ci(r.human_ci), "judge": r.judge, "judge_ci95": _ci(r.judge_ci),
                        "judge_better": None if r.human is None or r.judge is None else r.judge > r.human,
                        "reason": r.reason} for r in ceiling.raters]}


def agreement_sections(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: Sequence[str],
                       options: AnalysisOptions, cell_rows: Sequence[dict[str, Any]]) -> dict[str, list[dict]]:
    """The ``kappa``, ``confusion`` and ``ceiling`` lists of the analysis JSON (docs/analysis.md).

    ``cell_rows`` are the analysis's cell rows already computed: the ceiling's low-alpha note reads the
    human alpha there instead of computing it again.
    """
    level = data.ci_level
    alphas = {(c["question"], c["group"]): stats.Stat(c["alpha"][level], c["notes"].get(f"alpha.{level}"))
              for c in cell_rows if c["pool"] == HUMAN}
    llm_pools = [p for p in data.pools if p.kind == "llm"]
    boot: dict[str, Any] = {"n_boot": options.n_boot, "seed": options.seed}
    out: dict[str, list[dict]] = {"kappa": [], "confusion": [], "ceiling": []}
    for question in data.questions:
        for group in groups:
            human_cell = cells.get((question.key, group, HUMAN))
            if human_cell is None:
                continue
            alpha = alphas.get((question.key, group), stats.Stat(None, "no human cell"))
            side = _HumanSide(human_cell, data, alpha)
            cats = side.categories.tolist()
            fleiss = stats.fleiss_kappa(side.matrix, categories=cats, **boot)
            out["kappa"].append(_kappa_row({"question": question.key, "group": group, "pool": HUMAN},
                                           "raters", "unweighted", fleiss))
            for pool in llm_pools:
                base = {"question": question.key, "group": group, "pool": pool.name}
                labels, ceiling_labels = _pool_labels(side, cells[(question.key, group, pool.name)], data)
                weightings = ("unweighted",) if data.nominal else stats.WEIGHTS
                results = stats.kappas_vs_majority(side.matrix, labels, weights=weightings, categories=cats,
                                                   majority=side.majority, **boot)
                for weights, result in zip(weightings, results, strict=True):
                    out["kappa"].append(_kappa_row(base, "majority", weights, result))
                out["confusion"].append(_confusion_row(
                    base, data, stats.confusion_vs_majority(side.matrix, labels, categories=cats,
                                                            majority=side.majority)))
                if side.too_many:
                    note = f"{side.too_many}: per-rater kappa and the ceiling are left out"
                    out["ceiling"].append({**base, "scoring": None, "summary": None, "judge_better": 0,
                                           "n_compared": 0, "notes": [note], "raters": []})
                    continue
                # Every rater's kappa and z-test from one pass over the matrix (the same values as one
                # cohen_kappa and kappa_z_test call per rater column).
                per_rater = stats.rater_kappas_and_tests(side.matrix, labels, categories=cats, **boot)
                for name, (result, test) in zip(side.rater_names, per_rater, strict=True):
                    row = _kappa_row(base, "rater", "unweighted", result, rater=name)
                    row["p"] = test.p
                    if test.p is None and result.value is not None:
                        row["notes"]["p"] = test.reason or "undefined"
                    out["kappa"].append(row)
                scoring = "accuracy" if data.nominal else "neg_rmse"
                out["ceiling"].append(_ceiling_row(base, side, stats.human_ceiling(
                    side.matrix, ceiling_labels, scoring=scoring, human_alpha=side.alpha)))
    adjust_p(row for row in out["kappa"] if row["against"] == "rater")
    return out


def adjust_p(rows: Any) -> None:
    """Add ``p_adjusted``, the Benjamini-Hochberg adjusted ``p``, to each row; the rows are one family.

    Undefined p-values stay None and are not counted in the family (``stats.bh_adjust``).
    """
    rows = list(rows)
    for row, adjusted in zip(rows, stats.bh_adjust([row["p"] for row in rows]), strict=True):
        row["p_adjusted"] = adjusted
