"""The single-turn conversations the non-plain kinds ask: one per pending rating of an item/sample."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from annotations.models import Question
from llmjudge.engine.conversation import Conversation, RatingState, Turn
from llmjudge.parsing import ParsedScore


def _with_logprobs(parse: Callable[..., ParsedScore]) -> Callable[[str, list[dict[str, Any]] | None], ParsedScore]:
    def parse_logprobs(text: str, logprobs: list[dict[str, Any]] | None) -> ParsedScore:
        return parse(text, logprobs=logprobs)

    return parse_logprobs


def pending_turns(
    ratings: dict[int, RatingState],
    questions: list[Question],
    make: Callable[[Question], tuple[str, Callable]],
    scale: tuple[int, int],
    sample: int,
    seed: int | None,
    *,
    system: str = "",
    with_logprobs: bool = False,
    choices: tuple[str, ...] = (),
) -> list[Conversation]:
    """One single-turn conversation per pending rating. With ``with_logprobs`` the parser ``make``
    returns takes (text, log-probabilities or None) and the backend is asked for them."""
    out = []
    for question in questions:
        rating = ratings.get(question.pk)
        if rating is None or rating.status != "pending":
            continue
        prompt, parse = make(question)
        turn = Turn(
            rating_id=rating.pk,
            prompt=prompt,
            user_text=prompt,
            parse=functools.partial(parse, logprobs=None) if with_logprobs else parse,
            scale=scale,
            prior_attempts=rating.attempts,
            prior_history=list(rating.history or []),
            parse_logprobs=_with_logprobs(parse) if with_logprobs else None,
            choices=choices,
        )
        out.append(Conversation(turns=[turn], chat=False, sample=sample, seed=seed, system=system))
    return out
