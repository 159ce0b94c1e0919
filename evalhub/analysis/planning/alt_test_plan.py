"""Plan a study's alt-test: how likely is it to pass, and how many ratings would settle the verdict?

A service over ``evalhub.stats.alt_test_power``: it fills the design and the rating model from the study
(its scale, its epsilon, its raters per item) and, with ``from_pilot``, from the ratings it already has
through the analysis reader (``study_data``). The pilot's estimates invert the simulation's own model
(docs/alt-test.md, "Planning"):

- accuracy with C categories: two humans agree with probability a_h^2 + (1 - a_h)^2 / (C - 1), so
  a_h = (1 + sqrt((C - 1)(C p_hh - 1))) / C from their observed pairwise agreement p_hh (chance, 1/C, when
  they agree less than chance); the judge agrees with a human with probability
  a_h a_j + (1 - a_h)(1 - a_j) / (C - 1), solved for a_j from the observed p_jh;
- neg_rmse: two humans' mean squared difference is 2 sigma_h^2, the judge's with a human
  sigma_h^2 + sigma_j^2 (rounding and clipping to the scale are ignored: an approximation).
The pilot's design is its number of human raters, the median instances per rater and the median human
raters per instance; instances are (item, question) pairs, pooled over the questions. The judge is one LLM
pool (the first, or the one named), its label of an instance the majority (nominal) or mean (Likert) of
its samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotations.models import Study
from evalhub.analysis.reading import AnalysisOptions, Pool, study_data
from evalhub.stats.alt_test import SCORINGS, Scoring
from evalhub.stats.alt_test_power import DEFAULT_REPLICATES, Design, Plan, RatingModel, plan

DEFAULT_RATERS = 10
DEFAULT_ITEMS_PER_RATER = 50
# Without a pilot: humans right 80 % of the time (nominal) or off by one scale point on average (Likert),
# and a judge as good as one of them.
DEFAULT_HUMAN_QUALITY: dict[str, float] = {"accuracy": 0.8, "neg_rmse": 1.0}
PAGE_REPLICATES = 100  # the study page's plan: about a second for designs up to 100 raters x 300 items
PAGE_RATING_BUDGET = 5_000_000  # simulated ratings per design point on the page: a big pilot gets fewer replicates


@dataclass(frozen=True)
class Pilot:
    """What a study's existing ratings say: the design they follow and the humans' and judge's quality."""

    raters: int
    items_per_rater: int
    raters_per_item: int
    human: float
    judge: float | None  # None: the study has no LLM pool with labels on the humans' instances
    pool: str | None
    # The test runs per group: the most ratings a rater gave within one group (issue 25 review: the pilot's 24
    # matched only the "(all)" group, while the test counts 12 per group). None: the study has no groups.
    most_in_group: int | None = None


@dataclass(frozen=True)
class StudyPlan:
    plan: Plan
    design: Design
    pilot: Pilot | None
    sources: tuple[str, ...]  # where each assumption came from, for the reader
    seed: int


def alt_test_plan_for_study(
    *,
    study: Study,
    raters: int | None = None,
    items_per_rater: int | None = None,
    raters_per_item: int | None = None,
    human_quality: float | None = None,
    judge_quality: float | None = None,
    epsilon: float | None = None,
    scoring: str | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    from_pilot: bool = False,
    pool: str | None = None,
    rating_budget: int | None = None,
) -> StudyPlan:
    """The plan; stated values win over the pilot's, which win over the defaults. Bad values raise ValueError."""
    chosen: Scoring
    if scoring is None:
        chosen = "accuracy" if study.is_nominal else "neg_rmse"
    elif scoring in SCORINGS:
        chosen = scoring
    else:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    levels = len(study.scale_points())
    sources: list[str] = []
    pilot = study_pilot(study=study, scoring=chosen, levels=levels, pool=pool) if from_pilot else None
    if pilot is not None:
        in_group = "" if pilot.most_in_group is None else \
            f" over all groups (at most {pilot.most_in_group} within one group, where the test counts them)"
        sources.append(f"pilot: {pilot.raters} raters, a median {pilot.items_per_rater} ratings "
                       f"(one item on one question) per rater{in_group} and {pilot.raters_per_item} raters per item; "
                       f"human quality {pilot.human:.3g}"
                       + (f", judge {pilot.pool!r} {pilot.judge:.3g}" if pilot.judge is not None else ", no judge"))
    def stated(value: int | None, from_pilot: int | None, default: int) -> int:
        return value if value is not None else (from_pilot if from_pilot is not None else default)

    n_raters = stated(raters, pilot.raters if pilot else None, DEFAULT_RATERS)
    per_item = stated(raters_per_item, pilot.raters_per_item if pilot else None, max(2, study.raters_per_item))
    design = Design(
        raters=n_raters,
        items_per_rater=stated(items_per_rater, pilot.items_per_rater if pilot else None, DEFAULT_ITEMS_PER_RATER),
        # A default (not a stated value) never asks for more raters per item than there are raters.
        raters_per_item=min(per_item, n_raters) if raters_per_item is None else per_item,
    )
    human = human_quality if human_quality is not None else (
        pilot.human if pilot else DEFAULT_HUMAN_QUALITY[chosen])
    if judge_quality is not None:
        judge = judge_quality
    elif pilot is not None and pilot.judge is not None:
        judge = pilot.judge
    else:
        judge = human
        sources.append("judge quality: as good as a human (no judge quality stated or measured)")
    model = RatingModel(scoring=chosen, levels=levels, human=human, judge=judge)
    result = plan(design, model, epsilon=study.alt_epsilon if epsilon is None else epsilon,
                  replicates=replicates, seed=seed, rating_budget=rating_budget)
    return StudyPlan(plan=result, design=design, pilot=pilot, sources=tuple(sources), seed=seed)


def study_pilot(*, study: Study, scoring: Scoring, levels: int, pool: str | None = None) -> Pilot:
    """Estimate the design and the qualities from the study's ratings (see the module); ValueError when it cannot."""
    data = study_data(study=study, options=AnalysisOptions())
    human = next(p for p in data.pools if p.kind == "human")
    n_questions = max(len(data.questions), 1)
    inst = human.item * n_questions + human.question
    if inst.size == 0:
        raise ValueError(f"study {study.slug!r} has no human ratings to use as a pilot")
    n_inst = int(inst.max()) + 1
    per_inst = np.bincount(inst, minlength=n_inst)
    if per_inst.max() < 2:
        raise ValueError(f"study {study.slug!r} has no item rated by two humans: the pilot cannot measure agreement")
    per_rater = np.bincount(human.rater_index)
    score = human.score
    llm_pools = [p for p in data.pools if p.kind == "llm"]
    if pool is not None:
        llm_pools = [p for p in llm_pools if p.name == pool]
        if not llm_pools:
            raise ValueError(f"study {study.slug!r} has no LLM pool {pool!r}")
    judge_label = _judge_labels(llm_pools[0], n_questions, n_inst, scoring) if llm_pools else None
    pairs = float((per_inst * (per_inst - 1) / 2).sum())
    if scoring == "accuracy":
        codes = np.searchsorted(np.unique(score), score)
        same = np.bincount(inst * (codes.max() + 1) + codes)
        p_hh = float((same * (same - 1) / 2).sum()) / pairs
        human_q = _accuracy_from_agreement(p_hh, levels)
        judge_q = None
        if judge_label is not None and np.isfinite(judge_label[inst]).any():
            seen = np.isfinite(judge_label[inst])
            p_jh = float((score[seen] == judge_label[inst][seen]).mean())
            wrong = (1 - human_q) / (levels - 1)
            judge_q = float(np.clip((p_jh - wrong) / (human_q - wrong), 0, 1)) if human_q > wrong else p_jh
    else:
        s1 = np.bincount(inst, weights=score, minlength=n_inst)
        s2 = np.bincount(inst, weights=score**2, minlength=n_inst)
        msd_hh = float((per_inst * s2 - s1**2).sum()) / pairs  # sum over pairs of (x - y)^2 = n S2 - S1^2
        human_q = float(np.sqrt(max(msd_hh, 0.0) / 2))
        judge_q = None
        if judge_label is not None and np.isfinite(judge_label[inst]).any():
            seen = np.isfinite(judge_label[inst])
            msd_jh = float(((score[seen] - judge_label[inst][seen]) ** 2).mean())
            judge_q = float(np.sqrt(max(msd_jh - human_q**2, 0.0)))
    rated = per_inst[per_inst > 0]
    n_groups = len(data.groups)
    in_group = np.bincount(human.rater_index * max(n_groups, 1) + data.item_group[human.item]) if n_groups > 1 \
        else None
    return Pilot(
        raters=int(per_rater.size),
        items_per_rater=max(1, int(np.median(per_rater))),
        raters_per_item=max(2, min(int(np.median(rated)), int(per_rater.size))),
        human=human_q,
        judge=judge_q,
        pool=llm_pools[0].name if llm_pools and judge_q is not None else None,
        most_in_group=None if in_group is None else int(in_group.max()),
    )


def _accuracy_from_agreement(p_hh: float, levels: int) -> float:
    c = levels
    return float(min(1.0, (1 + np.sqrt(max((c - 1) * (c * p_hh - 1), 0.0))) / c))


def _judge_labels(pool: Pool, n_questions: int, n_inst: int, scoring: Scoring) -> np.ndarray:
    """The pool's label per instance (NaN = none): the majority of its samples (a tie gives none) or their mean."""
    inst = pool.item * n_questions + pool.question
    keep = inst < n_inst
    inst, score = inst[keep], pool.score[keep]
    out = np.full(n_inst, np.nan)
    if inst.size == 0:
        return out
    if scoring == "neg_rmse":
        counts = np.bincount(inst, minlength=n_inst)
        sums = np.bincount(inst, weights=score, minlength=n_inst)
        out[counts > 0] = sums[counts > 0] / counts[counts > 0]
        return out
    values = np.unique(score)
    counts = np.bincount(inst * values.size + np.searchsorted(values, score),
                         minlength=n_inst * values.size).reshape(n_inst, values.size)
    best = counts.max(axis=1)
    unique_best = (counts == best[:, None]).sum(axis=1) == 1
    has = (best > 0) & unique_best
    out[has] = values[counts[has].argmax(axis=1)]
    return out
