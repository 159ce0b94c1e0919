"""Which items people rate and how many (issue 27): the study setting ``human_subset`` saved and its random
subset drawn, and the human budget planned from the study's own ratings (``human_budget_plan``).

The draw is stratified by group, uniform within each: group k of the study (its declared order, then the
rest sorted, as the analysis orders them) draws ``share`` of its items, or ``count`` of them (at most all),
with ``stats.ppi.mean.draw_human_subset`` seeded by ``seed + k`` over its counted items in id order. Every
counted item records whether it was drawn and its inclusion probability k_g / n_g. Raters are then assigned
only the drawn items (annotations.services); the judge runs on all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Count, Q

from annotations.importing.services import ImportProgress, ImportResult, items_import
from annotations.lifecycle import study_settings_set
from annotations.models import HumanRating, Item, Study
from annotations.selectors import counted_items
from annotations.studies import StudySpecError, human_subset_changeable, human_subset_checked
from evalhub.analysis.cells import Cell, study_cells
from evalhub.analysis.reading import HUMAN, AnalysisOptions, study_data
from evalhub.analysis.tables import contrasts
from evalhub.analysis.trust_notes import MIN_ITEMS
from evalhub.stats.ppi.mean import draw_human_subset, z_quantile
from evalhub.stats.ppi.plan import (
    SMALL_SAMPLE_ITEMS,
    BudgetPlan,
    BudgetPoint,
    GroupMoments,
    pilot_moments,
    plan_human_budget,
    t_widening,
)


@dataclass(frozen=True)
class SubsetDraw:
    """What a draw chose: per group, (items drawn, items in the group)."""

    groups: dict[str, tuple[int, int]]

    @property
    def n_drawn(self) -> int:
        return sum(k for k, _ in self.groups.values())


def study_human_subset_set(*, study: Study, setting: object) -> SubsetDraw | None:
    """Check and save the study's ``human_subset``, and draw the subset when it asks for one (None otherwise).

    Refused (StudySpecError, nothing changed) when the setting is invalid, or when it would change which
    items people rate once human ratings exist: a redraw would leave rated items outside the subset. The same
    setting saved again once people have rated keeps the subset as drawn (items added since stay undrawn).
    """
    checked = human_subset_changeable(study=study, setting=setting)
    if draws(checked) and HumanRating.objects.filter(question__study=study).exists():
        return SubsetDraw(human_subset_drawn(study=study))  # unchanged: human_subset_changeable let only that pass
    with transaction.atomic():
        study.human_subset = checked
        study.save(update_fields=["human_subset"])
        if draws(checked):
            return human_subset_draw(study=study)
        Item.objects.filter(study=study).update(in_human_subset=False, inclusion_probability=None)
    return None


def draws(setting: dict[str, Any]) -> bool:
    """Whether the setting asks EvalHub to draw the subset (a share or a count)."""
    return "share" in setting or "count" in setting


def items_import_drawn(*, study: Study, path: Path, progress: ImportProgress | None = None) -> ImportResult:
    """``items_import``, then the subset drawn afresh over every item when the study asks for a draw and nobody
    has rated yet, so that new items have their chance too. (Once people have rated, new items stay undrawn and
    the analysis says so.) The page, the API and the admin import items through this."""
    result = items_import(study=study, path=path, progress=progress)
    study.refresh_from_db(fields=["human_subset"])
    if draws(study.human_subset) and not HumanRating.objects.filter(question__study=study).exists():
        human_subset_draw(study=study)
    return result


def human_subset_drawn(*, study: Study) -> dict[str, tuple[int, int]]:
    """Per group, (items drawn for people, counted items), when the study asks for a draw; else {}."""
    if not draws(study.human_subset or {}):
        return {}
    rows = counted_items(study=study).order_by("group").values("group").annotate(
        n=Count("id"), k=Count("id", filter=Q(in_human_subset=True))).values_list("group", "k", "n")
    return {group: (k, n) for group, k, n in rows}


def human_subset_draw(*, study: Study) -> SubsetDraw:
    """Draw the study's subset afresh from its setting (module docstring) and record it on every item."""
    setting: dict[str, Any] = study.human_subset
    if not draws(setting):
        raise StudySpecError("human_subset: the study asks for no random subset (share or count)")
    rows = list(counted_items(study=study).order_by("id").values_list("id", "group"))
    declared = [g for g in study.groups if any(group == g for _, group in rows)]
    order = declared + sorted({g for _, g in rows} - set(declared))
    drawn: list[int] = []
    probability: dict[int, float] = {}
    summary: dict[str, tuple[int, int]] = {}
    for k, group in enumerate(order):
        ids = np.array([pk for pk, g in rows if g == group], dtype=np.int64)
        count = min(setting["count"], ids.size) if "count" in setting else None
        chosen, pi = draw_human_subset(ids.size, share=setting.get("share"), count=count, seed=setting["seed"] + k)
        drawn.extend(int(i) for i in ids[chosen])
        probability.update(zip(ids.tolist(), pi.tolist(), strict=True))
        summary[group] = (int(chosen.size), int(ids.size))
    with transaction.atomic():
        Item.objects.filter(study=study).update(in_human_subset=False, inclusion_probability=None)
        by_probability: dict[float, list[int]] = {}
        for pk, p in probability.items():
            by_probability.setdefault(p, []).append(pk)
        for p, pks in by_probability.items():
            Item.objects.filter(pk__in=pks).update(inclusion_probability=p)
        Item.objects.filter(pk__in=drawn).update(in_human_subset=True)
    return SubsetDraw(summary)


# ---------------------------------------------------------------------------
# How many: the human budget per contrast, from the study's pilot


@dataclass(frozen=True)
class BudgetLine:
    """One question x contrast of the plan, for one LLM pool."""

    question: str
    groups: tuple[str, str]
    moments: tuple[GroupMoments, GroupMoments]
    plan: BudgetPlan
    n_pilot: tuple[int, int] = (0, 0)  # the pilot items (a human mean and the judge's) each group's moments rest on
    rho_stated: bool = False  # the correlation was stated (``rho``), not the pilot's


@dataclass(frozen=True)
class StudyBudget:
    width: float
    pool: str
    lines: tuple[BudgetLine, ...]
    alpha: float = 0.05


def human_budget_plan(*, study: Study, width: float, pool: str | None = None, rho: float | None = None,
                      alpha: float = 0.05) -> StudyBudget:
    """How many human-rated items per group reach a (1 - alpha) interval ``width`` wide for each contrast's
    difference, with the judge's ratings (PPI++) and without them (``stats.ppi.plan.plan_human_budget``).

    The pilot: per group, the items with both a human mean and the pool's mean give sigma_Y, sigma_f and
    their correlation (``pilot_moments``); M is the group's number of counted items. ``rho`` states the
    judge-human correlation instead of the pilot's. The pool is the first LLM pool, or the one named.
    Raises ValueError (nothing to plan): no LLM pool or an unknown one, a width that is not positive, rho
    outside [-1, 1]."""
    if not (math.isfinite(width) and width > 0):
        raise ValueError(f"width must be a positive number, got {width}")
    if rho is not None and not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be between -1 and 1, got {rho}")
    data = study_data(study=study, options=AnalysisOptions())
    names = [p.name for p in data.pools if p.kind == "llm"]
    if not names:
        raise ValueError("the study has no LLM pool: the plan needs the judge's scores (run or import a judge)")
    chosen = pool or names[0]
    if chosen not in names:
        raise ValueError(f"no LLM pool {chosen!r}; the study's are {', '.join(names)}")
    cells = study_cells(data)
    sizes = {g: int((data.item_group == k).sum()) for k, g in enumerate(data.groups)}
    lines = []
    for question in data.questions:
        pilots = {g: _group_moments(cells[(question.key, g, HUMAN)], cells[(question.key, g, chosen)],
                                    sizes[g], rho) for g in data.groups}
        moments = {g: m for g, (m, _) in pilots.items()}
        for a, b in contrasts(study, data.groups):
            if a in moments and b in moments:
                plan = plan_human_budget(group_a=moments[a], group_b=moments[b], width=width, alpha=alpha,
                                         names=(a, b))
                lines.append(BudgetLine(question.key, (a, b), (moments[a], moments[b]), plan,
                                        (pilots[a][1], pilots[b][1]), rho is not None))
    return StudyBudget(width, chosen, tuple(lines), alpha)


def _group_moments(human: Cell, judged: Cell, n_items: int, rho: float | None) -> tuple[GroupMoments, int]:
    """A group's pilot moments, and the number of pilot items (a human mean and the judge's) they rest on."""
    h_items, h_means = human.item_means()
    j_items, j_means = judged.item_means()
    _, hi, ji = np.intersect1d(h_items, j_items, assume_unique=True, return_indices=True)
    moments = pilot_moments(y=h_means[hi], f=j_means[ji], n_unlabelled=max(n_items - hi.size, 0))
    if rho is None or moments.reason is not None:
        return moments, int(hi.size)
    return replace(moments, rho=rho), int(hi.size)


def _point(point: BudgetPoint | None, n_items: tuple[int, int]) -> str:
    if point is None:
        return "not reached even with every item rated by people"
    return (f"{point.n_a} + {point.n_b} human-rated items (of {n_items[0]} + {n_items[1]}), "
            f"expected width {point.width:.3f}")


def budget_lines(budget: StudyBudget) -> list[str]:
    """The plan as lines of text (the command's output and the study page's list). The widths are the
    large-sample ones the PPI intervals use (the target line says so); a line whose widths rest on fewer than
    ``SMALL_SAMPLE_ITEMS`` human-rated items in a group adds how much wider a t interval would be
    (``_small_sample_note``)."""
    level = f"{100 * (1 - budget.alpha):g} %"
    lines = [f"target: a {level} interval {budget.width:g} wide for each difference; judge: {budget.pool}; "
             f"widths are large-sample ones (normal quantile {z_quantile(budget.alpha):.2f}, as the PPI "
             "intervals use)"]
    for line in budget.lines:
        a, b = line.groups
        head = f"{line.question}: “{a}” − “{b}”"  # groups quoted, never read as the human raters (review 17)
        if line.plan.reason is not None:
            lines.append(f"{head}: no plan ({line.plan.reason})")
            continue
        if (few := _few_pilot(line)) is not None:
            lines.append(f"{head}: no plan ({few})")
            continue
        sizes = (line.moments[0].n_items, line.moments[1].n_items)
        lines += [f"{head} ({_correlation_words(line)})",
                  f"  with the judge: {_point(line.plan.with_judge, sizes)}",
                  f"  people alone:   {_point(line.plan.without_judge, sizes)}"]
        if line.plan.items_saved is not None:
            lines.append(f"  the judge saves {line.plan.items_saved} human-rated items")
        lines += [f"  note: {note}" for note in line.plan.notes]
        lines += [f"  note: {note}" for note in _small_sample_note(line.plan, sizes)]
        if min(line.n_pilot) < MIN_ITEMS:  # a stated correlation: the spreads still rest on the small pilot
            lines.append(f"  note: the pilot's spreads rest on fewer than {MIN_ITEMS} items a group, so this plan "
                         "is rough")
    return lines


def _few_pilot(line: BudgetLine) -> str | None:
    """Why a line has no plan when its pilot correlation is not stated and rests on fewer than ``MIN_ITEMS`` items
    in a group: the dashboard withholds τ, α and κ on so few items, and the plan would rest on such a correlation
    (eleventh review, M1: "human 0.28 on 3 items" planned with)."""
    if line.rho_stated or min(line.n_pilot) >= MIN_ITEMS:
        return None
    few = ", ".join(f"group “{g}” {n}" for g, n in zip(line.groups, line.n_pilot, strict=True) if n < MIN_ITEMS)
    return (f"the pilot's judge-human correlation rests on too few items ({few}; {MIN_ITEMS} needed): state a "
            "correlation (the planner's own field, or --rho) to plan with it")


def _small_sample_note(plan: BudgetPlan, sizes: tuple[int, int]) -> list[str]:
    """How much wider than the printed large-sample widths a t interval would be, for each printed width that
    rests on fewer than SMALL_SAMPLE_ITEMS human-rated items in a group (eighth review: 2.221 on 3 + 3 items,
    a t interval about 3.15): the factor t_{1-alpha/2, df} / z with df = n_a + n_b - 2 (``t_widening``: the
    pooled df, at least Welch's, so the factor is a lower bound). [] when every width rests on enough."""
    points = [(p.n_a, p.n_b) for p in (plan.with_judge, plan.without_judge) if p is not None]
    if plan.with_judge is None or plan.without_judge is None:
        points.append(sizes)  # the "every item rated by people" widths of the notes
    small = [n for n in dict.fromkeys(points) if min(n) < SMALL_SAMPLE_ITEMS]
    if not small:
        return []
    level, z = 1 - plan.alpha / 2, z_quantile(plan.alpha)
    factors = ", ".join(f"{t_widening(a, b, plan.alpha)[0]:.2f} times at {a} + {b} items "
                        f"(t_{{{level:g}, {a + b - 2}}} / {z:.2f})" for a, b in small)
    return [f"with fewer than {SMALL_SAMPLE_ITEMS} human-rated items in a group, a t interval would be wider than "
            f"these large-sample widths: at least {factors}; df = n_a + n_b - 2"]


def _correlation_words(line: BudgetLine) -> str:
    """The judge-human correlation each group's plan uses, with the pilot items it rests on (seventh review, M4:
    correlations on 3 items given without their n), or the stated one."""
    if line.rho_stated:
        return f"judge-human correlation: stated, {line.moments[0].rho:.2f}"
    rho = ", ".join(f"{g} {m.rho:.2f} on {n} item{'' if n == 1 else 's'}"
                    for g, m, n in zip(line.groups, line.moments, line.n_pilot, strict=True))
    return f"judge-human correlation over the pilot's items: {rho}"


def study_settings_save(*, study: Study, values: dict[str, Any]) -> list[str]:
    """The study page's settings form (issue 26, 1): every setting checked before anything is written
    (annotations.studies.study_settings_set: the spec's check, the model's field rules, what an open study keeps),
    then saved; the human subset through study_human_subset_set, which draws it. Returns the names changed."""
    with transaction.atomic():
        changed = study_settings_set(study=study, values=values)
        if "human_subset" in values and human_subset_checked(values["human_subset"]) != study.human_subset:
            study_human_subset_set(study=study, setting=values["human_subset"])
            changed.append("human_subset")
        elif "gold_items" in changed and draws(study.human_subset):
            study_human_subset_set(study=study, setting=study.human_subset)  # gold items are never drawn: redraw
    return sorted(changed)
