"""Judge runs: start, enqueue, pause, resume, cancel; experiments (grids and persona ablations).

Exactly-once, in three rules:

1. A run creates every rating row up front as ``pending`` (one per run, item, question, sample;
   the database's unique constraint makes a second insert a no-op).
2. A chunk (llmjudge/runs/chunks.py) asks only rows that are still pending when it starts, and writes
   its results in batches whose every row is guarded by ``status = 'pending'`` in the statement
   that writes it (llmjudge/runs/rating_sql.py): whichever delivery answers first wins, a redelivered or
   duplicated chunk's late answer changes nothing, also when the first delivery stored part of its
   batches before it died.
3. Resuming enqueues only what is still pending (optionally errors, reset to pending first).

So a worker killed mid-chunk loses only calls, never ratings: its rows stay pending until the
broker delivers the chunk again or the run is resumed. Calls are "at least once", ratings exactly
once. No network call happens inside a transaction: the engine runs in a background thread and
the writer loop (llmjudge/runs/execution.py) commits what finished every 0.1 s, one statement per batch.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotations.models import Study
from llmjudge.backends.registry import BACKENDS, QUEUES
from llmjudge.kinds import kind_names, planned_rows, planned_steps
from llmjudge.kinds.common.calls import steps_create
from llmjudge.kinds.persona.prompts import METHODS
from llmjudge.models import Experiment, Judge, JudgeRun, LLMRating
from llmjudge.prompting.study_prompt import template_version
from llmjudge.runs.chunks import ACTIVE, ChunkSummary, judge_run_update_counters, run_chunk
from llmjudge.runs.config import JudgeConfig, temperature_in_range
from llmjudge.runs.execution import old_objects_frozen
from llmjudge.runs.rating_sql import insert_pending
from llmjudge.runs.swapping import check_swap_share, swap_rows

logger = logging.getLogger(__name__)

PAPER_TEMPERATURES = (1.0, 0.7, 0.3, 0.0)
PAPER_VARIANTS = ("original", "persona", "explain")


class RunError(ValueError):
    """The run cannot be started or changed; the message says why (shown to the researcher)."""


# --- starting ----------------------------------------------------------------------------------


def judge_run_start(
    *,
    study: Study,
    judge: Judge,
    overrides: dict[str, Any] | None = None,
    experiment: Experiment | None = None,
    enqueue: bool = True,
    kind_options: dict[str, Any] | None = None,
) -> JudgeRun:
    """Create the run and all its pending ratings; enqueue its chunks once the transaction commits.

    ``kind_options`` override the judge's kind options for this run (e.g. a per-rater split from the
    run form); they are validated with the rest and recorded in the run's params.
    """
    if judge.backend not in BACKENDS:
        raise RunError(f"judge {judge.name!r} has backend {judge.backend!r}, which cannot be run (no calls)")
    if judge.kind not in kind_names():
        raise RunError(f"judge {judge.name!r} is of kind {judge.kind!r}, which has no prompt builder yet")
    try:
        config = JudgeConfig.from_judge(judge, overrides)
        if kind_options:
            config = dataclasses.replace(config, options={**config.options, **kind_options})
    except ValueError as exc:
        raise RunError(str(exc)) from None
    questions = list(study.questions.order_by("order", "id").values_list("id", flat=True))
    items = list(study.items.order_by("position", "id").values_list("id", flat=True))
    if not questions or not items:
        raise RunError(f"study {study.slug!r} has no items or no questions to judge")
    try:
        rows, kind_params = planned_rows(study=study, config=config, items=items, questions=questions)
        check_swap_share(study=study, config=config)
    except ValueError as exc:  # KindError, the kinds' option errors and SwapError
        raise RunError(str(exc)) from None
    # The position-bias probe: a share of the items once more, A and B swapped (llmjudge/runs/swapping.py).
    rows += swap_rows(config=config, items=items, questions=questions)
    if not rows:
        raise RunError(f"a {judge.kind} judge has nothing to predict on study {study.slug!r}")
    version = template_version(study)
    with old_objects_frozen(), transaction.atomic():
        run = JudgeRun.objects.create(
            study=study,
            judge=judge,
            experiment=experiment,
            status=JudgeRun.Status.RUNNING,
            params={**config.to_params(), **kind_params},
            started_at=timezone.now(),
        )
        insert_pending(run=run, rows=rows, version=version, config=config)
        if config.swap_share:
            run.ratings.filter(sample__gte=config.samples).update(swapped=True)
        steps_create(run=run, steps=planned_steps(config=config, rows=rows))
        run.calls_total = len(rows)
        run.save(update_fields=["calls_total"])
        if enqueue:
            run_id = run.pk
            transaction.on_commit(lambda: judge_run_enqueue(run_id=run_id))
    return run



def _pending_chunks(run: JudgeRun) -> list[list[int]]:
    """Pending rating ids in chunks; a chat conversation (item, sample) is never split."""
    rows = (
        run.ratings.filter(status=LLMRating.Status.PENDING)
        .order_by("item__position", "item_id", "sample", "question__order", "question_id")
        .values_list("id", "item_id", "sample")
    )
    chat = (run.params or {}).get("mode") == "chat"
    size = settings.LLM_CHUNK_SIZE
    chunks: list[list[int]] = []
    current: list[int] = []
    last_group: tuple[int, int] | None = None
    for rating_id, item_id, sample in rows:
        group = (item_id, sample)
        if len(current) >= size and not (chat and group == last_group):
            chunks.append(current)
            current = []
        current.append(rating_id)
        last_group = group
    if current:
        chunks.append(current)
    return chunks


def run_queue(run: JudgeRun) -> str:
    return QUEUES.get(run.judge.backend, "llm")


def judge_run_enqueue(*, run_id: int) -> int:
    """Send every pending rating of the run to its queue (`llm`, or `gpu` for local models), in chunks."""
    from llmjudge.tasks import judge_chunk

    run = JudgeRun.objects.select_related("judge").get(pk=run_id)
    chunks = _pending_chunks(run)
    queue_name = run_queue(run)
    for chunk in chunks:
        judge_chunk.apply_async((run_id, chunk), queue=queue_name)
    return len(chunks)


def experiment_launch(
    *,
    study: Study,
    judges: Iterable[Judge],
    temperatures: Iterable[float] = PAPER_TEMPERATURES,
    variants: Iterable[str] = PAPER_VARIANTS,
    owner: User | None = None,
    name: str = "",
) -> Experiment:
    """One run per judge x temperature x variant (the paper's table 3), grouped as an experiment."""
    judges, temperatures, variants = list(judges), [float(t) for t in temperatures], list(variants)
    if not judges or not temperatures or not variants:
        raise RunError("an experiment needs at least one judge, one temperature and one variant")
    valid = set(Judge.Variant.values)
    for variant in variants:
        if variant not in valid:
            raise RunError(f"unknown variant {variant!r} (known: {', '.join(sorted(valid))})")
    for temperature in temperatures:
        if not temperature_in_range(temperature):
            raise RunError(f"temperature {temperature:g} is outside 0..2")
    with transaction.atomic():
        experiment = Experiment.objects.create(
            study=study,
            owner=owner,
            name=name or f"{study.slug}: {len(judges)} judge(s) x T{temperatures} x {variants}",
            grid={"judges": [j.pk for j in judges], "temperatures": temperatures, "variants": variants},
        )
        for judge in judges:
            for temperature in temperatures:
                for variant in variants:
                    judge_run_start(
                        study=study,
                        judge=judge,
                        overrides={"temperature": temperature, "variant": variant},
                        experiment=experiment,
                    )
    return experiment


def persona_ablation_launch(
    *,
    study: Study,
    judge: Judge,
    methods: Iterable[str] | None = None,
    kind_options: dict[str, Any] | None = None,
    owner: User | None = None,
    name: str = "",
    enqueue: bool = True,
) -> Experiment:
    """One run of a persona judge per CINEMETRIC method (tables 1-2), grouped as an experiment.

    Every run gets the same split options (the judge's, overridden by ``kind_options``), so each
    method predicts the same raters on the same held-out items and the dashboard's ablation table
    compares them row by row. All or nothing: a method that cannot start (e.g. raters without
    demographics) starts none.
    """
    methods = list(METHODS if methods is None else methods)
    if judge.kind != Judge.Kind.PERSONA:
        raise RunError(f"judge {judge.name!r} is a {judge.kind} judge; the ablation set runs a persona judge")
    if not methods:
        raise RunError("an ablation set needs at least one method")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise RunError(f"unknown persona method(s) {', '.join(unknown)} (known: {', '.join(METHODS)})")
    split = {k: v for k, v in (kind_options or {}).items() if k != "method"}
    with transaction.atomic():
        experiment = Experiment.objects.create(
            study=study,
            owner=owner,
            name=name or f"{study.slug}: {judge.name} ablations ({', '.join(methods)})",
            grid={"ablation": "persona", "judge": judge.pk, "methods": methods, "kind_options": split},
        )
        for method in methods:
            judge_run_start(study=study, judge=judge, experiment=experiment, enqueue=enqueue,
                            kind_options={**split, "method": method})
    return experiment


# --- pause, resume, cancel ---------------------------------------------------------------------


def judge_run_pause(*, run: JudgeRun) -> bool:
    """Running chunks stop starting calls within a second; what is unanswered stays pending."""
    changed = JudgeRun.objects.filter(pk=run.pk, status__in=ACTIVE).update(status=JudgeRun.Status.PAUSED)
    _refresh(run, changed)
    return bool(changed)


def judge_run_cancel(*, run: JudgeRun) -> bool:
    """Stop for good: pending ratings stay pending (visible as never asked), the run cannot resume."""
    changed = JudgeRun.objects.filter(
        pk=run.pk, status__in=(*ACTIVE, JudgeRun.Status.PAUSED, JudgeRun.Status.FAILED)
    ).update(status=JudgeRun.Status.CANCELLED, finished_at=timezone.now())
    _refresh(run, changed)
    if changed:
        judge_run_update_counters(run_id=run.pk)
    return bool(changed)


def judge_run_resume(*, run: JudgeRun, retry_errors: bool = False, enqueue: bool = True) -> int:
    """Fill only what is missing: pending ratings (and, with retry_errors, those that ended in error).

    Returns how many ratings will be asked. Also the remedy for a run whose messages were lost
    (a broker flushed); a duplicate chunk is harmless (see the module docstring).
    """
    if run.status == JudgeRun.Status.CANCELLED:
        raise RunError("a cancelled run cannot be resumed; start a new run")
    with transaction.atomic():
        if retry_errors:
            # Keep attempts and history: the retries add to them, nothing is forgotten.
            run.ratings.filter(status=LLMRating.Status.ERROR).update(
                status=LLMRating.Status.PENDING, rationale="", updated_at=timezone.now()
            )
        todo = run.ratings.filter(status=LLMRating.Status.PENDING).count()
        if not todo and run.status == JudgeRun.Status.DONE:
            return 0  # nothing missing: keep the run's finish time
        JudgeRun.objects.filter(pk=run.pk).update(
            status=JudgeRun.Status.RUNNING if todo else JudgeRun.Status.DONE,
            error="",
            finished_at=None if todo else timezone.now(),
            started_at=run.started_at or timezone.now(),
        )
        if todo and enqueue:
            run_id = run.pk
            transaction.on_commit(lambda: judge_run_enqueue(run_id=run_id))
    run.refresh_from_db()
    judge_run_update_counters(run_id=run.pk)
    return todo


def _refresh(run: JudgeRun, changed: int) -> None:
    if changed:
        run.refresh_from_db()



def judge_run_execute_inline(*, run: JudgeRun, on_progress: Callable[[], None] | None = None) -> ChunkSummary:
    """Do the whole run in this process (no worker): one engine pass over every pending rating."""
    return run_chunk(run_id=run.pk, rating_ids=None, on_progress=on_progress)


RUN_ACTIONS = ("pause", "resume", "retry", "cancel")


def judge_run_act(*, run: JudgeRun, action: str) -> bool:
    """A researcher's control on a run, as the run page and the API offer it: whether it changed anything.

    ``judge_run_resume`` returns how many ratings it will ask: none means there was nothing to resume or
    retry, which the caller reports (it used to be taken for success).
    """
    if action == "pause":
        return judge_run_pause(run=run)
    if action == "resume":
        return judge_run_resume(run=run) > 0
    if action == "retry":
        return judge_run_resume(run=run, retry_errors=True) > 0
    if action == "cancel":
        return judge_run_cancel(run=run)
    raise ValueError(f"unknown run action {action!r}; expected one of {', '.join(RUN_ACTIONS)}")
