"""The analysis result as types: what ``study_analysis`` hands the dashboard, the verdict, the evidence, the text
report, the CSV tables, the API and the commands.

Every row is a frozen dataclass whose fields are, in order, the keys of its JSON object (docs/analysis.md is
the contract); ``AnalysisResult.to_json`` is the one place the JSON is made, so field order is part of the
format. A field marked ``OMIT_IF_NONE`` leaves its key out of the JSON when it is None (``not_computed`` on
Likert studies, the chart data when no charts were asked for), as the JSON did before it was typed. A field
marked ``{"key": name}`` is written under that key (``lambda``, a Python keyword). A field
marked ``flatten(...)`` holds a statistic's own result type (``stats.WelchResult``, ``stats.AltTestResult``):
its keys stand in the row's JSON where the field stands, but for those it names (spread into ``notes``).

``notes`` are ordered mappings from the statistic (``"alpha.ordinal"``, ``"tau"``) to why it is undefined or
rests on part of the data, in the order the statistics were computed; the JSON keeps that order.

Nothing here reads the database or computes a statistic: this module is the shape, ``tables`` fills it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Literal, TypeAlias

from evalhub.stats.alt_test import AltTestHuman, AltTestResult, Scoring
from evalhub.stats.prediction_metrics import Averaged, MetricsSummary, RaterMetrics
from evalhub.stats.results import Level, WelchResult

JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"
Notes: TypeAlias = dict[str, str]
Interval: TypeAlias = tuple[float, float]

OMIT_IF_NONE = {"omit_if_none": True}


def flatten(*leave_out: str) -> dict[str, tuple[str, ...]]:
    """Field metadata: the nested result's JSON keys stand in the row's JSON, but for ``leave_out``."""
    return {"flatten": leave_out}


# ---------------------------------------------------------------------------
# The study, the settings, the pools


@dataclass(frozen=True)
class Scale:
    min: int
    max: int


@dataclass(frozen=True)
class StudySummary:
    slug: str
    title: str
    scale: Scale
    questions: tuple[str, ...]  # keys, in the study's order
    groups: tuple[str, ...]  # every group of the study's counted items, declared ones first
    contrasts: tuple[tuple[str, str], ...]  # the group pairs of Welch's test
    n_items: int


@dataclass(frozen=True)
class AltTestSettings:
    """The alternative annotator test's settings for one analysis: the study's epsilon unless overridden."""

    epsilon: float
    scoring: Scoring
    q_fdr: float
    sample_rule: Literal["majority", "mean"]  # how a pool's samples of one instance become its label


@dataclass(frozen=True)
class Settings:
    ci_level: Level
    ci_n_boot: int
    ci_seed: int
    measurement: Literal["nominal", "ordinal"]
    welch_unit: Literal["item means", "ratings"]
    value_domain: tuple[float, ...]
    pairwise_max_raters: int
    alt_test: AltTestSettings


@dataclass(frozen=True)
class PoolSummary:
    """A rater pool: the human raters, or one judge run whose samples act as raters."""

    name: str  # the key that keeps two runs apart ("gpt-4#3")
    kind: Literal["human", "llm"]
    run_id: int | None
    judge: str | None
    run_status: str | None
    n_raters: int
    n_ratings: int
    status_counts: dict[str, int]  # "ok" first, then the other statuses in order
    label: str  # what a reader sees ("gpt-4 · T=0.7 · variant explain")
    # The run's parameters a label may name (reading.LABEL_PARAMS), as the run stored them; None for humans.
    model: str | None
    temperature: float | None
    top_p: float | None
    variant: str | None
    judge_kind: str | None
    # Item x question pairs with a rating. An LLM pool's samples are not raters: it gives one rating per item x
    # question, made of its samples' answers (n_ratings counts the answers; docs/analysis.md, "Words").
    n_item_questions: int = 0


# ---------------------------------------------------------------------------
# Chiang & Lee's tables


@dataclass(frozen=True)
class CellRow:
    """One question x group x pool: descriptives, Krippendorff's alpha, full agreement, ICC (tables 1 and 12)."""

    question: str
    group: str
    pool: str
    n_items: int
    n_ratings: int
    n_raters: int
    mean: float | None
    std: float | None
    alpha: dict[str, float | None]  # level (stats.LEVELS) -> alpha; ``Settings.ci_level`` is the one shown
    alpha_ci95: Interval | None
    alpha_ci_n_boot: int
    alpha_ci_n_valid: int
    full_agreement_pct: float | None
    icc1: float | None
    icc1k: float | None
    icc_n_items: int
    notes: Notes


@dataclass(frozen=True)
class KendallRow:
    """Kendall's tau-b of the per-item means, humans against one LLM pool (table 2)."""

    question: str
    group: str
    pool: str
    tau: float | None
    p: float | None
    p_method: str | None  # "exact" or "asymptotic" (normal approximation): scipy's "auto" choice; None: no p
    n: int
    band: str
    notes: Notes


@dataclass(frozen=True)
class WelchRow:
    """Welch's t-test between two groups, per question and pool (table 1's stars)."""

    question: str
    pool: str
    group_a: str
    group_b: str
    mean_a: float | None  # of the values tested (item means, or ratings)
    mean_b: float | None
    test: WelchResult = field(metadata=flatten("reason"))  # t, df, p, mean_diff, cohens_d, n_a, n_b, unit
    notes: Notes  # the test's reason, for each of its values that is undefined
    p_adjusted: float | None  # Benjamini-Hochberg over every Welch row of the analysis, whatever the filter shows
    p_family: int  # how many p-values p_adjusted is adjusted over (the defined p of every Welch row, unfiltered)


@dataclass(frozen=True)
class PairwiseKendallRow:
    """Mean Kendall's tau over every pair of a pool's raters (table 6)."""

    question: str
    group: str
    pool: str
    mean_tau: float | None
    n_pairs: int
    n_items: int  # items with 2 or more ratings (the pairs' items; too few below trust_notes.MIN_ITEMS)
    notes: Notes


@dataclass(frozen=True)
class RaterMeanRow:
    """One rater's mean score in one question x group (table 12)."""

    question: str
    group: str
    pool: str
    rater: str
    mean: float
    n: int


@dataclass(frozen=True)
class MajorityRow:
    """A nominal study's LLM pool against the human majority choice."""

    question: str
    group: str
    pool: str
    agreement_pct: float | None
    n_items: int
    n_agree: int
    human_no_majority: int
    pool_no_majority: int
    notes: Notes


# ---------------------------------------------------------------------------
# The verdict and the evidence beside it


@dataclass(frozen=True)
class AltTestRow:
    """The alternative annotator test of one LLM pool in one question (or ``(all)``) x group."""

    question: str
    group: str
    pool: str
    test: AltTestResult = field(metadata=flatten())  # passed is None where there is no verdict


@dataclass(frozen=True)
class KappaRow:
    question: str
    group: str
    pool: str
    against: Literal["majority", "rater", "raters"]
    rater: str | None  # the human rater of an ``against == "rater"`` row
    weights: str
    kappa: float | None
    ci95: Interval | None
    n_items: int
    n_tied: int
    n_unpaired: int
    p: float | None  # per-rater rows only: the z-test of kappa = 0
    p_adjusted: float | None  # Benjamini-Hochberg over every per-rater row of the analysis
    notes: Notes


@dataclass(frozen=True)
class ConfusionRow:
    """The pool's label against the human majority label: ``counts[r][c]``, rows = human majority."""

    question: str
    group: str
    pool: str
    categories: tuple[float, ...]
    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    n_items: int
    n_tied: int
    n_unpaired: int


@dataclass(frozen=True)
class CeilingRater:
    rater: str
    n_items: int
    rater_score: float | None  # the rater's agreement with the other raters
    rater_ci95: Interval | None
    judge_score: float | None  # the judge's with the same others on the same items
    judge_ci95: Interval | None
    judge_better: bool | None
    reason: str | None


@dataclass(frozen=True)
class CeilingRow:
    question: str
    group: str
    pool: str
    scoring: Scoring | None  # None: left out (too many raters)
    summary: str | None
    judge_better: int
    n_compared: int
    notes: tuple[str, ...]
    raters: tuple[CeilingRater, ...]


@dataclass(frozen=True)
class PositionRow:
    """A pairwise judge's position bias from its swapped samples (Wilson intervals)."""

    question: str
    pool: str
    n_pairs: int
    n_flips: int
    flip_rate: float | None
    flip_ci95_low: float | None
    flip_ci95_high: float | None
    n_decisive: int
    n_first: int
    first_position_share: float | None
    first_position_ci95_low: float | None
    first_position_ci95_high: float | None
    prefers_first: bool
    prefers_second: bool
    notes: tuple[str, ...]


# ---------------------------------------------------------------------------
# Per-rater runs (personalized and persona judges)


@dataclass(frozen=True)
class PersonalBaseline:
    """The plain run's votes scored as predictions of the same raters on the same items."""

    run: int
    judge: str
    raters: tuple[RaterMetrics, ...]
    average: MetricsSummary


@dataclass(frozen=True)
class PersonalEntry:
    """One per-rater run and question: each predicted rater against their own scores."""

    run: int
    judge: str
    kind: str
    method: str
    question: str
    raters: tuple[RaterMetrics, ...]
    average: MetricsSummary
    baseline: PersonalBaseline | None


@dataclass(frozen=True)
class AblationRow:
    run: int
    judge: str
    method: str
    label: str
    question: str
    n_raters: int
    n_items: int
    n_missing: int
    accuracy: float | None  # pooled over the (rater, item) pairs
    mae: float | None
    rater_accuracy: float | None  # the mean over raters
    rater_mae: float | None


@dataclass(frozen=True)
class AblationTable:
    """Per-rater runs sharing a split, method by method on the pairs all of them predict (CINEMETRIC 1-2)."""

    runs: tuple[int, ...]
    experiment: int | None
    pairs: dict[str, int]  # question -> (rater, item) pairs every run predicts
    rows: tuple[AblationRow, ...]


# ---------------------------------------------------------------------------
# Prediction-powered inference (issue 27): the human means with the judge's help, where the human-rated
# items are a random subset


@dataclass(frozen=True)
class PPIRow:
    """The PPI++ mean human score of one question x group, helped by one LLM pool, beside the humans-only one
    (both 95 % normal intervals on the same human-rated items; ``stats.ppi.mean.ppi_mean``)."""

    question: str
    group: str
    pool: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    lam: float | None = field(metadata={"key": "lambda"})
    n_labelled: int
    n_unlabelled: int
    effective_n: float | None  # human-rated items alone whose interval is as wide
    extra_items: float | None  # effective_n - n_labelled: what the judge's ratings are worth here
    humans_only_estimate: float | None
    humans_only_ci_low: float | None
    humans_only_ci_high: float | None
    notes: Notes


@dataclass(frozen=True)
class PPIDifferenceRow:
    """The PPI++ difference ``groups[0] - groups[1]`` of the mean human scores (the counterpart of Welch's row)."""

    question: str
    pool: str
    groups: tuple[str, str]
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    notes: Notes


# ---------------------------------------------------------------------------
# Chart data (on request)


@dataclass(frozen=True)
class Distribution:
    """Ratings per half point of one question x group x pool."""

    question: str
    group: str
    pool: str
    n: int
    bins: tuple[float, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class Scatter:
    """Human item means (x) against a pool's (y), as (x, y, number of items) points."""

    question: str
    group: str
    pool: str
    n_items: int
    points: tuple[tuple[float, float, int], ...]


# ---------------------------------------------------------------------------
# The whole


@dataclass(frozen=True)
class JudgeCost:
    """One judge run's estimated cost (JudgeRun.cost_usd, from its token counts) over its answered ratings."""

    pool: str
    cost_usd: float
    ratings: int
    per_rating_usd: float | None


@dataclass(frozen=True)
class CostSummary:
    """What a rating costs on each side; present only for a study published on Prolific
    (evalhub/analysis/planning/costs.py).
    Human amounts are cents of the Prolific account's currency, paid so far: rewards of approved submissions,
    Prolific's service fee on them (PROLIFIC_SERVICE_FEE), bonuses paid and their stated fees."""

    human_rewards_cents: int
    human_reward_fee_cents: float
    human_bonuses_cents: int
    human_bonus_fee_cents: float
    human_total_cents: float
    human_ratings: int
    human_per_rating_cents: float | None
    judges: tuple[JudgeCost, ...]


@dataclass(frozen=True)
class AnalysisResult:
    schema: int
    study: StudySummary
    settings: Settings
    pools: tuple[PoolSummary, ...]
    cells: tuple[CellRow, ...]
    kendall: tuple[KendallRow, ...]
    welch: tuple[WelchRow, ...]
    pairwise_kendall: tuple[PairwiseKendallRow, ...]
    rater_means: tuple[RaterMeanRow, ...]
    majority: tuple[MajorityRow, ...]
    # Nominal studies only: table name -> why it is not computed (its list above stays empty).
    not_computed: dict[str, str] | None = field(metadata=OMIT_IF_NONE)
    alt_test: tuple[AltTestRow, ...]
    kappa: tuple[KappaRow, ...]
    confusion: tuple[ConfusionRow, ...]
    ceiling: tuple[CeilingRow, ...]
    position_bias: tuple[PositionRow, ...]
    personal: tuple[PersonalEntry, ...]
    ablations: tuple[AblationTable, ...]
    # Present when the human-rated items are a random subset (drawn or declared); else ppi_note says why not.
    ppi: tuple[PPIRow, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    ppi_differences: tuple[PPIDifferenceRow, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    ppi_note: str | None = field(default=None, metadata=OMIT_IF_NONE)
    distributions: tuple[Distribution, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    scatter: tuple[Scatter, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
    # Only for a study published on Prolific, so the JSON of every other study stays as it was.
    cost: CostSummary | None = field(default=None, metadata=OMIT_IF_NONE)

    def pool_labels(self) -> dict[str, str]:
        """Pool key -> what a reader sees of it."""
        return {p.name: p.label for p in self.pools}

    def llm_pools(self) -> list[str]:
        return [p.name for p in self.pools if p.kind == "llm"]

    def to_json(self) -> JSONObject:
        """The analysis JSON (docs/analysis.md): the fields in order, tuples as lists."""
        out = to_json(self)
        assert isinstance(out, dict)
        return out


@functools.cache
def shape_digest() -> str:
    """A short hash of every result type's name and fields (with their types): changes when the shape does."""
    shapes = sorted(repr((cls.__qualname__, [(f.name, str(f.type)) for f in fields(cls)]))
                    for cls in _result_types())
    return hashlib.sha256("\n".join(shapes).encode()).hexdigest()[:12]


def _result_types() -> list[type]:
    """The dataclasses a result holds: this module's, and those of stats it reuses."""
    own = [v for v in globals().values() if isinstance(v, type) and is_dataclass(v) and v.__module__ == __name__]
    return [*own, AltTestResult, AltTestHuman, WelchResult, RaterMetrics, MetricsSummary, Averaged]


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, str, bool, tuple[str, ...] | None], ...]:
    """(name, JSON key, omit if None, keys left out of a flattened field or None) of each field, in order."""
    return tuple((f.name, f.metadata.get("key", f.name), bool(f.metadata.get("omit_if_none")),
                  f.metadata.get("flatten")) for f in fields(cls))


def to_json(value: object) -> JSONValue:
    """A result type (or a part of one: a row, a list of rows) as JSON-ready data."""
    if is_dataclass(value) and not isinstance(value, type):
        out: JSONObject = {}
        for name, key, omit, leave_out in _fields(type(value)):
            v = getattr(value, name)
            if v is None and omit:
                continue
            if leave_out is None:
                out[key] = to_json(v)
                continue
            nested = to_json(v)
            assert isinstance(nested, dict), f"{name} is flattened but not a dataclass"
            out.update((k, x) for k, x in nested.items() if k not in leave_out)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    raise TypeError(f"not JSON: {value!r}")

