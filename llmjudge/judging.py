"""Judge runs: start, execute chunks exactly once, pause, resume, cancel, finish.

Exactly-once, in three rules:

1. A run creates every rating row up front as ``pending`` (one per run, item, question, sample;
   the database's unique constraint makes a second insert a no-op).
2. A chunk asks only rows that are still pending when it starts, and writes its results in
   batches whose every row is guarded by ``status = 'pending'`` in the statement that writes it:
   whichever delivery answers first wins, a redelivered or duplicated chunk's late answer changes
   nothing, also when the first delivery stored part of its batches before it died.
3. Resuming enqueues only what is still pending (optionally errors, reset to pending first).

So a worker killed mid-chunk loses only calls, never ratings: its rows stay pending until the
broker delivers the chunk again or the run is resumed. Calls are "at least once", ratings exactly
once. No network call happens inside a transaction: the engine runs in a background thread and
this module's writer loop commits what finished every 0.1 s, one statement per batch.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
import json
import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from annotations.models import Item, Question, Study
from llmjudge.backends import BACKENDS, QUEUES, BackendConfig, backend_for
from llmjudge.config import JudgeConfig
from llmjudge.engine import CallSettings, EngineOutcome, EngineSettings, TurnResult, run_conversations
from llmjudge.kind_builders import planned_rows, planned_steps, prepare_steps, steps_create
from llmjudge.limits import Limiter, LocalLimiter, RedisLimiter
from llmjudge.models import Experiment, Judge, JudgeRun, LLMRating
from llmjudge.pricing import estimate_cost
from llmjudge.prompts import BUILDERS, Conversation, builder_for, template_version

logger = logging.getLogger(__name__)

PAPER_TEMPERATURES = (1.0, 0.7, 0.3, 0.0)
PAPER_VARIANTS = ("original", "persona", "explain")
_ACTIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
# How often a running chunk looks at its run's status (pause and cancel take effect within this).
_STATUS_POLL_SECONDS = 1.0
_WRITE_BATCH = 200
_WRITE_WINDOW_SECONDS = 0.1


@contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """Keep what is alive now (Django, the SDK, the run's data) out of the garbage collector's scans.

    Creating thousands of rows or results triggers full collections, and each one walks every
    object of the process (~175,000 with Django and the SDK loaded) while holding the GIL: measured,
    0.3-0.6 s per 2,500-call run. Frozen objects are unfrozen afterwards, so a long-lived worker
    still collects them later; nothing is leaked.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
    if judge.kind not in BUILDERS:
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
    except ValueError as exc:  # KindError and the kinds' option errors
        raise RunError(str(exc)) from None
    if not rows:
        raise RunError(f"a {judge.kind} judge has nothing to predict on study {study.slug!r}")
    version = template_version(study)
    with _old_objects_frozen(), transaction.atomic():
        run = JudgeRun.objects.create(
            study=study,
            judge=judge,
            experiment=experiment,
            status=JudgeRun.Status.RUNNING,
            params={**config.to_params(), **kind_params},
            started_at=timezone.now(),
        )
        _insert_pending(run=run, rows=rows, version=version, config=config)
        steps_create(run=run, steps=planned_steps(config=config, rows=rows))
        run.calls_total = len(rows)
        run.save(update_fields=["calls_total"])
        if enqueue:
            run_id = run.pk
            transaction.on_commit(lambda: judge_run_enqueue(run_id=run_id))
    return run


_VARYING = ("item_id", "question_id", "sample", "target_rater_id", "params")


def _insert_pending(
    *, run: JudgeRun, rows: list[tuple[int, int, int, int | None]], version: str, config: JudgeConfig
) -> None:
    """One pending rating per planned row; a row that exists already is left alone (unique key).

    On PostgreSQL one ``INSERT ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING``: the columns
    that differ per row go as arrays, every other column takes the value a new LLMRating gets
    (defaults, the run, the template version), so a field added to the model is filled as the ORM
    would fill it. Measured: a fifth of ``bulk_create``'s CPU for 2,500 rows, which a run spends
    before its first call. Elsewhere ``bulk_create`` with ``ignore_conflicts``.
    """
    if not rows:
        return
    params = {sample: config.rating_params(sample) for sample in {row[2] for row in rows}}
    if connection.vendor != "postgresql":
        LLMRating.objects.bulk_create(
            (
                LLMRating(run=run, item_id=item_id, question_id=question_id, sample=sample, target_rater_id=target,
                          template_version=version, model=config.model, params=params[sample])
                for item_id, question_id, sample, target in rows
            ),
            batch_size=1000,
            ignore_conflicts=True,
        )
        return
    prototype = LLMRating(run=run, template_version=version, model=config.model)
    quote = connection.ops.quote_name
    fields = [f for f in LLMRating._meta.concrete_fields if not f.primary_key]
    varying = {name: LLMRating._meta.get_field(name.removesuffix("_id")) for name in _VARYING}
    columns, selected, constants = [], [], []
    for field in fields:
        columns.append(quote(field.column))
        if field.attname in varying:
            selected.append(f"v.{quote(field.column)}")
        else:
            selected.append("%s")
            constants.append(field.get_db_prep_save(field.pre_save(prototype, add=True), connection))
    arrays = ", ".join(f"%s::{varying[name].db_type(connection)}[]" for name in _VARYING)
    names = ", ".join(quote(varying[name].column) for name in _VARYING)
    sql = (
        f"INSERT INTO {quote(LLMRating._meta.db_table)} ({', '.join(columns)}) "
        f"SELECT {', '.join(selected)} FROM unnest({arrays}) AS v({names}) ON CONFLICT DO NOTHING"
    )
    dumped = {sample: json.dumps(value) for sample, value in params.items()}
    values = [list(column) for column in zip(*rows, strict=True)]
    values.append([dumped[sample] for sample in values[2]])
    with connection.cursor() as cursor:
        cursor.execute(sql, [*constants, *values])


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
    owner: AbstractBaseUser | None = None,
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
        if not 0 <= temperature <= 2:
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
    owner: AbstractBaseUser | None = None,
    name: str = "",
    enqueue: bool = True,
) -> Experiment:
    """One run of a persona judge per CINEMETRIC method (tables 1-2), grouped as an experiment.

    Every run gets the same split options (the judge's, overridden by ``kind_options``), so each
    method predicts the same raters on the same held-out items and the dashboard's ablation table
    compares them row by row. All or nothing: a method that cannot start (e.g. raters without
    demographics) starts none.
    """
    from llmjudge.kinds.persona import METHODS

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
    changed = JudgeRun.objects.filter(pk=run.pk, status__in=_ACTIVE).update(status=JudgeRun.Status.PAUSED)
    _refresh(run, changed)
    return bool(changed)


def judge_run_cancel(*, run: JudgeRun) -> bool:
    """Stop for good: pending ratings stay pending (visible as never asked), the run cannot resume."""
    changed = JudgeRun.objects.filter(
        pk=run.pk, status__in=(*_ACTIVE, JudgeRun.Status.PAUSED, JudgeRun.Status.FAILED)
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


# --- counters and finishing --------------------------------------------------------------------


def judge_run_update_counters(*, run_id: int) -> None:
    """Copy the counts from the ratings onto the run (the ratings are the truth; these are a cache)."""
    from llmjudge.selectors import run_progress

    run = JudgeRun.objects.get(pk=run_id)
    progress = run_progress(run=run)
    JudgeRun.objects.filter(pk=run_id).update(
        calls_total=progress.total,
        calls_done=progress.done,
        calls_failed=progress.failed,
        tokens_prompt=progress.tokens_prompt,
        tokens_completion=progress.tokens_completion,
        cost_usd=estimate_cost(
            model=str(run.params.get("model", "")),
            options=run.params.get("options") or {},
            tokens_prompt=progress.tokens_prompt,
            tokens_completion=progress.tokens_completion,
        ),
    )


def judge_run_finish_if_done(*, run_id: int) -> bool:
    """Mark a running run done once nothing is pending; any chunk may be the last, so each checks."""
    judge_run_update_counters(run_id=run_id)
    if LLMRating.objects.filter(run_id=run_id, status=LLMRating.Status.PENDING).exists():
        return False
    return bool(
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.RUNNING).update(
            status=JudgeRun.Status.DONE, finished_at=timezone.now()
        )
    )


def judge_run_fail(*, run_id: int, error: str) -> None:
    """A fatal backend error (bad key, unknown model): stop the run, keep unanswered rows pending."""
    JudgeRun.objects.filter(pk=run_id, status__in=_ACTIVE).update(
        status=JudgeRun.Status.FAILED, error=error[:2000], finished_at=timezone.now()
    )
    judge_run_update_counters(run_id=run_id)


# --- executing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkSummary:
    asked: int
    written: int
    calls: int
    fatal: str = ""


@dataclass(frozen=True)
class RatingState:
    """What the prompt builders read of a rating row: answered or not, and what was tried before."""

    pk: int
    status: str
    raw: str
    attempts: int
    history: list[dict[str, Any]]


def _pending_of(run: JudgeRun, rating_ids: list[int] | None) -> Any:
    """The run's pending ratings among ``rating_ids`` (None: all of them, no long id list to send)."""
    # No ordering: the model's default one joins four tables to sort rows nobody needs sorted.
    rows = run.ratings.filter(status=LLMRating.Status.PENDING).order_by()
    return rows if rating_ids is None else rows.filter(pk__in=rating_ids)


def _conversations(
    run: JudgeRun, config: JudgeConfig, rating_ids: list[int] | None, pending: list[tuple[int, int, int, int | None]]
) -> list[Conversation]:
    """``pending``: (item, question, sample, target rater) of the rows to ask, read by the caller."""
    if not pending:
        return []
    groups = {(item, sample, target) for item, _, sample, target in pending}
    if config.mode == "chat":
        # A chat conversation needs its answered turns too (the history a resumed sample continues).
        rows = run.ratings.filter(item_id__in={group[0] for group in groups}).order_by()
    else:
        # Completion mode needs no history: only the pending rows themselves.
        rows = _pending_of(run, rating_ids)
    # A group is one item and sample (and, for per-rater judges, the rater predicted).
    by_group: dict[tuple[int, int, int], dict[int, RatingState]] = defaultdict(dict)
    # Plain values, not model instances: building 2,500 LLMRating objects (four foreign keys each)
    # cost more CPU than the rest of the chunk's preparation (measured).
    columns = ("item_id", "question_id", "sample", "target_rater_id", "id", "status", "raw", "attempts", "history")
    for item_id, question_id, sample, target, *state in rows.values_list(*columns):
        if (item_id, sample, target) in groups:
            by_group[(item_id, sample, target or 0)][question_id] = RatingState(*state)
    questions: list[Question] = list(run.study.questions.order_by("order", "id"))
    items = Item.objects.in_bulk({group[0] for group in by_group})
    builder = builder_for(config.kind)
    conversations: list[Conversation] = []
    for (item_id, sample, target), ratings in sorted(by_group.items()):
        item = items[item_id]
        conversations += builder.conversations(
            study=run.study, config=config, item=item, questions=questions, sample=sample, ratings=ratings,
            run=run, target_rater_id=target or None,
        )
    return conversations


def _limiter_factory(config: JudgeConfig) -> Callable[[], Limiter]:
    redis_url = settings.REDIS_URL
    if redis_url:
        return lambda: RedisLimiter(
            url=redis_url,
            judge_key=f"judge-{config.judge_id}",
            concurrency=config.concurrency,
            rpm=config.rpm,
            # A lease outlives any call (timeout) so it is never stolen from a live call.
            lease_seconds=float(settings.LLM_TIMEOUT) + 30.0,
        )
    return lambda: LocalLimiter(concurrency=config.concurrency, rpm=config.rpm)


_WRITTEN_FIELDS = (
    "status", "score", "rationale", "raw", "prompt", "prompt_hash", "history", "attempts", "model", "latency_ms",
    "tokens_prompt", "tokens_completion",
)


def _row_values(r: TurnResult) -> list[Any]:
    """One result's values in ``_WRITTEN_FIELDS`` order, as the database takes them (JSON as text)."""
    return [
        r.status, r.score, r.rationale, r.raw, r.prompt, hashlib.sha256(r.prompt.encode("utf-8")).hexdigest(),
        json.dumps(r.history, ensure_ascii=False), r.attempts, r.model, r.latency_ms, r.tokens_prompt,
        r.tokens_completion,
    ]


def _write(results: list[TurnResult]) -> int:
    """Store finished turns; only rows still pending change, so a late duplicate answer is a no-op.

    Every row is guarded by ``status = 'pending'`` in the same statement that writes it, so whichever
    delivery of a chunk answers first wins and a redelivered one's late answer changes nothing, also
    when part of a batch was written before (tests/llmjudge/test_runs.py). On PostgreSQL the batch is
    one ``UPDATE ... FROM unnest(<one array per column>)`` statement: one parse, one plan and one
    round trip for the whole batch instead of one per row, which halved the writer's CPU per rating (client and server,
    tests/bench/bench_judge.py). SQLite gets the same per-row UPDATE as an ``executemany``.
    Values bypass the ORM's per-field conversion (measured: most of the writer's time); the types
    are few and plain (text, numbers, JSON as text, one timestamp per batch).
    """
    if not results:
        return 0
    table = LLMRating._meta
    quote = connection.ops.quote_name
    fields = [table.get_field(name) for name in _WRITTEN_FIELDS]
    updated_at = table.get_field("updated_at")
    now = updated_at.get_db_prep_save(timezone.now(), connection)
    pending = LLMRating.Status.PENDING.value
    status_column = quote(table.get_field("status").column)
    id_column = quote(table.pk.column)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One array per column: the statement's text is the same for every batch, so the
            # driver's parsed-query cache holds (a VALUES list changes with the batch size, and
            # splitting its hundreds of placeholders again per batch cost more than the rows).
            arrays = ", ".join(["%s::bigint[]", *(f"%s::{f.db_type(connection)}[]" for f in fields)])
            names = ", ".join(["id", *(quote(f.column) for f in fields)])
            sql = (
                f"UPDATE {quote(table.db_table)} AS r SET "
                + ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in fields)
                + f", {quote(updated_at.column)} = %s"
                + f" FROM unnest({arrays}) AS v({names})"
                + f" WHERE r.{id_column} = v.id AND r.{status_column} = %s"
            )
            columns = [list(column) for column in zip(*([r.rating_id, *_row_values(r)] for r in results), strict=True)]
            cursor.execute(sql, [now, *columns, pending])
            return max(cursor.rowcount, 0)
        sql = "UPDATE {table} SET {columns}, {updated} = %s WHERE {id} = %s AND {status} = %s".format(
            table=quote(table.db_table),
            columns=", ".join(f"{quote(f.column)} = %s" for f in fields),
            updated=quote(updated_at.column),
            id=id_column,
            status=status_column,
        )
        cursor.executemany(sql, [[*_row_values(r), now, r.rating_id, pending] for r in results])
        return max(cursor.rowcount, 0)


def _call_settings(config: JudgeConfig) -> CallSettings:
    return CallSettings(
        model=config.model,
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
        endpoint=str(config.options.get("endpoint", "chat")),
    )


def _engine_settings() -> EngineSettings:
    return EngineSettings(
        max_attempts=settings.LLM_MAX_ATTEMPTS,
        refusal_retries=settings.LLM_REFUSAL_RETRIES,
        backoff_base=settings.LLM_BACKOFF_BASE,
        backoff_cap=settings.LLM_BACKOFF_CAP,
    )


def _backend_config(config: JudgeConfig) -> BackendConfig:
    return BackendConfig(
        backend=config.backend,
        model=config.model,
        base_url=config.base_url,
        api_key_env=config.api_key_env,
        timeout=float(settings.LLM_TIMEOUT),
        concurrency=config.concurrency,
        options=config.options,
    )


def _execute(
    run: JudgeRun,
    config: JudgeConfig,
    conversations: list[Conversation],
    on_progress: Callable[[], None] | None = None,
    write: Callable[[list[TurnResult]], int] = _write,
) -> tuple[EngineOutcome, int]:
    """Run the engine in a thread; ``write`` stores batches of results here, outside any transaction.

    Every second the run's status is read: once it is no longer running (paused, cancelled, failed),
    the engine starts no new call. Ratings use ``_write``; preparation calls their own writer.
    """
    # The engine appends (deque.append is atomic) and the writer takes whatever is there every
    # _WRITE_WINDOW_SECONDS: no thread wake-up per result (measured: the per-result queue hand-over
    # cost more CPU than the write itself at 300 calls per second).
    results: deque[TurnResult] = deque()
    finished = threading.Event()
    stop = threading.Event()
    box: dict[str, Any] = {}
    call = _call_settings(config)
    engine_settings = _engine_settings()
    backend_config = _backend_config(config)

    def engine() -> None:
        try:
            box["outcome"] = asyncio.run(
                run_conversations(
                    conversations,
                    make_backend=lambda: backend_for(backend_config),
                    make_limiter=_limiter_factory(config),
                    call=call,
                    settings=engine_settings,
                    concurrency=config.concurrency,
                    emit=results.append,
                    stop=stop,
                )
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread below
            box["error"] = exc
        finally:
            finished.set()

    thread = threading.Thread(target=engine, name=f"judge-run-{run.pk}", daemon=True)
    thread.start()
    written = 0
    next_poll = time.monotonic() + _STATUS_POLL_SECONDS
    try:
        while True:
            # Read the flag before draining: whatever the engine emitted before finishing is then drained.
            done = finished.wait(_WRITE_WINDOW_SECONDS)
            # What is there now, in batches; what arrives meanwhile waits for the next window.
            ready = [results.popleft() for _ in range(len(results))]
            for start in range(0, len(ready), _WRITE_BATCH):
                written += write(ready[start : start + _WRITE_BATCH])
            if done:
                break
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + _STATUS_POLL_SECONDS
                status = JudgeRun.objects.filter(pk=run.pk).values_list("status", flat=True).first()
                if status != JudgeRun.Status.RUNNING:
                    stop.set()
                if on_progress is not None:
                    on_progress()
    finally:
        # An exception here (the database went away) must not leave the engine calling forever.
        stop.set()
        thread.join()
    if "error" in box:
        raise box["error"]
    return box["outcome"], written


def run_chunk(
    *, run_id: int, rating_ids: list[int] | None, on_progress: Callable[[], None] | None = None
) -> ChunkSummary:
    """Ask the still-pending ratings among ``rating_ids`` (None: all the run's) and store each answer once."""
    with _old_objects_frozen():
        return _run_chunk(run_id, rating_ids, on_progress)


def _run_chunk(run_id: int, rating_ids: list[int] | None, on_progress: Callable[[], None] | None) -> ChunkSummary:
    run = JudgeRun.objects.select_related("study").filter(pk=run_id).first()
    if run is None or run.status != JudgeRun.Status.RUNNING:
        # Deleted, paused, cancelled or failed: drop the stale work (a resume re-enqueues it).
        return ChunkSummary(asked=0, written=0, calls=0)
    config = JudgeConfig.from_params(run.params)
    pending = list(_pending_of(run, rating_ids).values_list("item_id", "question_id", "sample", "target_rater_id"))
    # Multi-step kinds ask their preliminary calls (characters, roles) first, outside any transaction.
    steps = [(item, question, target) for item, question, _, target in pending]
    fatal = prepare_steps(run=run, config=config, pending=steps, on_progress=on_progress) if pending else ""
    if fatal:
        logger.warning("judge run %s failed: %s", run_id, fatal)
        judge_run_fail(run_id=run_id, error=fatal)
        return ChunkSummary(asked=0, written=0, calls=0, fatal=fatal)
    if pending and not JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.RUNNING).exists():
        # Paused or cancelled while preparing: ask no rating (the resume prepares what is missing).
        judge_run_update_counters(run_id=run_id)
        return ChunkSummary(asked=0, written=0, calls=0)
    conversations = _conversations(run, config, rating_ids, pending)
    asked = sum(1 for c in conversations for t in c.turns if t.answer is None)
    if not conversations:
        judge_run_finish_if_done(run_id=run_id)
        return ChunkSummary(asked=0, written=0, calls=0)
    outcome, written = _execute(run, config, conversations, on_progress)
    if outcome.fatal:
        logger.warning("judge run %s failed: %s", run_id, outcome.fatal)
        judge_run_fail(run_id=run_id, error=outcome.fatal)
    else:
        judge_run_finish_if_done(run_id=run_id)
    return ChunkSummary(asked=asked, written=written, calls=outcome.calls, fatal=outcome.fatal)


def judge_run_execute_inline(*, run: JudgeRun, on_progress: Callable[[], None] | None = None) -> ChunkSummary:
    """Do the whole run in this process (no worker): one engine pass over every pending rating."""
    return run_chunk(run_id=run.pk, rating_ids=None, on_progress=on_progress)
