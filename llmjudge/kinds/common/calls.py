"""Steps that are not ratings (persona proposals and verifications, a panel's roles): one
``JudgeCall`` row per (run, step, key), unique, asked only while it has no stored answer, so a rerun
fills only what is missing.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from llmjudge.engine.conversation import Conversation, Turn
from llmjudge.models import JudgeCall, JudgeRun
from llmjudge.parsing import ParsedScore
from llmjudge.runs.config import JudgeConfig
from llmjudge.runs.execution import execute_conversations

if TYPE_CHECKING:
    from llmjudge.engine.runner import TurnResult

Progress = Callable[[], None] | None
# An answer -> what JudgeCall.parsed stores (JSON), with the call's "status" when it is not "ok".
CallParser = Callable[[str], dict[str, Any]]
Ask = tuple[JudgeCall, str, CallParser]  # the pending call, its prompt, its parser


def run_is_running(run: JudgeRun) -> bool:
    return JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).exists()


def execute_calls(
    run: JudgeRun, config: JudgeConfig, asks: Sequence[Ask], on_progress: Progress = None
) -> str:
    """Ask each (JudgeCall, prompt, parser) through the engine; store answers on rows still pending.

    Returns the fatal error, if any. Runs like a chunk of ratings (``execution.execute_conversations``): answers are
    written as they come with ``UPDATE ... WHERE status='pending'``, so two chunks preparing the same
    step store one answer, and a pause or cancel stops new calls within a second, leaving the
    unanswered rows pending for the resume. Nothing is asked once the run is no longer running.
    """
    if not asks or not run_is_running(run):
        return ""
    by_id = {call.pk: (call, prompt, parser) for call, prompt, parser in asks}

    def status_only(parser: CallParser) -> Callable[[str], ParsedScore]:
        def parse(text: str) -> ParsedScore:
            parsed = parser(text)
            return ParsedScore(None, parsed.get("status", "ok"), "")

        return parse

    conversations = [
        Conversation(
            turns=[
                Turn(
                    rating_id=call.pk,
                    prompt=prompt,
                    user_text=prompt,
                    parse=status_only(parser),
                    scale=(1, 5),
                    prior_attempts=call.attempts,
                    prior_history=list(call.history or []),
                )
            ],
            chat=False,
            sample=0,
            seed=config.seed,
        )
        for call, prompt, parser in asks
    ]

    def store(results: list[TurnResult]) -> int:
        now = timezone.now()
        written = 0
        for r in results:
            _, _, parser = by_id[r.rating_id]
            parsed = parser(r.raw) if r.status != "error" else {"status": "error", "error": r.rationale}
            written += JudgeCall.objects.filter(pk=r.rating_id, status=JudgeCall.Status.PENDING).update(
                status=parsed.get("status", r.status) if r.status != "error" else "error",
                raw=r.raw,
                prompt=r.prompt,
                prompt_hash=hashlib.sha256(r.prompt.encode("utf-8")).hexdigest(),
                parsed=parsed,
                history=r.history,
                attempts=r.attempts,
                model=r.model,
                latency_ms=r.latency_ms,
                tokens_prompt=r.tokens_prompt,
                tokens_completion=r.tokens_completion,
                updated_at=now,
            )
        return written

    outcome, _ = execute_conversations(run, config, conversations, on_progress, write=store)
    return outcome.fatal


def steps_create(*, run: JudgeRun, steps: Iterable[tuple[str, str]]) -> None:
    """Pending JudgeCall rows for ``steps``; existing ones are kept (unique per run, step and key)."""
    version = run.params.get("kind_version", "1")
    JudgeCall.objects.bulk_create(
        [JudgeCall(run=run, step=step, key=key, template_version=version) for step, key in dict.fromkeys(steps)],
        ignore_conflicts=True,
    )


def calls_for(run: JudgeRun, step: str, keys: Iterable[str]) -> dict[str, JudgeCall]:
    """The run's JudgeCall rows of ``step`` for ``keys``, created pending when missing."""
    keys = list(dict.fromkeys(keys))
    steps_create(run=run, steps=((step, key) for key in keys))
    return {c.key: c for c in JudgeCall.objects.filter(run=run, step=step, key__in=keys)}


def reset_errors(calls: list[JudgeCall]) -> None:
    JudgeCall.objects.filter(pk__in=[c.pk for c in calls], status=JudgeCall.Status.ERROR).update(status="pending")
