"""Running the engine for a run's conversations: the engine in a background thread, the answers
written from this thread every 0.1 s, the run's status read every second so that a pause or cancel
stops new calls. Ratings and the kinds' preparation calls (llmjudge/kinds/common/calls.py) both go
through ``execute_conversations``; they differ only in how a batch of answers is written.

No network call happens inside a transaction: the engine's calls run in its own thread, and each
batch of answers is one short statement.
"""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypedDict

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, InterfaceError, OperationalError

from annotations.rendering import prompt_capped
from llmjudge.backends.endpoint_rules import KeyHolder
from llmjudge.backends.registry import BackendConfig, backend_for
from llmjudge.engine.conversation import Conversation
from llmjudge.engine.limits import Limiter, LocalLimiter, RedisLimiter
from llmjudge.engine.runner import CallSettings, EngineOutcome, EngineSettings, TurnResult, run_conversations
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs.config import JudgeConfig
from llmjudge.runs.rating_sql import write_results

logger = logging.getLogger(__name__)
_INFRA_ERRORS = (OperationalError, InterfaceError)

# How often a running chunk looks at its run's status (pause and cancel take effect within this).
_STATUS_POLL_SECONDS = 1.0
_WRITE_BATCH = 200
_WRITE_WINDOW_SECONDS = 0.1


@contextmanager
def old_objects_frozen() -> Iterator[None]:
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



def _call_settings(config: JudgeConfig) -> CallSettings:
    return CallSettings(
        model=config.model,
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
        endpoint=str(config.options.get("endpoint", "chat")),
    )


def _engine_settings(run: JudgeRun) -> EngineSettings:
    return EngineSettings(
        max_attempts=settings.LLM_MAX_ATTEMPTS,
        refusal_retries=settings.LLM_REFUSAL_RETRIES,
        backoff_base=settings.LLM_BACKOFF_BASE,
        backoff_cap=settings.LLM_BACKOFF_CAP,
        call_timeout=float(settings.LLM_TIMEOUT),
        parse_max_chars=settings.LLM_PARSE_MAX_CHARS,
        run_id=run.pk,
    )


def _backend_config(config: JudgeConfig) -> BackendConfig:
    # The key is the judge owner's to spend, whoever runs it (a shared judge): their grants are checked again.
    owner = Judge.objects.filter(pk=config.judge_id).values_list("owner", flat=True).first()
    holder = KeyHolder.of(get_user_model().objects.filter(pk=owner).first() if owner else None)
    return BackendConfig(
        backend=config.backend,
        model=config.model,
        base_url=config.base_url,
        api_key_env=config.api_key_env,
        timeout=float(settings.LLM_TIMEOUT),
        concurrency=config.concurrency,
        options=config.options,
        answer_max_bytes=settings.LLM_ANSWER_MAX_BYTES,
        key_holder=holder,
    )


def _unstorable(result: TurnResult, exc: BaseException) -> TurnResult:
    """What is stored for an answer the database refused: an error naming why, its history reduced to that
    (the refused value may be anywhere in it), so the row is answered and a resume does not pay for it again."""
    message = f"could not store the answer: {type(exc).__name__}"
    return dataclasses.replace(
        result, status="error", score=None, rationale=message, raw="", reason="storage error", reasoning="",
        history=[{"attempt": result.attempts, "error": message, "transient": False}],
    )


def write_batch(write: Callable[[list[TurnResult]], int], batch: list[TurnResult], *, run_id: int) -> int:
    """One statement for the batch; when the database refuses it, row by row, so one bad row cannot lose the
    others (issue 23: one answer in six with a NUL lost all twelve). A row refused alone is stored as an error.

    A lost connection is not a bad row: it is raised, for the chunk's retry (llmjudge/tasks.py).
    """
    try:
        return write(batch)
    except _INFRA_ERRORS:
        raise
    except (DatabaseError, ValueError, TypeError) as exc:
        logger.warning("run %s: a batch of %d answers could not be stored (%s: %s); storing them one by one",
                       run_id, len(batch), type(exc).__name__, str(exc)[:200])
    written = 0
    for result in batch:
        try:
            written += write([result])
        except _INFRA_ERRORS:
            raise
        except (DatabaseError, ValueError, TypeError) as exc:
            logger.warning("run %s rating %s: the answer could not be stored (%s: %s); stored as an error",
                           run_id, result.rating_id, type(exc).__name__, str(exc)[:200])
            written += write([_unstorable(result, exc)])
    return written


def check_prompt_sizes(conversations: list[Conversation]) -> None:
    """MAX_PROMPT_CHARS on what each kind built around the study's prompt (a rubric, a persona's examples, a
    panel's roles), before anything is sent or stored: PromptTooLarge names the row."""
    for conversation in conversations:
        if conversation.system:
            prompt_capped(conversation.system, what="the judge's system prompt")
        for turn in conversation.turns:
            if turn.answer is None:
                for text in (turn.prompt, turn.user_text):
                    prompt_capped(text, what=f"the prompt of row {turn.rating_id}")


class _Box(TypedDict, total=False):
    """What the engine's thread hands back: its outcome, or what it raised."""

    outcome: EngineOutcome
    error: BaseException


def execute_conversations(
    run: JudgeRun,
    config: JudgeConfig,
    conversations: list[Conversation],
    on_progress: Callable[[], None] | None = None,
    write: Callable[[list[TurnResult]], int] = write_results,
) -> tuple[EngineOutcome, int]:
    """Run the engine in a thread; ``write`` stores batches of results here, outside any transaction.

    Every second the run's status is read: once it is no longer running (paused, cancelled, failed),
    the engine starts no new call. Ratings use ``rating_sql.write_results``; preparation calls their own writer.
    """
    check_prompt_sizes(conversations)
    # The engine appends (deque.append is atomic) and the writer takes whatever is there every
    # _WRITE_WINDOW_SECONDS: no thread wake-up per result (measured: the per-result queue hand-over
    # cost more CPU than the write itself at 300 calls per second).
    results: deque[TurnResult] = deque()
    finished = threading.Event()
    stop = threading.Event()
    box: _Box = {}
    call = _call_settings(config)
    engine_settings = _engine_settings(run)
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
                written += write_batch(write, ready[start : start + _WRITE_BATCH], run_id=run.pk)
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
