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
The pilot's design is the one a single alt-test of the verdict sees. Instances are (item, question) pairs,
pooled over the questions (the verdict's "all questions" rows). The verdict tests each group of items apart
and counts a rater's ratings within the group (``alt_test_rows``: one cell per question x group), so with
groups the pilot's raters are the median over groups of the raters who rated in the group, its ratings per
rater the median over (rater, group) of a rater's ratings in that group (issue 25 review: 24 over all groups
where the test counts 12), and its raters per instance the median over instances (an instance lies in one
group). Without groups these are the study's. The judge is one LLM pool (the first, or the one named), its
label of an instance the majority (nominal) or mean (Likert) of its samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotations.models import Study
from annotations.selectors import counted_items
from evalhub.analysis.reading import AnalysisOptions, Pool, study_data, study_groups
from evalhub.analysis.text_report import scoring_words
from evalhub.stats.alt_test import MIN_HUMANS, MIN_INSTANCES_PER_HUMAN, SCORINGS, Scoring
from evalhub.stats.alt_test_power import (
    DEFAULT_REPLICATES,
    ITEMS_GRID,
    RATERS_GRID,
    Design,
    Plan,
    Power,
    RatingModel,
    items_not_reached_note,
    no_verdict_note,
    plan,
    raters_not_reached_note,
)

DEFAULT_RATERS = 10
DEFAULT_ITEMS_PER_RATER = 50
# Without a pilot: humans right 80 % of the time (nominal) or off by one scale point on average (Likert),
# and a judge as good as one of them.
DEFAULT_HUMAN_QUALITY: dict[str, float] = {"accuracy": 0.8, "neg_rmse": 1.0}
PAGE_REPLICATES = 100  # the study page's plan: about a second for designs up to 100 raters x 300 items
PAGE_RATING_BUDGET = 5_000_000  # simulated ratings per design point on the page: a big pilot gets fewer replicates


@dataclass(frozen=True)
class Pilot:
    """What a study's existing ratings say: the design one alt-test sees (see the module) and the humans' and
    judge's quality, with the counts each estimate rests on."""

    raters: int  # with groups: the median over groups of the raters who rated in the group
    items_per_rater: int  # with groups: the median over (rater, group) of a rater's ratings in the group
    raters_per_item: int
    human: float
    judge: float | None  # None: the study has no LLM pool with labels on the humans' instances
    pool: str | None
    groups: int = 1  # the groups the verdict tests apart (1: the study has none, or one)
    n_paired: int = 0  # instances rated by 2 or more humans: the human quality's n
    n_judged: int = 0  # instances with a human rating that the judge labelled: the judge quality's n


@dataclass(frozen=True)
class StudyPlan:
    plan: Plan
    design: Design
    pilot: Pilot | None
    sources: tuple[str, ...]  # where each assumption came from, for the reader
    seed: int
    groups: tuple[str, ...] = ()  # the study's groups of counted items (each tested apart when 2 or more)
    n_questions: int = 1

    @property
    def items_grid(self) -> str:
        return ", ".join(map(str, ITEMS_GRID))

    @property
    def raters_grid(self) -> str:
        return ", ".join(map(str, RATERS_GRID))

    @property
    def min_ratings(self) -> int:
        """The ratings per rater below which the test gives no verdict, whatever the number of raters."""
        return MIN_INSTANCES_PER_HUMAN

    @property
    def per_rater(self) -> str:
        """What "ratings per rater" counts: within one group when the verdict tests groups apart."""
        return "ratings per rater within one group" if len(self.groups) > 1 else "ratings per rater"

    @property
    def other_notes(self) -> tuple[str, ...]:
        """The simulation's notes that the plan's lines do not already say (no verdict, a grid not reached)."""
        design, target = self.plan.stated.design, self.plan.target
        said = {no_verdict_note(design), items_not_reached_note(design, target),
                raters_not_reached_note(design, target)}
        return tuple(note for note in self.plan.notes if note not in said)

    @property
    def best_items(self) -> Power | None:
        """The highest chance simulated along the items grid at the stated raters (None: no point gives a verdict)."""
        d = self.plan.stated.design
        return _best([p for p in self.plan.searched if p.design.raters == d.raters
                      and p.design.items_per_rater in ITEMS_GRID])

    @property
    def best_raters(self) -> Power | None:
        """The highest chance simulated along the raters grid at the stated ratings per rater (None: no verdict)."""
        d = self.plan.stated.design
        return _best([p for p in self.plan.searched if p.design.items_per_rater == d.items_per_rater
                      and p.design.raters in RATERS_GRID])

    @property
    def max_replicates(self) -> int:
        return max(p.replicates for p in self.plan.searched)

    @property
    def n_simulated(self) -> int:
        """The design points searched that give a verdict (a design that cannot is not simulated)."""
        return sum(no_verdict_note(p.design) is None for p in self.plan.searched)

    @property
    def best_items_text(self) -> str:
        return best_words(self.best_items, self.per_rater)

    @property
    def best_raters_text(self) -> str:
        return best_words(self.best_raters, self.per_rater)

    @property
    def pilot_caveat(self) -> str:
        """That the pilot's qualities are point estimates, with their n ("" without a pilot): the plan has no
        interval for them, so a small pilot's plan can be far off (issue 25, fourth review U1)."""
        if self.pilot is None:
            return ""
        judge = "" if self.pilot.judge is None else f" and the judge's from {self.pilot.n_judged} pairs"
        return (f"The pilot's qualities are point estimates (the humans' from {self.pilot.n_paired} pairs{judge}); "
                "the plan does not carry their uncertainty: another pilot of this size may give a different plan")

    @property
    def model_text(self) -> str:
        """The simulated model in words (the page's "Assumptions" and the command's "model" line)."""
        model = self.plan.model
        values = f"{model.levels} categories" if model.scoring == "accuracy" else f"a {model.levels}-point scale"
        human, judge = quality_words(model.scoring, model.human), quality_words(model.scoring, model.judge)
        return (f"scored by {scoring_words(model.scoring)}, {values}; a human: {human}; the judge: {judge}; "
                f"ε = {self.plan.epsilon} (the advantage granted to the judge for its lower cost)")

    @property
    def noise_text(self) -> str:
        """What a "noise sd" is, accurate to the simulation and to ``study_pilot``'s estimates (eighth review: "the
        judge: noise sd 1.32" stood undefined); "" when the model is scored by accuracy (no noise sd)."""
        if self.plan.model.scoring != "neg_rmse":
            return ""
        measured = ("; the pilot measures a human's as the root of half the mean squared difference between two "
                    "humans' scores of the same item on the same question, and the judge's as the root of the mean "
                    "squared difference between its label (the mean of its samples) and each human score, less a "
                    "human's noise variance (the human raters' own spread)") if self.pilot is not None else ""
        return ("the standard deviation, in scale points, of the normal noise the simulation adds to an item's true "
                f"score in each rating (then rounded and clipped to the scale){measured}")

    @property
    def scope(self) -> str:
        """Which of the verdict's tests the design is that of ("" for a study of one question and no groups)."""
        pooled = " on all questions pooled (the verdict's “all questions” rows)" if self.n_questions > 1 else ""
        single = "; one question's test counts only that question's ratings, fewer" if pooled else ""
        if len(self.groups) > 1:
            names = ", ".join(f"“{g}”" for g in self.groups)
            return (f"The design is that of one group's test{pooled}: the verdict tests each of the "
                    f"{len(self.groups)} groups ({names}) apart and counts a rater's ratings within the group{single}")
        return f"The design is that of the test{pooled}{single}" if pooled else ""


def _best(points: list[Power]) -> Power | None:
    """The point with the highest simulated chance among those that give a verdict, or None."""
    judged = [p for p in points if no_verdict_note(p.design) is None]
    return max(judged, key=lambda p: p.power) if judged else None


def best_words(best: Power | None, per_rater: str) -> str:
    """The best chance a grid reached, where, and its Monte-Carlo error; or why no grid point gives a verdict."""
    if best is None:
        return (f"no point of the grid gives a verdict: the test needs {MIN_INSTANCES_PER_HUMAN} {per_rater} "
                f"and {MIN_HUMANS} raters or more, so this is no power result")
    d = best.design
    return (f"the best chance reached is {100 * best.power:.0f} % ({chance_error(best)}), "
            f"at {d.raters} raters × {d.items_per_rater} {per_rater}")


def chance_error(power: Power, digits: int = 0) -> str:
    """What a simulated chance to pass may be off by: its Monte-Carlo standard error, or, when every replicate (or
    none) passed and that error is 0, the one-sided 95 % bound 1 - 0.05^(1/n) (issue 25: "100 % ± 0 %" read as
    certain)."""
    n = power.replicates
    if 0.0 < power.power < 1.0:
        return f"± {100 * power.se:.{digits}f} %: the Monte-Carlo standard error of {n} replicates"
    bound = 100 * (1 - 0.05 ** (1 / n))
    if power.power == 1.0:
        return f"all {n} replicates passed: at 95 % confidence the chance is at least {100 - bound:.{digits}f} %"
    return f"none of {n} replicates passed: at 95 % confidence the chance is at most {bound:.{digits}f} %"


def quality_words(scoring: Scoring, value: float) -> str:
    """A quality of the model with its unit: a probability (accuracy) or a noise sd in scale points (neg_rmse)."""
    if scoring == "accuracy":
        return f"right with probability {value:.3g}"
    return f"noise sd {value:.3g} scale points"


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
        sources.append(pilot_words(pilot, chosen))
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
    present = sorted(set(counted_items(study=study).values_list("group", flat=True)))
    return StudyPlan(plan=result, design=design, pilot=pilot, sources=tuple(sources), seed=seed,
                     groups=tuple(study_groups(study, present)), n_questions=max(study.questions.count(), 1))


def pilot_words(pilot: Pilot, scoring: Scoring) -> str:
    """The pilot's design and qualities in words, each quality with its unit and the count it rests on."""
    if pilot.groups > 1:  # the words name the unit the test counts (issue 25 review, U5)
        design = (f"a median {pilot.raters} raters per group, a median {pilot.items_per_rater} ratings (one item on "
                  f"one question) per rater within one group (the verdict tests the {pilot.groups} groups apart)")
    else:
        design = f"{pilot.raters} raters, a median {pilot.items_per_rater} ratings (one item on one question) per rater"
    judge = "no judge" if pilot.judge is None else \
        f"the judge “{pilot.pool}”: {quality_words(scoring, pilot.judge)} (from the {pilot.n_judged} pairs it labelled)"
    return (f"pilot: {design} and {pilot.raters_per_item} raters per item; "
            f"a human: {quality_words(scoring, pilot.human)} "
            f"(from {pilot.n_paired} (item, question) pairs rated by 2 or more raters); {judge}")


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
    raters, per_rater, n_groups = _pilot_design(human, data.item_group, len(data.groups))
    rated = per_inst[per_inst > 0]
    return Pilot(
        raters=raters,
        items_per_rater=per_rater,
        raters_per_item=max(2, min(int(np.median(rated)), raters)),
        human=human_q,
        judge=judge_q,
        pool=llm_pools[0].name if llm_pools and judge_q is not None else None,
        groups=n_groups,
        n_paired=int((per_inst >= 2).sum()),
        n_judged=0 if judge_label is None else int(np.isfinite(judge_label[per_inst > 0]).sum()),
    )


def _pilot_design(human: Pool, item_group: np.ndarray, n_groups: int) -> tuple[int, int, int]:
    """(raters, ratings per rater, groups) as one alt-test counts them: within one group (see the module)."""
    groups = max(n_groups, 1)
    n_raters = int(human.raters.size)
    group = item_group[human.item] if groups > 1 else np.zeros(human.item.size, dtype=np.int64)
    counts = np.bincount(human.rater_index * groups + group, minlength=n_raters * groups).reshape(n_raters, groups)
    in_group = (counts > 0).sum(axis=0)
    tested = in_group > 0
    raters = int(np.median(in_group[tested]))
    if raters < 2:
        raise ValueError(f"the pilot has a median of {raters} human rater per group: the verdict's test of one "
                         "group needs raters who rate the same items")
    return raters, max(1, int(np.median(counts[counts > 0]))), int(tested.sum())


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
