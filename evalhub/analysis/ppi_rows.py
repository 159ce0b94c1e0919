"""Prediction-powered inference in the analysis (issue 27): per question x group x LLM pool, the PPI++ mean
human score beside the humans-only one, and per contrast the PPI++ group difference beside Welch's.

PPI's guarantee needs the human-rated items to be a random subset of each group's items. The analysis
computes it only where the study says so (``Study.human_subset``): a subset EvalHub drew (items marked
``in_human_subset``, each group drawn uniformly) or one the researcher declares drawn at random elsewhere
(``{"declared_random": true}``). Elsewhere the rows are absent and ``ppi_note`` says why: no random subset,
human ratings outside the drawn subset (items chosen by hand), every item human-rated (PPI adds nothing).

Y is an item's mean human score and f the pool's mean over its samples (``Cell.item_means``). The labelled
items of a group are those with both; the unlabelled ones have the pool's scores and no human rating. A
drawn item nobody rated counts as unlabelled: that is harmless only when whether it was rated says nothing
of its score. The pooled "(all)" cell gets no row: a draw per group with a count gives the groups unequal
inclusion probabilities, and the unweighted pooled mean would then be biased.
"""

from __future__ import annotations

import math

import numpy as np
from django.template.defaultfilters import pluralize

from annotations.selectors import counted_items
from evalhub.analysis.cells import Cell
from evalhub.analysis.reading import ALL_GROUPS, HUMAN, AnalysisOptions, StudyData
from evalhub.analysis.result import PPIDifferenceRow, PPIRow
from evalhub.stats.ppi.mean import PPIGroup, PPIMean, ppi_mean, ppi_mean_difference

Cells = dict[tuple[str, str, str], Cell]

NOT_DECLARED = ("no random subset of human-rated items was drawn or declared (the study's human subset setting): "
                "if the items people rated were chosen by hand, PPI's guarantee does not hold, so no PPI figure "
                "is given")
NOT_DRAWN = "the study's human subset has not been drawn yet: no PPI figure until it is"
EVERY_ITEM = "every item has human ratings: PPI adds nothing to the humans-only figures"
NO_JUDGE = "no LLM pool: PPI needs a judge's scores on the items people did not rate"
NO_RATINGS = "nobody has rated yet: PPI needs human ratings of the random subset"
NOMINAL = "the scores are categories (nominal study): PPI estimates mean scores"
# Normal intervals on few human-rated items cover less than they say: on SummEval (M11, 100 items, 2,000 random
# draws) the 95 % interval covered 58 % at n = 2, 68 % at 3, 80 % at 5 and 90 % at 10. Rows below FEW_LABELLED
# carry the note "interval" (JSON keeps the figures); below WITHHELD_BELOW the dashboard shows the note alone.
FEW_LABELLED = 20
WITHHELD_BELOW = 10


def few_labelled_note(n: int) -> str:
    return (f"few human-rated items (n = {n}): normal 95 % intervals on fewer than {FEW_LABELLED} cover less "
            f"than they say (about 90 % at n = 10, 58 % at n = 2 on SummEval)")


def ppi_sections(
    data: StudyData, cells: Cells, shown_groups: list[str], contrast_pairs: list[tuple[str, str]],
    options: AnalysisOptions,
) -> tuple[tuple[PPIRow, ...] | None, tuple[PPIDifferenceRow, ...] | None, str | None]:
    """(ppi rows, ppi difference rows, None) where PPI applies, else (None, None, why not)."""
    note = ppi_not_applicable(data, cells)
    if note is not None:
        return None, None, note
    groups = [g for g in shown_groups if g != ALL_GROUPS]
    rows: list[PPIRow] = []
    differences: list[PPIDifferenceRow] = []
    for question in data.questions:
        for pool in (p for p in data.pools if p.kind == "llm"):
            human = {g: cells[(question.key, g, HUMAN)] for g in data.groups}
            judged = {g: cells[(question.key, g, pool.name)] for g in data.groups}
            split = {g: _ppi_group(human[g], judged[g]) for g in data.groups}
            for group in groups:
                rows.append(_ppi_row(question.key, group, pool.name, split[group]))
            for group_a, group_b in contrast_pairs:
                if options.groups is not None and not {group_a, group_b} & set(options.groups):
                    continue
                if group_a in split and group_b in split:
                    differences.append(_difference_row(question.key, pool.name, group_a, group_b, split))
    return tuple(rows), tuple(differences), None


def ppi_not_applicable(data: StudyData, cells: Cells) -> str | None:
    """Why PPI does not apply to this study's analysis, or None when it does (module docstring)."""
    setting = data.study.human_subset or {}
    if data.nominal:
        return NOMINAL
    if not setting:
        return NOT_DECLARED
    if not any(p.kind == "llm" for p in data.pools):
        return NO_JUDGE
    human = data.pools[0]
    # A count per item, not np.unique: no sort of the human ratings (110 ms -> a few ms at 600,000 of them).
    rated = np.flatnonzero(np.bincount(human.item, minlength=data.item_ids.size))
    if rated.size == 0:
        return NO_RATINGS
    if not setting.get("declared_random"):
        items = counted_items(study=data.study)
        subset_ids = np.fromiter(items.filter(in_human_subset=True).values_list("id", flat=True), dtype=np.int64)
        if subset_ids.size == 0:
            return NOT_DRAWN
        if (late := items.filter(inclusion_probability__isnull=True).count()):
            return (f"{late} item{pluralize(late)} {pluralize(late, 'was,were')} added after the human subset was "
                    "drawn and could not be drawn: save the study's human subset setting again to redraw it "
                    "(possible while nobody has rated)")
        outside = np.setdiff1d(data.item_ids[rated], subset_ids, assume_unique=True)
        if outside.size:
            n = outside.size
            return (f"{n} human-rated item{pluralize(n)} {pluralize(n, 'lies,lie')} outside the drawn random subset: "
                    "the items people rated were not all drawn at random, so PPI's guarantee does not hold "
                    "and no PPI figure is given")
    if rated.size == data.item_ids.size:
        return EVERY_ITEM
    return None


def _ppi_group(human: Cell, judged: Cell) -> PPIGroup:
    """The group's labelled (Y, f) pairs and its unlabelled f, items in index order."""
    h_items, h_means = human.item_means()
    j_items, j_means = judged.item_means()
    _, hi, ji = np.intersect1d(h_items, j_items, assume_unique=True, return_indices=True)
    unlabelled = np.ones(j_items.size, dtype=bool)
    unlabelled[ji] = False
    return PPIGroup(y_labelled=h_means[hi], f_labelled=j_means[ji], f_unlabelled=j_means[unlabelled])


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _ppi_row(question: str, group: str, pool: str, data: PPIGroup) -> PPIRow:
    result: PPIMean = ppi_mean(y_labelled=data.y_labelled, f_labelled=data.f_labelled,
                               f_unlabelled=data.f_unlabelled)
    return PPIRow(
        question=question, group=group, pool=pool, estimate=_number(result.estimate),
        ci_low=_number(result.ci_low), ci_high=_number(result.ci_high), lam=_number(result.lam),
        n_labelled=result.n_labelled, n_unlabelled=result.n_unlabelled, effective_n=_number(result.effective_n),
        extra_items=_number(result.extra_items), humans_only_estimate=_number(result.classical_estimate),
        humans_only_ci_low=_number(result.classical_ci_low), humans_only_ci_high=_number(result.classical_ci_high),
        notes={"estimate": result.reason} if result.reason is not None
        else {"interval": few_labelled_note(result.n_labelled)} if result.n_labelled < FEW_LABELLED else {},
    )


def _difference_row(question: str, pool: str, group_a: str, group_b: str,
                    split: dict[str, PPIGroup]) -> PPIDifferenceRow:
    result = ppi_mean_difference(group_a=split[group_a], group_b=split[group_b])
    reason = result.reason
    if reason is not None:  # name the group, not "a" or "b"
        reason = reason.replace("group a:", f"group {group_a}:", 1).replace("group b:", f"group {group_b}:", 1)
    fewest = min(len(np.asarray(split[group].y_labelled)) for group in (group_a, group_b))
    notes = {"difference": reason} if reason is not None \
        else {"interval": few_labelled_note(fewest)} if fewest < FEW_LABELLED else {}
    return PPIDifferenceRow(
        question=question, pool=pool, groups=(group_a, group_b), difference=_number(result.estimate),
        ci_low=_number(result.ci_low), ci_high=_number(result.ci_high), p=_number(result.p), notes=notes,
    )
