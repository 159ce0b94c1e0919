"""Per-rater view of personalized and persona runs (selectors: read the database, hand plain dicts to
``evalhub.personal_metrics``).

A per-rater run predicts human raters: its rows carry ``target_rater``. One prediction per (item,
question, rater) is the majority vote over the row's samples in sample order (persona: the
characters, the first breaking ties; personalized: its samples, usually one). The baseline is the
study's latest plain run, its samples' majority vote on the same held-out items.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from typing import Any

from annotations.models import HumanRating, Item, Study
from evalhub.personal_metrics import average_metrics, per_rater_metrics
from llmjudge.kinds.persona import majority_vote
from llmjudge.models import Judge, JudgeRun, LLMRating

PER_RATER_KINDS = (Judge.Kind.PERSONALIZED, Judge.Kind.PERSONA)


def per_rater_predictions(*, run_id: int) -> dict[tuple[int, int, int], float | None]:
    """(item id, question id, target rater id) -> the vote of the run's samples (None: no usable sample)."""
    scores: dict[tuple[int, int, int], list[float | None]] = defaultdict(list)
    rows = (
        LLMRating.objects.filter(run_id=run_id, target_rater__isnull=False)
        .order_by("item_id", "question_id", "target_rater_id", "sample")
        .values_list("item_id", "question_id", "target_rater_id", "score")
    )
    for item_id, question_id, rater_id, score in rows:
        scores[(item_id, question_id, rater_id)].append(score)
    return {key: majority_vote(values) for key, values in scores.items()}


def _plain_votes(run_id: int) -> dict[tuple[int, int], float | None]:
    scores: dict[tuple[int, int], list[float | None]] = defaultdict(list)
    for item_id, question_id, score in (
        LLMRating.objects.filter(run_id=run_id).order_by("item_id", "question_id", "sample")
        .values_list("item_id", "question_id", "score")
    ):
        scores[(item_id, question_id)].append(score)
    return {key: majority_vote(values) for key, values in scores.items()}


def _summary(true: dict, pred: dict) -> dict[str, Any]:
    rows = per_rater_metrics(true, pred)
    return {"raters": [asdict(r) for r in rows], "average": asdict(average_metrics(rows))}


def personal_report(*, study: Study) -> list[dict[str, Any]]:
    """One entry per per-rater run and question: per-rater metrics, their averages, and the plain baseline."""
    runs = list(
        JudgeRun.objects.filter(study=study, judge__kind__in=PER_RATER_KINDS).select_related("judge").order_by("id")
    )
    if not runs:
        return []
    questions = list(study.questions.order_by("order", "id"))
    names = dict(study.raters.values_list("id", "external_id"))
    regular = set(Item.objects.filter(study=study, kind=Item.Kind.NORMAL).values_list("id", flat=True))
    human: dict[tuple[int, int, int], float] = {
        (i, q, r): s
        for r, i, q, s in HumanRating.objects.filter(rater__study=study).values_list(
            "rater_id", "item_id", "question_id", "score"
        )
    }
    plain = (
        JudgeRun.objects.filter(study=study, judge__kind=Judge.Kind.PLAIN, status=JudgeRun.Status.DONE)
        .select_related("judge").order_by("-id").first()
    )
    baseline = _plain_votes(plain.pk) if plain else {}
    report = []
    for run in runs:
        predicted = per_rater_predictions(run_id=run.pk)
        for question in questions:
            true: dict[str, dict[int, float]] = defaultdict(dict)
            pred: dict[str, dict[int, float | None]] = defaultdict(dict)
            base: dict[str, dict[int, float | None]] = defaultdict(dict)
            for (item, q, rater), value in predicted.items():
                if q != question.pk or item not in regular or (item, q, rater) not in human:
                    continue
                label = names.get(rater) or f"rater-{rater}"
                true[label][item] = human[(item, q, rater)]
                pred[label][item] = value
                base[label][item] = baseline.get((item, q))
            if not true:
                continue
            entry = {
                "run": run.pk, "judge": run.judge.name, "kind": run.judge.kind,
                "method": (run.params.get("kind_options") or {}).get("method", run.judge.kind),
                "question": question.key, **_summary(true, pred), "baseline": None,
            }
            if plain is not None:
                entry["baseline"] = {"run": plain.pk, "judge": plain.judge.name, **_summary(true, base)}
            report.append(entry)
    return report
