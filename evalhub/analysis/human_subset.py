"""Which items people rate and how many (issue 27): the study setting ``human_subset`` saved and its random
subset drawn, and the human budget planned from the study's own ratings.

The draw is stratified by group, uniform within each: group k of the study (its declared order, then the
rest sorted, as the analysis orders them) draws ``share`` of its items, or ``count`` of them (at most all),
with ``stats.ppi.mean.draw_human_subset`` seeded by ``seed + k`` over its counted items in id order. Every
counted item records whether it was drawn and its inclusion probability k_g / n_g. Raters are then assigned
only the drawn items (annotations.services); the judge runs on all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.db import transaction

from annotations.importing.services import ImportProgress, ImportResult, items_import
from annotations.models import HumanRating, Item, Study
from annotations.selectors import counted_items
from annotations.studies import StudySpecError, human_subset_changeable
from evalhub.stats.ppi.mean import draw_human_subset


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
    items people rate once human ratings exist: a redraw would leave rated items outside the subset.
    """
    checked = human_subset_changeable(study=study, setting=setting)
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
