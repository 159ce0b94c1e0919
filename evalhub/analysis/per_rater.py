"""Per-rater view of personalized and persona runs (selectors: read the database, hand plain dicts to
``evalhub.stats.prediction_metrics``; the sections are ``result.PersonalEntry`` and ``result.AblationTable``).

A per-rater run predicts human raters: its rows carry ``target_rater``. One prediction per (item,
question, rater) is the majority vote over the row's samples in sample order (persona: the
characters, the first breaking ties; personalized: its samples, usually one). The baseline is the
latest finished plain run (among the runs the dashboard's filter selects), its samples' majority vote
on the same held-out items. Per-rater runs sharing a split also form an ablation table (CINEMETRIC
tables 1-2), one row per run and question on the pairs all of them predict.
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from annotations.models import HumanRating, Question, Study, rater_label
from annotations.selectors import counted_items
from evalhub.analysis.result import AblationRow, AblationTable, PersonalBaseline, PersonalEntry
from evalhub.stats.agreement import majority_vote
from evalhub.stats.prediction_metrics import MetricsSummary, RaterMetrics, average_metrics, per_rater_metrics
from llmjudge.kinds import is_per_rater
from llmjudge.models import Judge, JudgeRun, LLMRating


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


def _summary(true: Mapping[str, Mapping[int, float]],
             pred: Mapping[str, Mapping[int, float | None]]) -> tuple[tuple[RaterMetrics, ...], MetricsSummary]:
    rows = per_rater_metrics(true, pred)
    return tuple(rows), average_metrics(rows)


# CINEMETRIC's tables 1-2 list the baselines first and the full method last.
ABLATION_ORDER = ("plain", "personalized_judge", "no_training_examples", "no_character_names", "cinemetric")
METHOD_LABELS = {
    "plain": "LLM as a judge",
    "personalized_judge": "LLM as a personalized judge (demographics only)",
    "no_training_examples": "CINEMETRIC w/o training examples",
    "no_character_names": "CINEMETRIC w/o character names",
    "cinemetric": "CINEMETRIC",
    "personalized": "PERSE (profile of k ratings)",
}


@dataclass(frozen=True)
class _Truth:
    names: dict[int, str]  # rater id -> label
    human: dict[tuple[int, int, int], float]  # (item, question, rater) -> score, regular items of the shown groups


def _truth(study: Study, groups: tuple[str, ...] | None) -> _Truth:
    items = counted_items(study=study)
    if groups is not None:
        items = items.filter(group__in=groups)
    rows = HumanRating.objects.filter(rater__study=study, item__in=items).values_list(
        "rater_id", "item_id", "question_id", "score"
    )
    names = {pk: rater_label(external_id=name, number=number, pk=pk)
             for pk, name, number in study.raters.values_list("id", "external_id", "number")}
    return _Truth(names, {(i, q, r): s for r, i, q, s in rows})


def _method(run: JudgeRun) -> str:
    return (run.params.get("kind_options") or {}).get("method", run.judge.kind)


def personal_sections(
    *,
    study: Study,
    runs: tuple[int, ...] | None = None,
    questions: tuple[str, ...] | None = None,
    groups: tuple[str, ...] | None = None,
) -> tuple[list[PersonalEntry], list[AblationTable]]:
    """The per-rater entries (``personal``) and the ablation tables (``ablations``).

    The dashboard's filters apply as everywhere else: ``runs`` (per-rater runs shown and the plain
    baseline chosen among them), ``questions`` (keys) and ``groups`` (held-out items of these groups
    only; None = every group).
    """
    selected = JudgeRun.objects.filter(study=study).select_related("judge").order_by("id")
    if runs is not None:
        selected = selected.filter(pk__in=runs)
    per_rater = [r for r in selected if is_per_rater(r.judge.kind)]
    if not per_rater:
        return [], []
    shown = [q for q in study.questions.order_by("order", "id") if questions is None or q.key in questions]
    truth = _truth(study, groups)
    plain = next((r for r in reversed(list(selected))
                  if r.judge.kind == Judge.Kind.PLAIN and r.status == JudgeRun.Status.DONE), None)
    baseline = _plain_votes(plain.pk) if plain else {}
    predicted = {run.pk: per_rater_predictions(run_id=run.pk) for run in per_rater}
    report: list[PersonalEntry] = []
    for run in per_rater:
        for question in shown:
            keys = [(i, r) for (i, q, r) in predicted[run.pk] if q == question.pk and (i, q, r) in truth.human]
            if not keys:
                continue
            true, pred = _true_and_pred(truth, question.pk, keys, predicted[run.pk])
            base = {label: {i: baseline.get((i, question.pk)) for i in items} for label, items in true.items()}
            raters, average = _summary(true, pred)
            baseline_entry = None if plain is None else PersonalBaseline(plain.pk, plain.judge.name,
                                                                         *_summary(true, base))
            report.append(PersonalEntry(
                run=run.pk, judge=run.judge.name, kind=run.judge.kind, method=_method(run), question=question.key,
                raters=raters, average=average, baseline=baseline_entry))
    return report, _ablation_tables(per_rater, shown, truth, predicted)


def _true_and_pred(
    truth: _Truth, question: int, keys: list[tuple[int, int]], predicted: dict[tuple[int, int, int], float | None]
) -> tuple[dict[str, dict[int, float]], dict[str, dict[int, float | None]]]:
    true: dict[str, dict[int, float]] = defaultdict(dict)
    pred: dict[str, dict[int, float | None]] = defaultdict(dict)
    for item, rater in keys:
        label = truth.names.get(rater, f"rater-{rater}")
        true[label][item] = truth.human[(item, question, rater)]
        pred[label][item] = predicted.get((item, question, rater))
    return true, pred


def _ablation_tables(
    runs: list[JudgeRun], questions: list[Question], truth: _Truth,
    predicted: dict[int, dict[tuple[int, int, int], float | None]],
) -> list[AblationTable]:
    """Per-rater runs that share a split, compared method by method on the same predictions (tables 1-2).

    Runs belong to one table when their ``params["split"]`` is identical (same raters, same held-out
    items), e.g. the runs of ``persona_ablation_launch``. Each row is one run and question, scored
    on the (rater, item) pairs every run of the table predicts, so the rows differ only in method.
    ``accuracy``/``mae`` are pooled over those pairs, as CINEMETRIC reports them; ``rater_accuracy``
    and ``rater_mae`` are the means over raters (``average_metrics``).
    """
    by_split: dict[str, list[JudgeRun]] = defaultdict(list)
    for run in runs:
        by_split[json.dumps(run.params.get("split"), sort_keys=True)].append(run)
    rank = {m: n for n, m in enumerate((*ABLATION_ORDER, "personalized"))}
    tables: list[AblationTable] = []
    for members in by_split.values():
        if len(members) < 2:
            continue  # one method is no comparison; its per-rater entry shows it
        members.sort(key=lambda r: (rank.get(_method(r), len(rank)), r.pk))
        experiments = {r.experiment_id for r in members}
        rows: list[AblationRow] = []
        pairs: dict[str, int] = {}
        for question in questions:
            common = set.intersection(*(
                {(i, r) for (i, q, r) in predicted[run.pk] if q == question.pk and (i, q, r) in truth.human}
                for run in members
            ))
            if not common:
                continue
            keys = sorted(common)
            pairs[question.key] = len(keys)
            for run in members:
                true, pred = _true_and_pred(truth, question.pk, keys, predicted[run.pk])
                summary = average_metrics(per_rater_metrics(true, pred))
                rows.append(AblationRow(
                    run=run.pk, judge=run.judge.name, method=_method(run),
                    label=METHOD_LABELS.get(_method(run), _method(run)), question=question.key,
                    n_raters=summary.n_raters, n_items=summary.n_items, n_missing=summary.n_missing,
                    accuracy=summary.pooled_accuracy, mae=summary.pooled_mae,
                    rater_accuracy=summary.accuracy.value, rater_mae=summary.mae.value,
                ))
        if rows:
            tables.append(AblationTable(
                runs=tuple(r.pk for r in members),
                experiment=members[0].experiment_id if len(experiments) == 1 else None,
                pairs=pairs, rows=tuple(rows),
            ))
    return tables

