"""What a judge is asked, as plain values: turns, conversations and the builder protocol.

The engine (llmjudge/engine/runner.py) asks ``Conversation``s and knows nothing of Django; every judge
kind's builder (llmjudge/kinds/<kind>/builder.py) turns a study's item into them. This module
imports no Django at run time (the study types are for the type checker only), so the engine and
the kinds' pure code stay importable and testable without a database.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from llmjudge.parsing import ParsedScore

if TYPE_CHECKING:
    from annotations.models import Item, Question, Study
    from llmjudge.runs.config import JudgeConfig


@dataclass(frozen=True)
class Turn:
    """One question of one sample: one rating row, one or more calls (refusals are re-asked)."""

    rating_id: int
    prompt: str  # the full judge prompt for this question, from llm_prompt
    user_text: str  # the user message of this turn (the whole prompt, or in chat mode what is new)
    parse: Callable[[str], ParsedScore]
    scale: tuple[int, int]
    answer: str | None = None  # set when the turn was answered earlier (chat history on resume)
    prior_attempts: int = 0
    prior_history: list[dict[str, Any]] = field(default_factory=list)
    # Set by judges that weigh an answer by its tokens' log-probabilities (DRPE panels): the backend
    # is asked for them, and this parser gets them with the text (None when the backend has none).
    parse_logprobs: Callable[[str, list[dict[str, Any]] | None], ParsedScore] | None = None
    # A pairwise study's choices or a categorical study's labels; only the offline fake backend reads them.
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conversation:
    """Turns asked in order; in chat mode each answer joins the conversation before the next turn."""

    turns: list[Turn]
    chat: bool
    sample: int
    seed: int | None
    system: str = ""  # a system message sent before the turns (chat endpoint only), e.g. Prometheus'


@dataclass(frozen=True)
class RatingState:
    """What the prompt builders read of a rating row: answered or not, and what was tried before."""

    pk: int
    status: str
    raw: str
    attempts: int
    history: list[dict[str, Any]]


class RunView(Protocol):
    """What builders read of a run: a JudgeRun, or the preview's run not yet started (no pk: no stored calls)."""

    @property
    def pk(self) -> int | None: ...

    @property
    def study(self) -> Study: ...

    @property
    def params(self) -> dict[str, Any]: ...  # JudgeRun.params, JSON


class PromptBuilder(Protocol):
    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, RatingState],
        run: RunView | None = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        """``ratings`` maps question id to the state of this item/sample's rating rows in the chunk
        (of the ``target_rater_id`` for per-rater kinds); ``run`` gives access to its params and steps.
        A preview passes ratings that are all pending and no run when the kind needs none."""
        ...
