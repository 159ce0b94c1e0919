"""Executing a judge run's chunk exactly once, and the counters and finish that follow every chunk.

A chunk asks only rows that are still pending when it starts (rule 2 of llmjudge/runs/lifecycle.py):
the kind's preparation steps first (characters, roles), then the kind's conversations, through the
engine (llmjudge/runs/execution.py); every answer is written guarded by ``status = 'pending'``.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.db import InterfaceError, OperationalError
from django.db.models import QuerySet
from django.utils import timezone

from annotations.guards.placeholders import TemplateError
from annotations.models import Item, Question
from annotations.rendering import PromptTooLarge
from llmjudge.engine.conversation import Conversation, RatingState
from llmjudge.engine.runner import storable
from llmjudge.kinds import kind_for, prepare_steps
from llmjudge.models import JudgeRun, LLMRating
from llmjudge.runs.config import JudgeConfig
from llmjudge.runs.execution import execute_conversations, old_objects_frozen
from llmjudge.runs.pricing import estimate_cost

logger = logging.getLogger(__name__)

ACTIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)


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
    JudgeRun.objects.filter(pk=run_id, status__in=ACTIVE).update(
        status=JudgeRun.Status.FAILED, error=storable(error)[0][:2000], finished_at=timezone.now()
    )
    judge_run_update_counters(run_id=run_id)


@dataclass(frozen=True)
class ChunkSummary:
    asked: int
    written: int
    calls: int
    fatal: str = ""



def _pending_of(run: JudgeRun, rating_ids: list[int] | None) -> QuerySet[LLMRating]:
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
    builder = kind_for(config.kind).builder
    conversations: list[Conversation] = []
    for (item_id, sample, target), ratings in sorted(by_group.items()):
        item = items[item_id]
        conversations += builder.conversations(
            study=run.study, config=config, item=item, questions=questions, sample=sample, ratings=ratings,
            run=run, target_rater_id=target or None,
        )
    return conversations



# What may come back by itself (the database or Redis restarting): the chunk is run again
# (llmjudge/tasks.py), not failed.
INFRA_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError, InterfaceError, redis.ConnectionError, redis.TimeoutError,
)


def run_chunk(
    *, run_id: int, rating_ids: list[int] | None, on_progress: Callable[[], None] | None = None
) -> ChunkSummary:
    """Ask the still-pending ratings among ``rating_ids`` (None: all the run's) and store each answer once.

    Anything unexpected (a bug, an answer nothing foresaw) fails the run visibly, its reason on the run
    page: a run never stays "running" with no worker on it. What was stored stays; a resume asks the rest.
    """
    try:
        with old_objects_frozen():
            return _run_chunk(run_id, rating_ids, on_progress)
    except INFRA_ERRORS:
        raise
    except (PromptTooLarge, TemplateError) as exc:
        # What the judge would send is refused (above MAX_PROMPT_CHARS, or a template that is not plain): stop,
        # store no prompt, say why.
        logger.warning("judge run %s failed: %s", run_id, exc)
        judge_run_fail(run_id=run_id, error=str(exc))
        return ChunkSummary(asked=0, written=0, calls=0, fatal=str(exc))
    except Exception as exc:  # noqa: BLE001 - reported on the run, not lost in a worker's log
        logger.exception("judge run %s: the chunk failed", run_id)
        error = f"a chunk failed: {type(exc).__name__}: {exc}"[:500]
        judge_run_fail(run_id=run_id, error=error)
        return ChunkSummary(asked=0, written=0, calls=0, fatal=error)


def _run_chunk(run_id: int, rating_ids: list[int] | None, on_progress: Callable[[], None] | None) -> ChunkSummary:
    run = JudgeRun.objects.select_related("study").filter(pk=run_id).first()
    if run is None or run.status != JudgeRun.Status.RUNNING:
        # Deleted, paused, cancelled or failed: drop the stale work (a resume re-enqueues it).
        return ChunkSummary(asked=0, written=0, calls=0)
    config = JudgeConfig.from_params(run.params)
    # target_rater_id is None for a kind that predicts no rater (the plugin types the nullable key as int).
    pending: list[tuple[int, int, int, int | None]] = list(
        _pending_of(run, rating_ids).values_list("item_id", "question_id", "sample", "target_rater_id"))
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
    try:
        conversations = _conversations(run, config, rating_ids, pending)
    except PromptTooLarge as exc:
        # An item imported before the cap, or a judge's variant text on top: stop, store no prompt.
        logger.warning("judge run %s failed: %s", run_id, exc)
        judge_run_fail(run_id=run_id, error=str(exc))
        return ChunkSummary(asked=0, written=0, calls=0, fatal=str(exc))
    asked = sum(1 for c in conversations for t in c.turns if t.answer is None)
    if not conversations:
        judge_run_finish_if_done(run_id=run_id)
        return ChunkSummary(asked=0, written=0, calls=0)
    outcome, written = execute_conversations(run, config, conversations, on_progress)
    if outcome.fatal:
        logger.warning("judge run %s failed: %s", run_id, outcome.fatal)
        judge_run_fail(run_id=run_id, error=outcome.fatal)
    else:
        judge_run_finish_if_done(run_id=run_id)
    return ChunkSummary(asked=asked, written=written, calls=outcome.calls, fatal=outcome.fatal)
