"""The per-rater kinds' split (personalized, persona): each rater's profile and held-out items,
stored in ``JudgeRun.params["split"]``, and the rows a run predicts from it."""
from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from annotations.models import Rater, Study
from llmjudge.kinds.common.errors import KindError
from llmjudge.kinds.common.items import human_ratings
from llmjudge.kinds.personalized.prompts import split_profile

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = tuple[int, int, int, int | None]  # (item, question, sample, target rater)


def run_split(
    study: Study, kind: str, *, profile_size: int, seed: int, held_out: int | None
) -> dict[str, dict[str, list[int]]]:
    """{rater id: {"profile": item ids, "held_out": item ids}} as stored in ``JudgeRun.params``."""
    ratings = human_ratings(study)
    if not ratings:
        raise KindError(f"study {study.slug!r} has no human ratings to personalize on")
    try:
        split = split_profile(
            {r: list(items) for r, items in ratings.items()}, k=profile_size, seed=seed, n_held_out=held_out
        )
    except ValueError as exc:
        # The pure split names raters by id; the researcher knows them by external id.
        names = dict(Rater.objects.filter(pk__in=ratings).values_list("pk", "external_id"))
        message = str(exc)
        for pk, name in names.items():
            message = message.replace(f"{pk} has ", f"rater {name or pk} (id {pk}) has ", 1)
        raise KindError(f"{kind} judge with k={profile_size}: {message}") from None
    return {str(r): {"profile": list(split.profile[r]), "held_out": list(split.held_out[r])} for r in split.profile}


def held_out_rows(
    *, study: Study, split: dict[str, dict[str, list[int]]], items: list[int], questions: list[int], samples: int
) -> list[Row]:
    """One row per rater, held-out item the rater rated, question and sample."""
    ratings = human_ratings(study)
    allowed = set(items)
    return [
        (item, question, sample, int(rater))
        for rater, parts in split.items()
        for item in parts["held_out"]
        if item in allowed
        for question in questions
        if question in ratings[int(rater)][item]
        for sample in range(samples)
    ]


def split_params(options: DataclassInstance, split: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    return {"kind_options": asdict(options), "split": split}
