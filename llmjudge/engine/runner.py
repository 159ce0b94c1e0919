"""Asking many conversations concurrently: asyncio, one event loop per chunk, no Django.

Why this shape, measured (tests/bench/bench_judge.py, docs/judges.md): the orchestration (backoff
timers, the shared limiter, refusal re-asks, chat turns) is asyncio, so thousands of waiting turns
cost nothing; the HTTP calls themselves run in the backend's thread pool with the SDK's sync client,
which on this SDK version needs less CPU per call than its async client and kept 64 calls in
flight at 0.75-0.88 of the ideal wall time where the async client reached 0.3-0.6 (same runs, a
shared machine). The caller runs ``run_conversations`` in a background thread and writes the
``TurnResult``s (``emit`` must be cheap and thread-safe: a deque's append) from its own thread,
because the ORM is synchronous and the network must never wait on the database (nor the database
on the network).

Per turn: transient errors are retried with capped exponential backoff and full jitter (honouring
Retry-After), up to ``max_attempts`` calls; a refusal is re-asked up to ``refusal_retries`` times;
every attempt, answer or error, goes into the turn's history. Unparseable answers are never
re-asked (that would be silent re-sampling until a number comes out).
"""
from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from llmjudge.backends.protocol import Backend, BackendError, BackendRequest
from llmjudge.engine.conversation import Conversation, Turn
from llmjudge.engine.limits import Limiter


@dataclass(frozen=True)
class EngineSettings:
    max_attempts: int = 6  # calls per turn that may fail transiently before the turn ends in error
    refusal_retries: int = 2
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    retry_after_cap: float = 60.0


@dataclass(frozen=True)
class CallSettings:
    model: str
    temperature: float
    top_p: float
    max_tokens: int
    endpoint: str = "chat"


@dataclass
class TurnResult:
    rating_id: int
    status: str  # ok | unparseable | refused | error
    score: float | None
    rationale: str
    raw: str
    prompt: str
    history: list[dict[str, Any]]
    attempts: int
    model: str
    latency_ms: int | None = None
    tokens_prompt: int | None = None
    tokens_completion: int | None = None
    calls: int = 0  # calls made in this execution (attempts counts earlier ones too)


@dataclass
class EngineOutcome:
    fatal: str = ""  # set when a fatal backend error stopped the whole execution
    calls: int = 0
    stats: dict[str, int] = field(default_factory=dict)


class _Fatal(Exception):
    pass


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def backoff_delay(attempt: int, settings: EngineSettings, retry_after: float | None) -> float:
    """Full jitter (AWS architecture blog): uniform in [0, min(cap, base * 2**(attempt-1))].

    A server's Retry-After is a floor: retrying earlier would only earn another 429.
    """
    delay = random.uniform(0, min(settings.backoff_cap, settings.backoff_base * 2 ** (attempt - 1)))
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.retry_after_cap))
    return delay


def _stored_prompt(messages: list[dict[str, str]]) -> str:
    # One message is stored as its text; a conversation as its exact JSON messages.
    if len(messages) == 1:
        return messages[0]["content"]
    return json.dumps(messages, ensure_ascii=False)


async def _sleep_unless_stopped(seconds: float, stop: threading.Event) -> bool:
    """Sleep; return False early when asked to stop (a pause must not wait out a 30 s backoff)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if stop.is_set():
            return False
        await asyncio.sleep(min(left, 0.2))
    return not stop.is_set()


async def _ask(
    turn: Turn,
    messages: list[dict[str, str]],
    conversation: Conversation,
    *,
    backend: Backend,
    limiter: Limiter,
    call: CallSettings,
    settings: EngineSettings,
    stop: threading.Event,
) -> TurnResult | None:
    """All attempts of one turn; None when stopped before an answer (the row stays pending)."""
    history = list(turn.prior_history)
    attempts = turn.prior_attempts
    transient_failures = 0
    refusals = 0
    tokens_p = tokens_c = 0
    calls = 0
    prompt = _stored_prompt(messages)
    while True:
        if stop.is_set():
            return None
        request = BackendRequest(
            model=call.model,
            messages=messages,
            temperature=call.temperature,
            top_p=call.top_p,
            max_tokens=call.max_tokens,
            seed=conversation.seed,
            endpoint=call.endpoint,
            scale=turn.scale,
            sample=conversation.sample,
            attempt=attempts + 1,
            logprobs=turn.parse_logprobs is not None,
            choices=turn.choices,
        )
        try:
            async with limiter.slot():
                # Waiting for a slot can take long: a pause or a fatal error may have come meanwhile.
                if stop.is_set():
                    return None
                attempts += 1
                calls += 1
                answer = await backend.complete(request)
        except BackendError as exc:
            if exc.fatal:
                # Stop the other conversations now, before they take the slot this one frees.
                stop.set()
                raise _Fatal(str(exc)) from exc
            history.append({"attempt": attempts, "at": _now(), "error": str(exc), "transient": exc.transient})
            transient_failures += 1
            if exc.transient and transient_failures < settings.max_attempts:
                if not await _sleep_unless_stopped(backoff_delay(transient_failures, settings, exc.retry_after), stop):
                    # Stopped during backoff: keep what was tried, the row stays pending for a resume.
                    return None
                continue
            return TurnResult(
                rating_id=turn.rating_id, status="error", score=None, rationale=str(exc), raw="", prompt=prompt,
                history=history, attempts=attempts, model=call.model, calls=calls,
                tokens_prompt=tokens_p or None, tokens_completion=tokens_c or None,
            )
        tokens_p += answer.tokens_prompt or 0
        tokens_c += answer.tokens_completion or 0
        if turn.parse_logprobs is not None:
            parsed = turn.parse_logprobs(answer.text, answer.logprobs)
        else:
            parsed = turn.parse(answer.text)
        entry = {
            "attempt": attempts,
            "at": _now(),
            "raw": answer.text,
            "status": parsed.status,
            "latency_ms": answer.latency_ms,
            "finish_reason": answer.finish_reason,
        }
        if parsed.details is not None:
            entry["details"] = parsed.details
        history.append(entry)
        if parsed.status == "refused" and refusals < settings.refusal_retries:
            refusals += 1
            continue
        return TurnResult(
            rating_id=turn.rating_id,
            status=parsed.status,
            score=parsed.score,
            rationale=parsed.rationale,
            raw=answer.text,
            prompt=prompt,
            history=history,
            attempts=attempts,
            model=answer.model or call.model,
            latency_ms=answer.latency_ms,
            tokens_prompt=tokens_p,
            tokens_completion=tokens_c,
            calls=calls,
        )


async def _conversation(
    conversation: Conversation,
    *,
    emit: Callable[[TurnResult], None],
    **kwargs: Any,
) -> int:
    messages: list[dict[str, str]] = []
    calls = 0
    system = [{"role": "system", "content": conversation.system}] if conversation.system else []
    for turn in conversation.turns:
        user = {"role": "user", "content": turn.user_text}
        if turn.answer is not None:
            messages += [user, {"role": "assistant", "content": turn.answer}]
            continue
        asked = system + (messages + [user] if conversation.chat else [user])
        result = await _ask(turn, asked, conversation, **kwargs)
        if result is None:
            return calls
        calls += result.calls
        emit(result)
        if conversation.chat and result.status != "error":
            messages = asked[len(system):] + [{"role": "assistant", "content": result.raw}]
    return calls


async def run_conversations(
    conversations: list[Conversation],
    *,
    make_backend: Callable[[], Backend],
    make_limiter: Callable[[], Limiter],
    call: CallSettings,
    settings: EngineSettings,
    concurrency: int,
    emit: Callable[[TurnResult], None],
    stop: threading.Event,
) -> EngineOutcome:
    """Ask every conversation, at most ``concurrency`` calls at once (the limiter's own bound).

    Conversations are started through a local semaphore of twice the concurrency: enough to keep
    every call slot busy while others sleep in backoff, without thousands of coroutines polling a
    shared Redis limiter.
    """
    outcome = EngineOutcome()
    try:
        backend = make_backend()
    except BackendError as exc:
        if exc.fatal or not exc.transient:
            outcome.fatal = str(exc)
            return outcome
        raise
    limiter = make_limiter()
    gate = asyncio.Semaphore(max(1, concurrency) * 2)

    async def one(conversation: Conversation) -> int:
        async with gate:
            if stop.is_set():
                return 0
            return await _conversation(
                conversation, emit=emit, backend=backend, limiter=limiter, call=call, settings=settings, stop=stop
            )

    tasks = [asyncio.create_task(one(c)) for c in conversations if any(t.answer is None for t in c.turns)]
    try:
        for finished in asyncio.as_completed(tasks):
            try:
                outcome.calls += await finished
            except _Fatal as exc:
                outcome.fatal = str(exc)
                stop.set()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await backend.aclose()
        await limiter.aclose()
    return outcome
