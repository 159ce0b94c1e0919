"""The agreement tables of Chiang & Lee (2023) from a study's cells: the analysis JSON.

Per question x group x pool: descriptives, Krippendorff's alpha with its bootstrap interval, full
agreement and ICC (cells); pairwise Kendall's tau among a pool's raters; per-rater means; each LLM
pool against the humans (Kendall's tau of item means, or the majority table of a pairwise study);
Welch's t-test between groups. ``stats`` does the arithmetic; this module only shapes and labels.
The JSON's shape is a contract: docs/analysis.md.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from annotations.models import Study
from evalhub import stats
from evalhub.analysis.agreement_rows import adjust_p, agreement_sections
from evalhub.analysis.alt_test_rows import alt_test_rows, alt_test_settings
from evalhub.analysis.cells import Cell, study_cells
from evalhub.analysis.chart_data import item_mean_scatter, score_distributions
from evalhub.analysis.per_rater import personal_sections
from evalhub.analysis.position_rows import position_rows
from evalhub.analysis.reading import ALL_GROUPS, HUMAN, AnalysisOptions, Pool, StudyData, WelchUnit, study_data

PAIRWISE_MAX_RATERS = 50  # above this, C(n, 2) scipy calls per cell cost seconds and positional raters mean little
SCHEMA_VERSION = 1


def _value(stat: stats.Stat, key: str, notes: dict[str, str]) -> float | None:
    if stat.value is None:
        notes[key] = stat.reason or "undefined"
    return stat.value


def _cell_row(cell: Cell, data: StudyData, options: AnalysisOptions) -> dict[str, Any]:
    notes: dict[str, str] = {}
    matrix = cell.compact_matrix()
    row: dict[str, Any] = {"question": cell.question, "group": cell.group, "pool": cell.pool.name}
    desc = stats.describe(matrix) if matrix.size else stats.Describe(0, 0, None, None, "no ratings")
    row["n_items"], row["n_ratings"] = desc.n_items, desc.n_ratings
    row["n_raters"] = int(cell.raters()[0].size)
    row["mean"], row["std"] = desc.mean, desc.std
    if desc.mean is None:
        notes["mean"] = desc.reason or "no ratings"
    if desc.std is None:
        notes["std"] = desc.reason or "fewer than 2 ratings"
    if matrix.size == 0:
        matrix = np.full((0, 1), np.nan)
    alphas, ci = stats.alpha_with_ci(matrix, ci_level=data.ci_level, value_domain=data.domain, n_boot=options.n_boot,
                                     seed=options.seed)
    # The scale itself, not only the ratings seen: ratio alpha on a scale with 0 or negatives means nothing
    # even where the raters happened to use only positive points.
    ratio_reason = None if data.nominal else stats.ratio_scale_reason([data.study.scale_min])
    if ratio_reason:
        alphas = {**alphas, "ratio": stats.Stat(None, ratio_reason)}
    row["alpha"] = {}
    for level, stat in alphas.items():
        row["alpha"][level] = stat.value
        if stat.value is None:
            notes[f"alpha.{level}"] = stat.reason or "undefined"
    row["alpha_ci95"] = None if ci.low is None else [ci.low, ci.high]
    row["alpha_ci_n_boot"], row["alpha_ci_n_valid"] = ci.n_boot, ci.n_valid
    if ci.low is None:
        notes["alpha_ci95"] = ci.reason or "undefined"
    elif ci.n_valid < ci.n_boot:
        notes["alpha_ci95"] = (f"from {ci.n_valid} of {ci.n_boot} bootstrap replicates: "
                               f"{ci.n_boot - ci.n_valid} had no variation (alpha undefined) and were dropped")
    row["full_agreement_pct"] = _value(stats.full_agreement_pct(matrix), "full_agreement_pct", notes)
    icc = stats.icc_one_way(matrix)
    row["icc1"] = _value(icc.icc1, "icc1", notes)
    row["icc1k"] = _value(icc.icc1k, "icc1k", notes)
    row["icc_n_items"] = icc.n_items
    if icc.icc1.value is not None and icc.n_items < desc.n_items:
        # ICC needs a balanced design: only items every rater rated count (listwise deletion).
        notes["icc"] = (f"ICC uses the {icc.n_items} of {desc.n_items} items rated by all {icc.n_raters} "
                        "raters (complete items only)")
    row["notes"] = notes
    return row


def _pairwise_row(cell: Cell) -> dict[str, Any]:
    row: dict[str, Any] = {"question": cell.question, "group": cell.group, "pool": cell.pool.name}
    n_raters = int(cell.raters()[0].size)
    if n_raters > PAIRWISE_MAX_RATERS:
        row.update(mean_tau=None, n_pairs=0,
                   notes={"mean_tau": f"{n_raters} raters: pairwise tau is computed for at most "
                                      f"{PAIRWISE_MAX_RATERS} raters"})
        return row
    matrix, _ = cell.rater_matrix() if cell.item.size else (np.empty((0, 0)), None)
    result = stats.mean_pairwise_kendall(matrix)
    row.update(mean_tau=result.mean_tau, n_pairs=result.n_pairs,
               notes={} if result.mean_tau is not None else {"mean_tau": result.reason or "undefined"})
    return row


def _rater_rows(cell: Cell) -> list[dict[str, Any]]:
    if cell.group == ALL_GROUPS or cell.item.size == 0:
        return []
    raters, inverse = cell.raters()
    sums = np.bincount(inverse, weights=cell.score)
    counts = np.bincount(inverse)
    return [
        {"question": cell.question, "group": cell.group, "pool": cell.pool.name,
         "rater": cell.pool.rater_labels.get(int(cell.pool.raters[r]), str(int(cell.pool.raters[r]))),
         "mean": float(s / c), "n": int(c)}
        for r, s, c in zip(raters, sums, counts, strict=True)
    ]


def _majority_row(human: Cell, llm: Cell) -> dict[str, Any]:
    """A nominal pool against the human majority: on how many items its own majority choice is the
    humans' (items where either side has no majority, e.g. a 1-1 split, are left out and counted)."""
    h_items, l_items = human.items_and_inverse()[0], llm.items_and_inverse()[0]
    h_choice = stats.majority_choice(human.compact_matrix())
    l_choice = stats.majority_choice(llm.compact_matrix())
    _, hi, li = np.intersect1d(h_items, l_items, assume_unique=True, return_indices=True)
    result = stats.agreement_pct(h_choice[hi], l_choice[li])
    both = ~np.isnan(h_choice[hi]) & ~np.isnan(l_choice[li])
    return {"question": llm.question, "group": llm.group, "pool": llm.pool.name,
            "agreement_pct": result.value, "n_items": int(both.sum()),
            "n_agree": int((h_choice[hi][both] == l_choice[li][both]).sum()),
            "human_no_majority": int(np.isnan(h_choice[hi]).sum()),
            "pool_no_majority": int(np.isnan(l_choice[li]).sum()),
            "notes": {} if result.value is not None else {"agreement_pct": result.reason or "undefined"}}


def _kendall_row(human: Cell, llm: Cell) -> dict[str, Any]:
    h_items, h_means = human.item_means()
    l_items, l_means = llm.item_means()
    _, hi, li = np.intersect1d(h_items, l_items, assume_unique=True, return_indices=True)
    result = stats.kendall_tau(h_means[hi], l_means[li])
    return {"question": llm.question, "group": llm.group, "pool": llm.pool.name, "tau": result.tau, "p": result.p,
            "n": result.n, "band": stats.tau_band(result.tau),
            "notes": {} if result.tau is not None else {"tau": result.reason or "undefined"}}


def contrasts(study: Study, groups: list[str]) -> list[tuple[str, str]]:
    """The study's group pairs for Welch's test; an empty Study.contrasts means every pair, in group order."""
    if study.contrasts:
        return [(str(a), str(b)) for a, b in study.contrasts]
    return list(itertools.combinations(groups, 2))


def _welch_row(question: str, pool: Pool, a: Cell | None, b: Cell | None, group_a: str, group_b: str,
               unit: WelchUnit) -> dict[str, Any]:
    def values(cell: Cell | None) -> np.ndarray:
        if cell is None:
            return np.empty(0)
        return cell.item_means()[1] if unit == "item means" else cell.score

    va, vb = values(a), values(b)
    result = stats.welch(va, vb, unit=unit)
    row: dict[str, Any] = {"question": question, "pool": pool.name, "group_a": group_a, "group_b": group_b,
           "mean_a": float(va.mean()) if va.size else None, "mean_b": float(vb.mean()) if vb.size else None,
           "t": result.t,
           "df": result.df, "p": result.p, "mean_diff": result.mean_diff, "cohens_d": result.cohens_d,
           "n_a": result.n_a, "n_b": result.n_b, "unit": unit, "notes": {}}
    if result.reason:
        for key in ("t", "df", "p", "mean_diff", "cohens_d"):
            if row[key] is None:
                row["notes"][key] = result.reason
    return row


def study_analysis(*, study: Study, options: AnalysisOptions | None = None) -> dict[str, Any]:
    """The study's agreement tables as JSON-ready data (shape documented in docs/analysis.md)."""
    options = options or AnalysisOptions()
    data = study_data(study=study, options=options)
    return analysis_from_data(data, options)



def analysis_from_data(data: StudyData, options: AnalysisOptions) -> dict[str, Any]:
    cells = study_cells(data)
    shown_groups = [g for g in data.groups if options.groups is None or g in options.groups]
    # The pooled cell is asked for like a group: the paper's tables are per group, and pooling doubles the work.
    if len(data.groups) > 1 and options.groups is not None and ALL_GROUPS in options.groups:
        shown_groups.append(ALL_GROUPS)
    llm_pools = [p for p in data.pools if p.kind == "llm"]
    alt_settings = alt_test_settings(data, options)
    result: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "study": {
            "slug": data.study.slug,
            "title": data.study.title,
            "scale": {"min": data.study.scale_min, "max": data.study.scale_max},
            "questions": [q.key for q in data.questions],
            "groups": data.groups,
            "contrasts": [list(c) for c in contrasts(data.study, data.groups)],
            "n_items": int(data.item_ids.size),
        },
        "settings": {"ci_level": data.ci_level, "ci_n_boot": options.n_boot, "ci_seed": options.seed,
                     "measurement": "nominal" if data.nominal else "ordinal",
                     "welch_unit": options.welch_unit, "value_domain": data.domain,
                     "pairwise_max_raters": PAIRWISE_MAX_RATERS, "alt_test": alt_settings.as_json()},
        "pools": [p.as_json() for p in data.pools],
        "cells": [],
        "kendall": [],
        "welch": [],
        "pairwise_kendall": [],
        "rater_means": [],
        "majority": [],
    }
    if data.nominal:
        # A/B choices and named labels are categories: no ranks to correlate (Kendall), no means to compare (Welch).
        what = "choices are nominal (A/B)" if data.study.is_pairwise else "labels are nominal categories"
        result["not_computed"] = dict.fromkeys(
            ("kendall", "welch", "pairwise_kendall"),
            f"{data.study.kind} study: {what}; see alpha (nominal) and the majority table",
        )
    for question in data.questions:
        for group in shown_groups:
            for pool in data.pools:
                cell = cells[(question.key, group, pool.name)]
                result["cells"].append(_cell_row(cell, data, options))
                result["rater_means"].extend(_rater_rows(cell))
                if data.nominal:
                    if pool.kind == "llm":
                        result["majority"].append(_majority_row(cells[(question.key, group, HUMAN)], cell))
                    continue
                result["pairwise_kendall"].append(_pairwise_row(cell))
                if pool.kind == "llm":
                    result["kendall"].append(_kendall_row(cells[(question.key, group, HUMAN)], cell))
        for pool in data.pools if not data.nominal else []:
            for group_a, group_b in contrasts(data.study, data.groups):
                if options.groups is not None and not {group_a, group_b} & set(options.groups):
                    continue
                result["welch"].append(_welch_row(
                    question.key, pool, cells.get((question.key, group_a, pool.name)),
                    cells.get((question.key, group_b, pool.name)), group_a, group_b, options.welch_unit))
    # The verdict: may each LLM pool replace the human raters (the alternative annotator test)?
    result["alt_test"] = alt_test_rows(data, cells, shown_groups, alt_settings)
    # Issue 19: kappa, confusion and the human ceiling beside the verdict; stars and sentences on the
    # Welch contrasts use Benjamini-Hochberg adjusted p-values (raw p stays in "p").
    result.update(agreement_sections(data, cells, shown_groups, options, result["cells"]))
    adjust_p(result["welch"])
    # Issue 19: a pairwise judge's position bias, from the swapped samples (which count nowhere else).
    result["position_bias"] = position_rows(data)
    # Personalized and persona runs: each predicted rater against that rater's own scores, under the
    # same filters; runs sharing a split also side by side (the persona ablations).
    result["personal"], result["ablations"] = personal_sections(
        study=data.study, runs=options.runs, questions=options.questions,
        groups=None if options.groups is None or ALL_GROUPS in options.groups else options.groups,
    )
    if options.charts:
        result["distributions"] = score_distributions(data, cells, shown_groups)
        result["scatter"] = [] if data.nominal else item_mean_scatter(data, cells, shown_groups, llm_pools)
    return result

