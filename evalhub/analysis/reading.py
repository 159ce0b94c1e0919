"""Reading a study for the analysis: the options, the pools, and each pool's ratings as numpy arrays.

The database is read in two queries per study (human ratings, ok LLM ratings), each returning
integer ids and a float score only; everything after that is numpy (evalhub.analysis.cells).

A pool is "human" (every HumanRating of the study) or one JudgeRun of the study, whose samples act
as raters; only status "ok" LLM ratings enter the statistics, the others are counted per run.
Only the items that count (annotations.selectors.counted_items: no gold items) are read; rating rows
of any other item are dropped in numpy (cheaper than a join on a million rows).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np
from django.db import connection
from django.db.models import Q

from annotations.models import HumanRating, Question, Rater, Study, rater_label
from annotations.selectors import counted_items
from evalhub import stats
from evalhub.analysis.per_rater import per_rater_predictions
from evalhub.analysis.result import PoolSummary
from evalhub.stats.alt_test import Scoring
from evalhub.stats.inputs import id_codes
from llmjudge.kinds import is_per_rater
from llmjudge.models import JudgeRun, LLMRating

if TYPE_CHECKING:
    from django.db.backends.utils import _SQLType  # what a database cursor takes as a query parameter

HUMAN = "human"
ALL_GROUPS = "(all)"  # the pooled cell over every group, on request; parentheses keep it apart from group names
CI_LEVEL: stats.Level = "ordinal"
WelchUnit = Literal["item means", "ratings"]
# The key of a pool's ``status_counts`` that counts its ok ratings a person read (llmjudge/runs/review.py).
READ_BY_PERSON = "read_by_person"
FETCH_ROWS = 100_000  # rows per batch when a database other than SQLite is read (fetch_matrix)


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
    alt_epsilon: float | None = None  # the alternative annotator test's epsilon; None: the study's
    alt_scoring: Scoring | None = None  # None: accuracy for nominal data, negative RMSE for Likert


class LabelParams(TypedDict):
    """The run parameters a pool label may name (``LABEL_PARAMS``), None where the run does not say."""

    model: str | None
    temperature: float | None
    top_p: float | None
    variant: str | None
    kind: str | None


@dataclass
class Pool:
    name: str
    kind: Literal["human", "llm"]
    run_id: int | None = None
    judge: str | None = None
    run_status: str | None = None
    # An LLM pool's ratings that do not count, as (item position, status), and the item positions of its ok ratings
    # a person read: few, kept per item so that a summary can count within a group filter (pool_summary).
    not_ok: list[tuple[int, str]] = field(default_factory=list)
    read: list[int] = field(default_factory=list)
    rater_labels: dict[int, str] = field(default_factory=dict)
    # What a reader sees ("gpt-4 · T=0.7 · variant explain") and the run's parameters it names (pool_labels);
    # ``name`` stays the key that keeps two runs apart.
    label: str = ""
    params: LabelParams = field(default_factory=lambda: LabelParams(
        model=None, temperature=None, top_p=None, variant=None, kind=None))
    # Parallel arrays of the pool's counted ratings, filled by _fill.
    item: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    question: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    rater: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    score: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=float))
    raters: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # distinct rater ids
    rater_index: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # into raters, per rating


def pool_summary(pool: Pool, items: np.ndarray | None = None) -> PoolSummary:
    """What the result says of a pool, counted over the items ``items`` marks (a boolean per item position; None:
    every item), so that its counts follow the analysis's group filter. The label parameters pass as the run stored
    them (``JudgeRun.params``)."""
    params = pool.params
    kept = slice(None) if items is None else items[pool.item]
    raters = pool.rater_index[kept]
    return PoolSummary(
        name=pool.name, kind=pool.kind, run_id=pool.run_id, judge=pool.judge, run_status=pool.run_status,
        n_raters=int(np.count_nonzero(np.bincount(raters, minlength=1))), n_ratings=int(raters.size),
        status_counts=_status_counts(pool, items, int(raters.size)) if pool.kind == "llm" else {},
        label=pool.label or pool.name, model=params.get("model"), temperature=params.get("temperature"),
        top_p=params.get("top_p"), variant=params.get("variant"),
        # "kind" already says human or llm: the judge's kind is "judge_kind".
        judge_kind=params.get("kind"),
        n_item_questions=distinct_pairs(pool.item[kept], pool.question[kept]),
    )


def _status_counts(pool: Pool, items: np.ndarray | None, n_ok: int) -> dict[str, int]:
    """An LLM pool's ratings by status over the items ``items`` marks: ok first, then the ok ones a person read (the
    key only when there are some, so a study without readings keeps its JSON), then the others by name."""
    def counted(position: int) -> bool:
        return items is None or bool(items[position])

    read = sum(counted(position) for position in pool.read)
    not_ok = Counter(status for position, status in pool.not_ok if counted(position))
    by_person = {READ_BY_PERSON: read} if read else {}
    return {str(LLMRating.Status.OK): n_ok, **by_person, **dict(sorted(not_ok.items()))}


def distinct_pairs(first: np.ndarray, second: np.ndarray) -> int:
    """How many distinct (first, second) pairs two arrays of small non-negative indices hold: marks in a table of
    their combined codes, linear in the rows (np.unique over the stacked pairs sorted them: 0.85 s at a million
    ratings, a third of the whole analysis)."""
    if first.size == 0:
        return 0
    width = int(second.max()) + 1
    seen = np.zeros((int(first.max()) + 1) * width, dtype=bool)
    seen[first * width + second] = True
    return int(np.count_nonzero(seen))


def pool_names(study: Study) -> dict[int, str]:
    """Run id -> pool name: the judge's name, suffixed "#<run id>" when the judge ran more than once here.

    The CSV export and the dashboard use the same names.
    """
    runs = list(JudgeRun.objects.filter(study=study).order_by("id").values_list("id", "judge__name"))
    per_judge = Counter(name for _, name in runs)
    return {
        run_id: name if per_judge[name] == 1 and name != HUMAN else f"{name}#{run_id}" for run_id, name in runs
    }


# The parameters a pool label may name, in label order; only those that differ between the study's runs are named.
LabelKey = Literal["model", "temperature", "top_p", "variant", "kind"]
LABEL_PARAMS: tuple[LabelKey, ...] = ("model", "temperature", "top_p", "variant", "kind")
HUMAN_LABEL = "Human raters"


def _label_part(key: str, value: str | float) -> str:
    if key == "temperature":
        return f"T={value:g}"
    if key == "top_p":
        return f"top_p={value:g}"
    return f"{key} {value}"


def run_label_params(params: dict[str, Any], judge_model: str, judge_kind: str) -> LabelParams:
    """The label parameters of one run, as it ran (``JudgeRun.params``, any JSON). An imported run records no
    sampling: its temperature, top_p and variant are None, never the judge's defaults."""
    return LabelParams(model=params.get("model") or judge_model or None, temperature=params.get("temperature"),
                       top_p=params.get("top_p"), variant=params.get("variant"),
                       kind=params.get("kind") or judge_kind or None)


def pool_labels(study: Study) -> dict[int, tuple[str, LabelParams]]:
    """Run id -> (label, label parameters): the judge's name, then each parameter whose value differs
    between the study's runs, e.g. "gpt-4 · T=0.7 · variant explain" (Chiang & Lee's table 3 reads
    straight from it). Runs that still share a label get "run <id>" so no two pools read alike."""
    runs = list(JudgeRun.objects.filter(study=study).order_by("id").values_list(
        "id", "judge__name", "judge__model", "judge__kind", "params"))
    values = {run_id: run_label_params(params or {}, model, kind) for run_id, _, model, kind, params in runs}
    # Unknown values (an imported run's sampling) neither make a parameter differ nor appear in a label.
    differing = [key for key in LABEL_PARAMS
                 if len({repr(v[key]) for v in values.values() if v[key] is not None}) > 1]
    labels = {run_id: " · ".join([name, *(_label_part(k, v) for k in differing
                                          if (v := values[run_id][k]) is not None)])
              for run_id, name, *_ in runs}
    shared = Counter(labels.values())
    return {run_id: (f"{label} · run {run_id}" if shared[label] > 1 else label, values[run_id])
            for run_id, label in labels.items()}


def human_rows_sql(question_ids: list[int]) -> tuple[str, tuple[_SQLType, ...]]:
    """SQL of (item_id, question_id, rater_id, score) for the human ratings of these questions.

    A question belongs to one study (and a trigger keeps every rating's item in its question's
    study), so the question ids select the study's ratings without a join; no ORDER BY (Meta.ordering
    would add three joins), numpy sorts.
    """
    qs = HumanRating.objects.filter(question_id__in=question_ids).order_by()
    return qs.values_list("item_id", "question_id", "rater_id", "score").query.sql_with_params()


def llm_rows_sql(run_ids: list[int], question_ids: list[int]) -> tuple[str, tuple[_SQLType, ...]]:
    """SQL of (run_id, item_id, question_id, sample, score) for the ok ratings of these runs and questions.

    Position-bias samples (``swapped``, llmjudge/runs/swapping.py) are left out: they are extra samples of
    some items only, read by ``position_rows`` alone, and count in no other statistic.
    """
    qs = LLMRating.objects.filter(run_id__in=run_ids, status=LLMRating.Status.OK, question_id__in=question_ids,
                                  swapped=False)
    return qs.order_by().values_list("run_id", "item_id", "question_id", "sample", "score").query.sql_with_params()


def fetch_matrix(sql: str, params: tuple[_SQLType, ...], n_columns: int) -> np.ndarray:
    """Run a query of numeric columns and return its rows as one float array (n, n_columns).

    Django's per-row model/values machinery is skipped: at a million rows it would cost more than the
    statistics. sqlite3 iterates its cursor in C, so np.fromiter reads it row by row and no list of a million
    tuples is built; psycopg builds rows fastest in batches (its iterator is Python code), so other
    databases are read in chunks of FETCH_ROWS (measured in tests/bench/bench_analyze.py).
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.vendor == "sqlite":
            flat = np.fromiter(itertools.chain.from_iterable(cursor.cursor), dtype=float)
            return flat.reshape(-1, n_columns)
        parts = []
        while rows := cursor.fetchmany(FETCH_ROWS):
            parts.append(np.fromiter(itertools.chain.from_iterable(rows), dtype=float, count=len(rows) * n_columns))
    return np.concatenate(parts).reshape(-1, n_columns) if parts else np.empty((0, n_columns))


def _item_rows(study: Study) -> list[tuple[int, str]]:
    """(pk, group) of the study's counted items by pk, through a raw cursor (50,000 rows of a large study)."""
    with connection.cursor() as cursor:
        cursor.execute(*counted_items(study=study).order_by("id").values_list("id", "group").query.sql_with_params())
        return cursor.fetchall()


def _not_ok_ratings(run_ids: list[int], question_ids: list[int],
                    item_ids: np.ndarray) -> dict[int, list[tuple[int, str]]]:
    """Per run, its ratings of counted items (``item_ids``) that do not count, as (item position, status).

    They are few (refused, unparseable, error, pending): read row by row. "Below or above ok" rather than
    "not ok": two ranges of the (run, status) index, which SQLite and PostgreSQL search instead of scanning
    every rating of the run (70 ms -> 18 ms at 400,000 LLM ratings on SQLite).
    """
    not_ok: dict[int, list[tuple[int, str]]] = {r: [] for r in run_ids}
    ok = LLMRating.Status.OK
    rows = list(LLMRating.objects.filter(Q(status__lt=ok) | Q(status__gt=ok), run_id__in=run_ids,
                                         question_id__in=question_ids, swapped=False)
                .order_by().values_list("run_id", "item_id", "status"))
    if rows:
        position, counted = _positions(item_ids, np.fromiter((item for _, item, _ in rows), dtype=np.int64,
                                                             count=len(rows)))
        for (run_id, _, status), at, keep in zip(rows, position.tolist(), counted.tolist(), strict=True):
            if keep:
                not_ok[run_id].append((at, status))
    return not_ok


def _read_ratings(run_ids: list[int], question_ids: list[int], item_ids: np.ndarray) -> dict[int, list[int]]:
    """Per run, the item positions of its ok ratings of counted items a person read (llmjudge/runs/review.py): they
    count as ok and are counted apart. Few, read row by row like ``_not_ok_ratings``. The filter names no status, so
    that SQLite and PostgreSQL both take the partial index on read ratings (``llm_rating_read_by_person``) rather
    than the (run, status) range of every ok rating; the status is checked here."""
    read: dict[int, list[int]] = {r: [] for r in run_ids}
    rows = list(LLMRating.objects.filter(run_id__in=run_ids, read_at__isnull=False, question_id__in=question_ids,
                                         swapped=False)
                .order_by().values_list("run_id", "item_id", "status"))
    if rows:
        position, counted = _positions(item_ids, np.fromiter((item for _, item, _ in rows), dtype=np.int64,
                                                             count=len(rows)))
        for (run_id, _, status), at, keep in zip(rows, position.tolist(), counted.tolist(), strict=True):
            if keep and status == LLMRating.Status.OK:
                read[run_id].append(at)
    return read


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
        """Pairwise studies hold choices (1 = A, 2 = B, 3 = tie) and categorical studies label codes:
        categories, not amounts."""
        return self.study.is_nominal

    @property
    def ci_level(self) -> stats.Level:
        return "nominal" if self.nominal else CI_LEVEL

    @property
    def domain(self) -> list[float]:
        """The study scale with half points: the value domain of ordinal alpha (a pairwise study's
        choices and a categorical study's label codes have no half points: its domain is the codes)."""
        s = self.study
        if self.nominal:
            return [float(v) for v in s.scale_points()]
        return [s.scale_min + k / 2 for k in range(2 * (s.scale_max - s.scale_min) + 1)]


def study_groups(study: Study, present: list[str]) -> list[str]:
    """The groups present, in the study's declared (blocked) order, then the undeclared ones sorted."""
    declared = [g for g in study.groups if g in present]
    return declared + sorted(set(present) - set(declared))


def study_data(*, study: Study, options: AnalysisOptions) -> StudyData:
    """Read everything the analysis needs: items, and each pool's ratings as numpy arrays."""
    questions = list(study.questions.order_by("order", "id"))
    if options.questions is not None:
        questions = [q for q in questions if q.key in options.questions]
    question_ids = [q.pk for q in questions]

    items = _item_rows(study)
    groups = study_groups(study, sorted({g for _, g in items}))
    group_index = {g: n for n, g in enumerate(groups)}
    item_ids = np.fromiter((i for i, _ in items), dtype=np.int64, count=len(items))
    item_group = np.fromiter((group_index[g] for _, g in items), dtype=np.int64, count=len(items))

    human = Pool(name=HUMAN, kind="human", label=HUMAN_LABEL)
    human.rater_labels = {pk: rater_label(external_id=ext, number=number, pk=pk) for pk, ext, number
                          in Rater.objects.filter(study=study).values_list("id", "external_id", "number")}
    rows = fetch_matrix(*human_rows_sql(question_ids), 4) if question_ids else np.empty((0, 4))
    _fill(human, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], item_ids, questions)
    pools = [human]

    names = pool_names(study)
    labels = pool_labels(study)
    chosen = JudgeRun.objects.filter(study=study).select_related("judge").order_by("id")
    if options.runs is not None:
        chosen = chosen.filter(id__in=options.runs)
    runs = list(chosen)
    if runs:
        run_ids = [r.pk for r in runs]
        rows = fetch_matrix(*llm_rows_sql(run_ids, question_ids), 5) if question_ids else np.empty((0, 5))
        run_col = rows[:, 0].astype(np.int64)
        if len(run_ids) > 1:  # grouped by run; one run's rows are its group (a copy of 16 MB at 400,000 ratings)
            order = np.argsort(run_col, kind="stable")
            rows, run_col = rows[order], run_col[order]
        not_ok = _not_ok_ratings(run_ids, question_ids, item_ids)
        read = _read_ratings(run_ids, question_ids, item_ids)
        for run in runs:
            lo = np.searchsorted(run_col, run.pk, side="left")
            hi = np.searchsorted(run_col, run.pk, side="right")
            pool = Pool(name=names[run.pk], kind="llm", run_id=run.pk, judge=run.judge.name, run_status=run.status,
                        label=labels[run.pk][0], params=labels[run.pk][1])
            part = rows[lo:hi]
            if is_per_rater(run.judge.kind):
                # A per-rater run's raters are the humans it predicts, one vote of its samples each.
                votes = [(i, q, r, v) for (i, q, r), v in per_rater_predictions(run_id=run.pk).items()
                         if v is not None and q in question_ids]
                part = np.array([(run.pk, *row) for row in votes], dtype=float).reshape(-1, 5)
            _fill(pool, part[:, 1], part[:, 2], part[:, 3], part[:, 4], item_ids, questions)
            if is_per_rater(run.judge.kind):
                pool.rater_labels = {int(r): human.rater_labels.get(int(r), f"rater-{int(r)}") for r in pool.raters}
            else:
                pool.rater_labels = {int(s): f"sample-{int(s)}" for s in pool.raters}
            pool.not_ok, pool.read = not_ok[run.pk], read[run.pk]
            pools.append(pool)
    return StudyData(study=study, questions=questions, groups=groups, item_ids=item_ids, item_group=item_group,
                     pools=pools)


def _fill(pool: Pool, item: np.ndarray, question: np.ndarray, rater: np.ndarray, score: np.ndarray,
          item_ids: np.ndarray, questions: list[Question]) -> None:
    """Store a pool's ratings of regular items, with item and question as indices into the study's lists."""
    item = item.astype(np.int64)
    position, regular = _positions(item_ids, item)
    if not regular.all():
        position, question, rater, score = position[regular], question[regular], rater[regular], score[regular]
    pool.item = position
    question_pks = np.array([q.pk for q in questions], dtype=np.int64)
    order = np.argsort(question_pks)
    pool.question = order[np.searchsorted(question_pks[order], question.astype(np.int64))] if questions else \
        np.empty(0, dtype=np.int64)
    pool.rater = rater.astype(np.int64)
    pool.score = np.asarray(score, dtype=float)
    pool.rater_index, pool.raters = id_codes(pool.rater)


def _positions(sorted_ids: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each id in sorted_ids, whether it is there): a lookup table over the keys' range when
    it is small (a study's item keys are), else a binary search."""
    if sorted_ids.size == 0:
        return np.zeros(ids.size, dtype=np.int64), np.zeros(ids.size, dtype=bool)
    low = int(sorted_ids[0])
    high = int(sorted_ids[-1])
    # Database keys span a small range: a lookup table over it instead of a binary search.
    small_range = low >= 0 and high - low < 4 * ids.size + 1_000_000
    if ids.size and small_range and int(ids.min()) >= low and int(ids.max()) <= high:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[sorted_ids - low] = np.arange(sorted_ids.size)
        position = table[ids - low]
        regular = position >= 0
        return (position if regular.all() else np.where(regular, position, 0)), regular
    position = np.searchsorted(sorted_ids, ids)
    regular = sorted_ids[np.minimum(position, sorted_ids.size - 1)] == ids
    return position, regular
