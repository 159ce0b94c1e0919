"""Selectors that turn a study's ratings into matrices and the agreement tables of Chiang & Lee (2023).

The database is read in two queries per study (human ratings, ok LLM ratings), each returning
integer ids and a float score only; everything after that is numpy. Per question x group x pool a
*cell* holds the pool's ratings as two matrices (rows = items, NaN = missing):

- the *compact* matrix, whose column j is an item's j-th rating. Krippendorff's alpha, full
  agreement, the descriptives and the one-way ICC treat raters as interchangeable within an item,
  so they are unchanged by that reordering, and the matrix stays small when many crowd workers
  each rate a few items (1,000 workers x 200,000 items would not fit in memory as rater columns);
- the *rater* matrix, whose columns are the pool's raters (human raters, or a judge run's sample
  indices), built only for the pairwise Kendall's tau (table 6), which needs rater identity.

A pool is "human" (every HumanRating of the study) or one JudgeRun of the study, whose samples act
as raters; only status "ok" LLM ratings enter the statistics, the others are counted per run.
``stats`` does the arithmetic; this module only selects, shapes and labels.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, QuerySet

from annotations.models import HumanRating, Item, Question, Rater, Study
from evalhub import stats
from evalhub.per_rater_analysis import PER_RATER_KINDS, per_rater_predictions, personal_sections
from llmjudge.models import JudgeRun, LLMRating

HUMAN = "human"
ALL_GROUPS = "(all)"  # the pooled cell over every group, on request; parentheses keep it apart from group names
CI_LEVEL: stats.Level = "ordinal"
PAIRWISE_MAX_RATERS = 50  # above this, C(n, 2) scipy calls per cell cost seconds and positional raters mean little
SCHEMA_VERSION = 1
WelchUnit = Literal["item means", "ratings"]


def regular_items(study: Study) -> QuerySet[Item]:
    """The items that count in the statistics: not gold items (their known answers check raters).

    Attention checks are stored apart from ratings (AttentionCheck), so they never reach here. The
    analysis reads items through this function only, and drops rating rows of any other item in numpy
    (cheaper than a join on a million rows).
    """
    return Item.objects.filter(study=study, kind=Item.Kind.NORMAL)


@dataclass(frozen=True)
class AnalysisOptions:
    """What to analyse. None means everything; the human pool is always read (Kendall needs it)."""

    runs: tuple[int, ...] | None = None
    questions: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None
    welch_unit: WelchUnit = "item means"
    n_boot: int = 1000
    seed: int = 0
    charts: bool = False  # also return score distributions and the item-mean scatter


@dataclass
class Pool:
    name: str
    kind: Literal["human", "llm"]
    run_id: int | None = None
    judge: str | None = None
    run_status: str | None = None
    status_counts: dict[str, int] = field(default_factory=dict)
    rater_labels: dict[int, str] = field(default_factory=dict)
    # Parallel arrays of the pool's counted ratings, filled by _fill.
    item: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    question: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    rater: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    score: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=float))
    raters: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # distinct rater ids
    rater_index: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # into raters, per rating

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "run_id": self.run_id,
            "judge": self.judge,
            "run_status": self.run_status,
            "n_raters": int(self.raters.size),
            "n_ratings": int(self.score.size),
            "status_counts": self.status_counts,
        }


def pool_names(study: Study) -> dict[int, str]:
    """Run id -> pool name: the judge's name, suffixed "#<run id>" when the judge ran more than once here.

    The CSV export and the dashboard use the same names.
    """
    runs = list(JudgeRun.objects.filter(study=study).order_by("id").values_list("id", "judge__name"))
    per_judge = Counter(name for _, name in runs)
    return {
        run_id: name if per_judge[name] == 1 and name != HUMAN else f"{name}#{run_id}" for run_id, name in runs
    }


# ---------------------------------------------------------------------------
# Reading


def human_rows_sql(question_ids: list[int]) -> tuple[str, tuple[Any, ...]]:
    """SQL of (item_id, question_id, rater_id, score) for the human ratings of these questions.

    A question belongs to one study (and a trigger keeps every rating's item in its question's
    study), so the question ids select the study's ratings without a join; no ORDER BY (Meta.ordering
    would add three joins), numpy sorts.
    """
    qs = HumanRating.objects.filter(question_id__in=question_ids).order_by()
    return qs.values_list("item_id", "question_id", "rater_id", "score").query.sql_with_params()


def llm_rows_sql(run_ids: list[int], question_ids: list[int]) -> tuple[str, tuple[Any, ...]]:
    """SQL of (run_id, item_id, question_id, sample, score) for the ok ratings of these runs and questions."""
    qs = LLMRating.objects.filter(run_id__in=run_ids, status=LLMRating.Status.OK, question_id__in=question_ids)
    return qs.order_by().values_list("run_id", "item_id", "question_id", "sample", "score").query.sql_with_params()


def fetch_matrix(sql: str, params: tuple[Any, ...], n_columns: int) -> np.ndarray:
    """Run a query of numeric columns and return its rows as one float array (n, n_columns).

    A raw cursor and np.fromiter skip Django's per-row model/values machinery: at a million rows
    that machinery costs more than the statistics.
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=float, count=len(rows) * n_columns)
    return flat.reshape(len(rows), n_columns)


@dataclass
class StudyData:
    study: Study
    questions: list[Question]
    groups: list[str]
    item_ids: np.ndarray  # sorted Item pks
    item_group: np.ndarray  # group index per item (aligned with item_ids)
    pools: list[Pool]

    @property
    def nominal(self) -> bool:
        """Pairwise studies hold choices (1 = A, 2 = B, 3 = tie): categories, not amounts."""
        return self.study.is_pairwise

    @property
    def ci_level(self) -> stats.Level:
        return "nominal" if self.nominal else CI_LEVEL

    @property
    def domain(self) -> list[float]:
        """The study scale with half points: the value domain of ordinal alpha (a pairwise study's
        choices have no half points: its domain is the choices)."""
        s = self.study
        if self.nominal:
            return [float(v) for v in s.scale_points()]
        return [s.scale_min + k / 2 for k in range(2 * (s.scale_max - s.scale_min) + 1)]


def _study_groups(study: Study, present: list[str]) -> list[str]:
    declared = [g for g in study.groups if g in present]
    return declared + sorted(set(present) - set(declared))


def study_data(*, study: Study, options: AnalysisOptions) -> StudyData:
    """Read everything the analysis needs: items, and each pool's ratings as numpy arrays."""
    questions = list(study.questions.order_by("order", "id"))
    if options.questions is not None:
        questions = [q for q in questions if q.key in options.questions]
    question_ids = [q.pk for q in questions]

    items = list(regular_items(study).order_by("id").values_list("id", "group"))
    groups = _study_groups(study, sorted({g for _, g in items}))
    group_index = {g: n for n, g in enumerate(groups)}
    item_ids = np.array([i for i, _ in items], dtype=np.int64)
    item_group = np.array([group_index[g] for _, g in items], dtype=np.int64)

    human = Pool(name=HUMAN, kind="human")
    human.rater_labels = {pk: ext or f"rater-{pk}" for pk, ext in Rater.objects.filter(study=study).values_list(
        "id", "external_id")}
    rows = fetch_matrix(*human_rows_sql(question_ids), 4) if question_ids else np.empty((0, 4))
    _fill(human, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], item_ids, questions)
    pools = [human]

    names = pool_names(study)
    runs = JudgeRun.objects.filter(study=study).select_related("judge").order_by("id")
    if options.runs is not None:
        runs = runs.filter(id__in=options.runs)
    runs = list(runs)
    if runs:
        run_ids = [r.pk for r in runs]
        rows = fetch_matrix(*llm_rows_sql(run_ids, question_ids), 5) if question_ids else np.empty((0, 5))
        run_col = rows[:, 0].astype(np.int64)
        order = np.argsort(run_col, kind="stable")
        rows, run_col = rows[order], run_col[order]
        # Ratings that do not count (refused, unparseable, error, pending) are few: count them row by row.
        regular = set(item_ids.tolist())
        not_ok: dict[int, Counter[str]] = {r: Counter() for r in run_ids}
        for run_id, item_id, status in (
            LLMRating.objects.filter(run_id__in=run_ids, question_id__in=question_ids)
            .exclude(status=LLMRating.Status.OK)
            .order_by()
            .values_list("run_id", "item_id", "status")
        ):
            if item_id in regular:
                not_ok[run_id][status] += 1
        for run in runs:
            lo = np.searchsorted(run_col, run.pk, side="left")
            hi = np.searchsorted(run_col, run.pk, side="right")
            pool = Pool(name=names[run.pk], kind="llm", run_id=run.pk, judge=run.judge.name, run_status=run.status)
            part = rows[lo:hi]
            if run.judge.kind in PER_RATER_KINDS:
                # A per-rater run's raters are the humans it predicts, one vote of its samples each.
                votes = [(i, q, r, v) for (i, q, r), v in per_rater_predictions(run_id=run.pk).items()
                         if v is not None and q in question_ids]
                part = np.array([(run.pk, *row) for row in votes], dtype=float).reshape(-1, 5)
            _fill(pool, part[:, 1], part[:, 2], part[:, 3], part[:, 4], item_ids, questions)
            if run.judge.kind in PER_RATER_KINDS:
                pool.rater_labels = {int(r): human.rater_labels.get(int(r), f"rater-{int(r)}") for r in pool.raters}
            else:
                pool.rater_labels = {int(s): f"sample-{int(s)}" for s in pool.raters}
            pool.status_counts = {
                LLMRating.Status.OK.value: int(pool.score.size), **dict(sorted(not_ok[run.pk].items()))}
            pools.append(pool)
    return StudyData(study=study, questions=questions, groups=groups, item_ids=item_ids, item_group=item_group,
                     pools=pools)


def _fill(pool: Pool, item: np.ndarray, question: np.ndarray, rater: np.ndarray, score: np.ndarray,
          item_ids: np.ndarray, questions: list[Question]) -> None:
    """Store a pool's ratings of regular items, with item and question as indices into the study's lists."""
    item = item.astype(np.int64)
    position = np.searchsorted(item_ids, item)
    regular = item_ids[np.minimum(position, max(item_ids.size - 1, 0))] == item if item_ids.size else \
        np.zeros(item.size, dtype=bool)
    if not regular.all():
        position, question, rater, score = position[regular], question[regular], rater[regular], score[regular]
    pool.item = position
    question_pks = np.array([q.pk for q in questions], dtype=np.int64)
    order = np.argsort(question_pks)
    pool.question = order[np.searchsorted(question_pks[order], question.astype(np.int64))] if questions else \
        np.empty(0, dtype=np.int64)
    pool.rater = rater.astype(np.int64)
    pool.score = np.asarray(score, dtype=float)
    pool.raters, pool.rater_index = np.unique(pool.rater, return_inverse=True)


# ---------------------------------------------------------------------------
# Cells


@dataclass
class Cell:
    """One question x group x pool: its ratings, sorted by item then rater."""

    question: str
    group: str
    pool: Pool
    item: np.ndarray  # study item index per rating
    rater: np.ndarray  # index into pool.raters
    score: np.ndarray
    _items: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _means: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _raters: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def raters(self) -> tuple[np.ndarray, np.ndarray]:
        """(the pool's rater indices present in this cell, column of each rating).

        Counting over the pool's dense rater index avoids a sort per cell.
        """
        if self._raters is None:
            present = np.bincount(self.rater, minlength=self.pool.raters.size) > 0
            column_of = np.cumsum(present) - 1
            self._raters = (np.flatnonzero(present), column_of[self.rater])
        return self._raters

    def items_and_inverse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(unique item indices, row of each rating, first rating of each item); ratings are item-sorted."""
        if self._items is None:
            new_item = np.empty(self.item.size, dtype=bool)
            new_item[:1] = True
            np.not_equal(self.item[1:], self.item[:-1], out=new_item[1:])
            starts = np.flatnonzero(new_item)
            self._items = (self.item[starts], np.cumsum(new_item) - 1, starts)
        return self._items

    def compact_matrix(self) -> np.ndarray:
        items, inverse, starts = self.items_and_inverse()
        if items.size == 0:
            return np.empty((0, 0))
        position = np.arange(self.item.size) - starts[inverse]
        matrix = np.full((items.size, int(position.max()) + 1), np.nan)
        matrix[inverse, position] = self.score
        return matrix

    def rater_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """(rater matrix, rater id of each column)."""
        items, inverse, _ = self.items_and_inverse()
        raters, column = self.raters()
        matrix = np.full((items.size, raters.size), np.nan)
        matrix[inverse, column] = self.score
        return matrix, raters

    def item_means(self) -> tuple[np.ndarray, np.ndarray]:
        """(item indices, mean score of each)."""
        if self._means is None:
            items, inverse, _ = self.items_and_inverse()
            sums = np.bincount(inverse, weights=self.score, minlength=items.size)
            counts = np.bincount(inverse, minlength=items.size)
            self._means = (items, sums / np.maximum(counts, 1))
        return self._means


def _cells(data: StudyData) -> dict[tuple[str, str, str], Cell]:
    """Split every pool into question x group cells (plus the pooled ALL_GROUPS cell per question)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    n_groups = len(data.groups)
    n_items = max(int(data.item_ids.size), 1)
    for pool in data.pools:
        group = data.item_group[pool.item] if pool.item.size else np.empty(0, dtype=np.int64)
        block = pool.question * n_groups + group
        rater_index = pool.rater_index
        n_raters = max(int(pool.raters.size), 1)
        if (len(data.questions) * n_groups + 1) * n_items * n_raters < 2**62:
            order = np.argsort((block * n_items + pool.item) * n_raters + rater_index, kind="stable")
        else:  # would overflow int64: slower but exact
            order = np.lexsort((rater_index, pool.item, block))
        item, rater, score, block = pool.item[order], rater_index[order], pool.score[order], block[order]
        bounds = np.searchsorted(block, np.arange(len(data.questions) * n_groups + 1))
        for qi, question in enumerate(data.questions):
            for gi, group_name in enumerate(data.groups):
                lo, hi = bounds[qi * n_groups + gi], bounds[qi * n_groups + gi + 1]
                cells[(question.key, group_name, pool.name)] = Cell(
                    question.key, group_name, pool, item[lo:hi], rater[lo:hi], score[lo:hi])
            if n_groups > 1:
                lo, hi = bounds[qi * n_groups], bounds[(qi + 1) * n_groups]
                # Groups are disjoint item sets, so the concatenated slices stay item-contiguous.
                cells[(question.key, ALL_GROUPS, pool.name)] = Cell(
                    question.key, ALL_GROUPS, pool, item[lo:hi], rater[lo:hi], score[lo:hi])
    return cells


# ---------------------------------------------------------------------------
# The analysis


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
    row["alpha"] = {}
    for level, stat in alphas.items():
        row["alpha"][level] = stat.value
        if stat.value is None:
            notes[f"alpha.{level}"] = stat.reason or "undefined"
    row["alpha_ci95"] = None if ci.low is None else [ci.low, ci.high]
    if ci.low is None:
        notes["alpha_ci95"] = ci.reason or "undefined"
    row["full_agreement_pct"] = _value(stats.full_agreement_pct(matrix), "full_agreement_pct", notes)
    icc1, icc1k = stats.icc1_and_icc1k(matrix)
    row["icc1"] = _value(icc1, "icc1", notes)
    row["icc1k"] = _value(icc1k, "icc1k", notes)
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
    """A pairwise pool against the human majority: on how many items its own majority choice is the
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
    row = {"question": question, "pool": pool.name, "group_a": group_a, "group_b": group_b,
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


CACHE_SECONDS = 600


def ratings_fingerprint(study: Study) -> tuple[Any, ...]:
    """What the analysis of `study` depends on, cheaply: counts and last change of ratings, items and runs.

    Any new, edited or deleted rating changes a count or a last-updated time; a new or finished run
    changes the run list. Edits that touch none of these (an item's group renamed in the admin) are
    caught by the cache timeout.
    """
    question_ids = list(study.questions.values_list("id", flat=True))
    human = HumanRating.objects.filter(question_id__in=question_ids).order_by().aggregate(
        n=Count("id"), last=Max("updated_at"))
    llm = LLMRating.objects.filter(question_id__in=question_ids).order_by().aggregate(
        n=Count("id"), last=Max("updated_at"))
    items = regular_items(study).order_by().aggregate(n=Count("id"), last=Max("id"))
    runs = tuple(JudgeRun.objects.filter(study=study).order_by("id").values_list("id", "status", "judge__name"))
    return (study.slug, study.title, tuple(question_ids), study.scale_min, study.scale_max, tuple(study.groups),
            repr(study.contrasts), tuple(human.values()), tuple(llm.values()), tuple(items.values()), runs)


def study_analysis_cached(*, study: Study, options: AnalysisOptions | None = None) -> dict[str, Any]:
    """``study_analysis`` through the cache, keyed by the options and ``ratings_fingerprint``.

    A dashboard is opened again and again on data that has not changed; a million-rating study
    then costs two aggregate queries instead of the whole analysis.
    """
    options = options or AnalysisOptions()
    digest = hashlib.sha256(repr((options, ratings_fingerprint(study))).encode()).hexdigest()[:32]
    key = f"evalhub:analysis:{SCHEMA_VERSION}:{study.pk}:{digest}"
    result = cache.get(key)
    if result is None:
        result = study_analysis(study=study, options=options)
        cache.set(key, result, CACHE_SECONDS)
    return result


def analysis_from_data(data: StudyData, options: AnalysisOptions) -> dict[str, Any]:
    cells = _cells(data)
    shown_groups = [g for g in data.groups if options.groups is None or g in options.groups]
    # The pooled cell is asked for like a group: the paper's tables are per group, and pooling doubles the work.
    if len(data.groups) > 1 and options.groups is not None and ALL_GROUPS in options.groups:
        shown_groups.append(ALL_GROUPS)
    llm_pools = [p for p in data.pools if p.kind == "llm"]
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
                     "pairwise_max_raters": PAIRWISE_MAX_RATERS},
        "pools": [p.as_json() for p in data.pools],
        "cells": [],
        "kendall": [],
        "welch": [],
        "pairwise_kendall": [],
        "rater_means": [],
        "majority": [],
    }
    if data.nominal:
        # A/B choices are categories: no ranks to correlate (Kendall) and no means to compare (Welch).
        result["not_computed"] = dict.fromkeys(
            ("kendall", "welch", "pairwise_kendall"),
            "pairwise study: choices are nominal (A/B); see alpha (nominal) and the majority table",
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
    # Personalized and persona runs: each predicted rater against that rater's own scores, under the
    # same filters; runs sharing a split also side by side (the persona ablations).
    result["personal"], result["ablations"] = personal_sections(
        study=data.study, runs=options.runs, questions=options.questions,
        groups=None if options.groups is None or ALL_GROUPS in options.groups else options.groups,
    )
    if options.charts:
        result["distributions"] = _distributions(data, cells, shown_groups)
        result["scatter"] = [] if data.nominal else _scatter(data, cells, shown_groups, llm_pools)
    return result


# ---------------------------------------------------------------------------
# Chart data (dashboard and its JSON endpoint)


def _distributions(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: list[str]) -> list[dict]:
    """Share of ratings per half point, per question x group x pool (scores binned to the nearest half point)."""
    domain = np.array(data.domain)
    out = []
    for question in data.questions:
        for group in groups:
            for pool in data.pools:
                score = cells[(question.key, group, pool.name)].score
                binned = np.clip(np.round(score * 2) / 2, domain[0], domain[-1])
                counts = np.bincount(np.searchsorted(domain, binned), minlength=domain.size) if score.size else \
                    np.zeros(domain.size, dtype=np.int64)
                out.append({"question": question.key, "group": group, "pool": pool.name, "n": int(score.size),
                            "bins": domain.tolist(), "counts": counts.tolist()})
    return out


def _scatter(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: list[str],
             llm_pools: list[Pool]) -> list[dict]:
    """Per-item human mean vs LLM mean, aggregated to (x, y, number of items) so any study size draws fast."""
    out = []
    for question in data.questions:
        for group in groups:
            h_items, h_means = cells[(question.key, group, HUMAN)].item_means()
            for pool in llm_pools:
                l_items, l_means = cells[(question.key, group, pool.name)].item_means()
                _, hi, li = np.intersect1d(h_items, l_items, assume_unique=True, return_indices=True)
                # Means of a few ratings take few distinct values; rounding to 1/12 keeps thirds, quarters and
                # halves apart while bounding the number of distinct points. One integer code per (x, y)
                # makes the grouping a 1-D np.unique, far cheaper than np.unique(axis=0).
                x = np.rint(h_means[hi] * 12).astype(np.int64)
                y = np.rint(l_means[li] * 12).astype(np.int64)
                x0, y0 = (int(x.min()), int(y.min())) if x.size else (0, 0)  # scales may start below 0
                width = int(y.max()) - y0 + 1 if y.size else 1
                codes, n = np.unique((x - x0) * width + (y - y0), return_counts=True)
                out.append({"question": question.key, "group": group, "pool": pool.name, "n_items": int(hi.size),
                            "points": [[(code // width + x0) / 12, (code % width + y0) / 12, int(c)]
                                       for code, c in zip(codes.tolist(), n.tolist(), strict=True)]})
    return out
