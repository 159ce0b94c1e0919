"""The agreement tables of Chiang & Lee (2023) from a study's cells: the analysis result (``result.py``).

Per question x group x pool: descriptives, Krippendorff's alpha with its bootstrap interval, full
agreement and ICC (cells); pairwise Kendall's tau among a pool's raters; per-rater means; each LLM
pool against the humans (Kendall's tau of item means, or the majority table of a pairwise study);
Welch's t-test between groups. ``stats`` does the arithmetic; this module only shapes and labels.
The JSON's shape is a contract: docs/analysis.md.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import numpy as np

from annotations.models import Study
from evalhub import stats
from evalhub.analysis.agreement_rows import adjusted_p, agreement_sections
from evalhub.analysis.alt_test_rows import alt_test_rows, alt_test_settings
from evalhub.analysis.cells import Cell, common_items, study_cells
from evalhub.analysis.chart_data import item_mean_scatter, score_distributions
from evalhub.analysis.per_rater import personal_sections
from evalhub.analysis.planning.costs import cost_summary
from evalhub.analysis.position_rows import position_rows
from evalhub.analysis.ppi_rows import ppi_sections
from evalhub.analysis.reading import (
    ALL_GROUPS,
    HUMAN,
    AnalysisOptions,
    Pool,
    StudyData,
    WelchUnit,
    pool_summary,
    study_data,
)
from evalhub.analysis.result import (
    AltTestSettings,
    AnalysisResult,
    CellRow,
    KendallRow,
    MajorityRow,
    Notes,
    PairwiseKendallRow,
    RaterMeanRow,
    Scale,
    Settings,
    StudySummary,
    WelchRow,
)
from evalhub.analysis.trust_notes import WELCH_TRUST_KEY, bootstrap_interval_notes, too_few_items, welch_trust

PAIRWISE_MAX_RATERS = 50  # above this, C(n, 2) scipy calls per cell cost seconds and positional raters mean little
SCHEMA_VERSION = 1


def _value(stat: stats.Stat, key: str, notes: Notes) -> float | None:
    if stat.value is None:
        notes[key] = stat.reason or "undefined"
    return stat.value


def _cell_row(cell: Cell, data: StudyData, options: AnalysisOptions) -> CellRow:
    notes: Notes = {}
    matrix = cell.compact_matrix()
    desc = stats.describe(matrix) if matrix.size else stats.Describe(0, 0, None, None, "no ratings")
    if desc.mean is None:
        notes["mean"] = desc.reason or "no ratings"
    if desc.std is None:
        notes["std"] = desc.reason or "fewer than 2 ratings"
    if matrix.size == 0:
        matrix = np.full((0, 1), np.nan)
    # A human cell's value counts are read again by the evidence (the majority, Fleiss' kappa): kept on the cell.
    # A judge's are read here only: counted by alpha and let go (held, they would cost fresh memory, page faults).
    counts = cell.value_counts() if cell.pool.kind == "human" else None
    alphas, ci = stats.alpha_with_ci(matrix, ci_level=data.ci_level, value_domain=data.domain, n_boot=options.n_boot,
                                     seed=options.seed, counts=counts)
    # The scale itself, not only the ratings seen: ratio alpha on a scale with negatives means nothing
    # even where the raters happened to use only points of 0 or more (zero, the origin, is fine).
    ratio_reason = None if data.nominal else stats.ratio_scale_reason([data.study.scale_min])
    if ratio_reason:
        alphas = {**alphas, "ratio": stats.Stat(None, ratio_reason)}
    for level, stat in alphas.items():
        if stat.value is None:
            notes[f"alpha.{level}"] = stat.reason or "undefined"
    n_pairable = int((np.sum(~np.isnan(matrix), axis=1) >= 2).sum())
    if any(stat.value is not None for stat in alphas.values()) and (few := too_few_items(n_pairable)):
        notes["alpha"] = few  # every level, and its interval: they rest on the pairable items
    interval = None if ci.low is None or ci.high is None else (ci.low, ci.high)
    if ci.low is None:
        notes["alpha_ci95"] = ci.reason or "undefined"
    elif note := bootstrap_interval_notes(interval, n_pairable, (
            f"from {ci.n_valid} of {ci.n_boot} bootstrap replicates: {ci.n_boot - ci.n_valid} had no variation "
            "(alpha undefined) and were dropped") if ci.n_valid < ci.n_boot else None):
        notes["alpha_ci95"] = note
    full_agreement = _value(stats.full_agreement_pct(matrix), "full_agreement_pct", notes)
    icc = stats.icc_one_way(matrix)
    icc1, icc1k = _value(icc.icc1, "icc1", notes), _value(icc.icc1k, "icc1k", notes)
    if icc.icc1.value is not None and icc.n_items < desc.n_items:
        # ICC needs a balanced design: only items every rater rated count (listwise deletion).
        notes["icc"] = (f"ICC uses the {icc.n_items} of {desc.n_items} items rated by all {icc.n_raters} "
                        "raters (complete items only)")
    if icc.icc1.value is not None and (few := too_few_items(icc.n_items)):
        # As alpha (issue 25 review: "ICC(1) -0.15 on 3 complete items" beside alpha's "too few items (n = 3)"):
        # the values stay, the pages show the note in their place.
        complete = f"{icc.n_items} complete item{'' if icc.n_items == 1 else 's'}"
        notes["icc"] = f"{few}: " + notes.get("icc", f"ICC(1) and ICC(1,k) rest on {complete}")
    return CellRow(
        question=cell.question, group=cell.group, pool=cell.pool.name, n_items=desc.n_items,
        n_ratings=desc.n_ratings, n_raters=int(cell.raters()[0].size), mean=desc.mean, std=desc.std,
        alpha={level: stat.value for level, stat in alphas.items()},
        alpha_ci95=interval,
        alpha_ci_n_boot=ci.n_boot, alpha_ci_n_valid=ci.n_valid, full_agreement_pct=full_agreement,
        icc1=icc1, icc1k=icc1k, icc_n_items=icc.n_items, notes=notes)


def _pairwise_row(cell: Cell) -> PairwiseKendallRow:
    n_raters = int(cell.raters()[0].size)
    if n_raters > PAIRWISE_MAX_RATERS:
        return PairwiseKendallRow(
            cell.question, cell.group, cell.pool.name, mean_tau=None, n_pairs=0, n_items=0,
            notes={"mean_tau": f"{n_raters} raters: pairwise tau is computed for at most {PAIRWISE_MAX_RATERS} raters"})
    matrix, columns = cell.rater_matrix() if cell.item.size else (np.empty((0, 0)), None)
    result = stats.mean_pairwise_kendall(matrix)
    names = [] if columns is None else \
        [cell.pool.rater_labels.get(int(cell.pool.raters[c]), str(int(cell.pool.raters[c]))) for c in columns]
    notes = _pairwise_notes(result, matrix)
    if result.undefined:
        notes["n_pairs"] = pairs_note(result, names, "sample" if cell.pool.kind == "llm" else "rater")
    n_items = int((np.sum(~np.isnan(matrix), axis=1) >= 2).sum())
    return PairwiseKendallRow(cell.question, cell.group, cell.pool.name, mean_tau=result.mean_tau,
                              n_pairs=result.n_pairs, n_items=n_items, notes=notes)


def pairs_note(result: stats.PairwiseTau, names: list[str], who: str = "rater") -> str:
    """How many pairs (of raters, or of an LLM pool's samples: ``who``) entered the mean of the possible ones, and
    why the others are undefined (issue 25 review): "1 of 3 pairs; 2 undefined: r3 gave one score to every item
    shared with another rater"."""
    constant: dict[str, None] = {}  # raters in order, once each
    others: list[str] = []
    for i, j, reason in result.undefined:
        if reason.startswith(("x is constant", "y is constant")):
            constant[names[i] if reason.startswith("x") else names[j]] = None
        else:
            others.append(f"{names[i]} and {names[j]}: {reason}")
    possible = result.n_pairs + len(result.undefined)
    why = [f"{name} gave one score to every item shared with another {who}" for name in constant] + others
    return f"{result.n_pairs} of {possible} pairs; {len(result.undefined)} undefined: {'; '.join(why)}"


def _pairwise_notes(result: stats.PairwiseTau, matrix: np.ndarray) -> Notes:
    """Why table 6's mean tau is undefined, or too few items to trust it (trust_notes, as alpha's pairable items)."""
    if result.mean_tau is None:
        return {"mean_tau": result.reason or "undefined"}
    few = too_few_items(int((np.sum(~np.isnan(matrix), axis=1) >= 2).sum()))
    return {"mean_tau": few} if few else {}


def _rater_rows(cell: Cell) -> list[RaterMeanRow]:
    if cell.group == ALL_GROUPS or cell.item.size == 0:
        return []
    raters, inverse = cell.raters()
    sums = np.bincount(inverse, weights=cell.score)
    counts = np.bincount(inverse)
    return [
        RaterMeanRow(cell.question, cell.group, cell.pool.name,
                     rater=cell.pool.rater_labels.get(int(cell.pool.raters[r]), str(int(cell.pool.raters[r]))),
                     mean=float(s / c), n=int(c))
        for r, s, c in zip(raters, sums, counts, strict=True)
    ]


def _majority_row(human: Cell, llm: Cell) -> MajorityRow:
    """A nominal pool against the human majority: on how many items its own majority choice is the
    humans' (items where either side has no majority, e.g. a 1-1 split, are left out and counted)."""
    h_items, l_items = human.items_and_inverse()[0], llm.items_and_inverse()[0]
    h_choice = stats.majority_choice(human.compact_matrix(), counts=human.value_counts())
    l_choice = stats.majority_choice(llm.compact_matrix(), counts=llm.value_counts())
    hi, li = common_items(h_items, l_items)
    result = stats.agreement_pct(h_choice[hi], l_choice[li])
    both = ~np.isnan(h_choice[hi]) & ~np.isnan(l_choice[li])
    return MajorityRow(
        llm.question, llm.group, llm.pool.name, agreement_pct=result.value, n_items=int(both.sum()),
        n_agree=int((h_choice[hi][both] == l_choice[li][both]).sum()),
        human_no_majority=int(np.isnan(h_choice[hi]).sum()), pool_no_majority=int(np.isnan(l_choice[li]).sum()),
        notes={} if result.value is not None else {"agreement_pct": result.reason or "undefined"})


def _kendall_row(human: Cell, llm: Cell) -> KendallRow:
    h_items, h_means = human.item_means()
    l_items, l_means = llm.item_means()
    hi, li = common_items(h_items, l_items)
    result = stats.kendall_tau(h_means[hi], l_means[li])
    # As alpha, kappa and ICC on the same page (issue 25 review, U6: tau stood on 3 items beside their "too few
    # items (n = 3)"): the value stays in the result, the pages show the note in its place.
    note = _tau_reason(result, h_means[hi], l_means[li]) if result.tau is None else too_few_items(result.n)
    return KendallRow(llm.question, llm.group, llm.pool.name, tau=result.tau, p=result.p,
                      p_method=result.p_method, n=result.n,
                      band=stats.tau_band(result.tau, result.p), notes={"tau": note} if note else {})


def _tau_reason(result: stats.TauResult, human: np.ndarray, pool: np.ndarray) -> str:
    """Why tau is undefined, in words (issue 25 review, U1: "x is constant over the 3 paired items" named an internal
    variable): "the human raters' item means are all equal (4.33) on the 3 items"."""
    for who, means in (("the human raters'", human), ("the LLM pool's", pool)):
        if means.size >= 2 and means.min() == means.max():
            return f"{who} item means are all equal ({float(means[0]):.2f}) on the {means.size} items"
    return result.reason or "undefined"


def contrasts(study: Study, groups: list[str]) -> list[tuple[str, str]]:
    """The study's group pairs for Welch's test; an empty Study.contrasts means every pair, in group order."""
    if study.contrasts:
        return [(str(a), str(b)) for a, b in study.contrasts]
    return list(itertools.combinations(groups, 2))


def _item_means(cell: Cell | None) -> np.ndarray:
    return np.empty(0) if cell is None else cell.item_means()[1]


def _welch_row(question: str, pool: Pool, a: Cell | None, b: Cell | None, group_a: str, group_b: str,
               unit: WelchUnit) -> WelchRow:
    def values(cell: Cell | None) -> np.ndarray:
        if cell is None:
            return np.empty(0)
        return cell.item_means()[1] if unit == "item means" else cell.score

    va, vb = values(a), values(b)
    result = stats.welch(va, vb, unit=unit)
    computed = {"t": result.t, "df": result.df, "p": result.p, "mean_diff": result.mean_diff,
                "cohens_d": result.cohens_d}
    notes = {key: result.reason for key, value in computed.items() if value is None} if result.reason else {}
    # As the agreement statistics (issue 25 review, M1: t = 19, d = 15.5 and a star on 3 vs 3 items, one side's
    # item means all 4.33): t, p and d stay, the note says why the pages show it in their place. On all individual
    # ratings the same minimum of items per side holds (fourth review, M1: 9 ratings of 3 items are not 9
    # independent observations); the no-variation rule is about item means only.
    means_a, means_b = (values(c) if unit == "item means" else _item_means(c) for c in (a, b))
    if result.p is not None and (trust := welch_trust(
            sides=(group_a, group_b), n_items=(means_a.size, means_b.size),
            item_means=(means_a, means_b) if unit == "item means" else None)):
        notes[WELCH_TRUST_KEY] = trust
    return WelchRow(question, pool.name, group_a, group_b, mean_a=float(va.mean()) if va.size else None,
                    mean_b=float(vb.mean()) if vb.size else None, test=result, notes=notes, p_adjusted=None,
                    p_family=0)


def study_analysis(*, study: Study, options: AnalysisOptions | None = None) -> AnalysisResult:
    """The study's agreement tables (``AnalysisResult.to_json`` is the JSON of docs/analysis.md)."""
    options = options or AnalysisOptions()
    data = study_data(study=study, options=options)
    return analysis_from_data(data, options)


def _shown_groups(data: StudyData, options: AnalysisOptions) -> list[str]:
    shown = [g for g in data.groups if options.groups is None or g in options.groups]
    # The pooled cell is asked for like a group: the paper's tables are per group, and pooling doubles the work.
    if len(data.groups) > 1 and options.groups is not None and ALL_GROUPS in options.groups:
        shown.append(ALL_GROUPS)
    return shown


def _shown_items(data: StudyData, shown_groups: list[str]) -> np.ndarray | None:
    """Which items the tables shown count (a boolean per item position), for the pools' counts; None: every item (no
    group left out, or the pooled cell shown)."""
    if ALL_GROUPS in shown_groups or len(shown_groups) == len(data.groups):
        return None
    return np.isin(data.item_group, [data.groups.index(g) for g in shown_groups])


def _summary(data: StudyData) -> StudySummary:
    study = data.study
    return StudySummary(slug=study.slug, title=study.title, scale=Scale(study.scale_min, study.scale_max),
                        questions=tuple(q.key for q in data.questions), groups=tuple(data.groups),
                        contrasts=tuple(contrasts(study, data.groups)), n_items=int(data.item_ids.size))


def _settings(data: StudyData, options: AnalysisOptions, alt_settings: AltTestSettings) -> Settings:
    return Settings(ci_level=data.ci_level, ci_n_boot=options.n_boot, ci_seed=options.seed,
                    measurement="nominal" if data.nominal else "ordinal", welch_unit=options.welch_unit,
                    value_domain=tuple(data.domain), pairwise_max_raters=PAIRWISE_MAX_RATERS, alt_test=alt_settings)


@dataclass
class _Tables:
    """Chiang & Lee's tables, filled cell by cell."""

    cells: list[CellRow] = field(default_factory=list)
    kendall: list[KendallRow] = field(default_factory=list)
    welch: list[WelchRow] = field(default_factory=list)
    pairwise_kendall: list[PairwiseKendallRow] = field(default_factory=list)
    rater_means: list[RaterMeanRow] = field(default_factory=list)
    majority: list[MajorityRow] = field(default_factory=list)


def _paper_tables(data: StudyData, cells: dict[tuple[str, str, str], Cell], shown_groups: list[str],
                  options: AnalysisOptions) -> _Tables:
    out = _Tables()
    for question in data.questions:
        for group in shown_groups:
            for pool in data.pools:
                cell = cells[(question.key, group, pool.name)]
                out.cells.append(_cell_row(cell, data, options))
                out.rater_means.extend(_rater_rows(cell))
                if data.nominal:
                    if pool.kind == "llm":
                        out.majority.append(_majority_row(cells[(question.key, group, HUMAN)], cell))
                    continue
                out.pairwise_kendall.append(_pairwise_row(cell))
                if pool.kind == "llm":
                    out.kendall.append(_kendall_row(cells[(question.key, group, HUMAN)], cell))
    out.welch = [] if data.nominal else _welch_rows(data, cells, options.groups, options.welch_unit)
    return out


def _welch_rows(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: tuple[str, ...] | None,
                unit: WelchUnit) -> list[WelchRow]:
    """Welch's test of every contrast with a group among ``groups`` (None: every contrast), per question and pool."""
    rows = []
    for question in data.questions:
        for pool in data.pools:
            for group_a, group_b in contrasts(data.study, data.groups):
                if groups is not None and not {group_a, group_b} & set(groups):
                    continue
                rows.append(_welch_row(question.key, pool, cells.get((question.key, group_a, pool.name)),
                                       cells.get((question.key, group_b, pool.name)), group_a, group_b, unit))
    return rows


def _welch_adjusted(data: StudyData, options: AnalysisOptions, shown: list[WelchRow]) -> list[WelchRow]:
    """The rows shown with their Benjamini-Hochberg p adjusted over the analysis's whole family: every question,
    pool and contrast of the study, whatever the filter shows (issue 25 review: filtered to one question, the same
    contrast got a smaller adjusted p), and the family's size (defined p-values only, as ``stats.bh_adjust``)."""
    family = shown
    if options.questions is not None or options.groups is not None or options.runs is not None:
        everything = study_data(study=data.study, options=replace(options, questions=None, groups=None, runs=None))
        family = _welch_rows(everything, study_cells(everything), None, options.welch_unit)
    adjusted = {_welch_key(row): p for row, p in zip(family, adjusted_p(family), strict=True)}
    size = sum(row.test.p is not None for row in family)
    return [replace(row, p_adjusted=adjusted.get(_welch_key(row)), p_family=size) for row in shown]


def _welch_key(row: WelchRow) -> tuple[str, str, str, str]:
    return row.question, row.pool, row.group_a, row.group_b


def _not_computed(data: StudyData) -> dict[str, str] | None:
    if not data.nominal:
        return None
    # A/B choices and named labels are categories: no ranks to correlate (Kendall), no means to compare (Welch).
    what = "choices are nominal (A/B)" if data.study.is_pairwise else "labels are nominal categories"
    return dict.fromkeys(("kendall", "welch", "pairwise_kendall"),
                         f"{data.study.kind} study: {what}; see alpha (nominal) and the majority table")


def analysis_from_data(data: StudyData, options: AnalysisOptions) -> AnalysisResult:
    cells = study_cells(data)
    shown_groups = _shown_groups(data, options)
    alt_settings = alt_test_settings(data, options)
    tables = _paper_tables(data, cells, shown_groups, options)
    # Issue 19: kappa, confusion and the human ceiling beside the verdict; stars and sentences on the
    # Welch contrasts use Benjamini-Hochberg adjusted p-values (raw p stays in "p").
    evidence = agreement_sections(data, cells, shown_groups, options, tables.cells)
    welch = _welch_adjusted(data, options, tables.welch)
    # Personalized and persona runs: each predicted rater against that rater's own scores, under the
    # same filters; runs sharing a split also side by side (the persona ablations).
    personal, ablations = personal_sections(
        study=data.study, runs=options.runs, questions=options.questions,
        groups=None if options.groups is None or ALL_GROUPS in options.groups else options.groups,
    )
    llm_pools = [p for p in data.pools if p.kind == "llm"]
    # Issue 27: the human means helped by each judge, where the human-rated items are a random subset.
    ppi, ppi_differences, ppi_note = ppi_sections(data, cells, shown_groups, contrasts(data.study, data.groups),
                                                  options)
    shown_items = _shown_items(data, shown_groups)
    pools = tuple(pool_summary(p, shown_items) for p in data.pools)
    return AnalysisResult(
        schema=SCHEMA_VERSION, study=_summary(data), settings=_settings(data, options, alt_settings),
        pools=pools, cells=tuple(tables.cells), kendall=tuple(tables.kendall),
        welch=tuple(welch), pairwise_kendall=tuple(tables.pairwise_kendall),
        rater_means=tuple(tables.rater_means), majority=tuple(tables.majority), not_computed=_not_computed(data),
        # The verdict: may each LLM pool replace the human raters (the alternative annotator test)?
        alt_test=tuple(alt_test_rows(data, cells, shown_groups, alt_settings)),
        kappa=evidence.kappa, confusion=evidence.confusion, ceiling=evidence.ceiling,
        # Issue 19: a pairwise judge's position bias, from the swapped samples (which count nowhere else).
        position_bias=tuple(position_rows(data)), personal=tuple(personal), ablations=tuple(ablations),
        ppi=ppi, ppi_differences=ppi_differences, ppi_note=ppi_note,
        distributions=tuple(score_distributions(data, cells, shown_groups)) if options.charts else None,
        scatter=None if not options.charts else () if data.nominal else tuple(
            item_mean_scatter(data, cells, shown_groups, llm_pools)),
        # Human beside judge cost per rating, for a study published on Prolific only (absent otherwise).
        cost=cost_summary(study=data.study, runs={p.run_id: p.name for p in pools if p.kind == "llm" and p.run_id}),
    )
