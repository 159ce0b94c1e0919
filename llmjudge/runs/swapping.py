"""The position-bias probe of a pairwise run (issue 19): a share of the items asked again with A and B swapped.

A run's ``swap_share`` picks that share of the study's items (seeded by the run's seed, so a rerun
picks the same ones) and plans one more sample of each of their questions, with the sample index
``config.samples`` (the first after the judge's own): the unique key (run, item, question, sample)
stays as it is, and the rows are marked ``LLMRating.swapped``. The prompt of a swapped sample shows
response B's text under the A field and A's under the B field; the answer is parsed as usual and
its choice mapped back to the original orientation before it is stored (A <-> B, a tie stays a tie),
so a stored swapped score says which *response* the judge preferred, like every other score, and a
judge that always answers "A" flips on every swapped item.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from annotations.models import PAIRWISE_SCORES, Item, Study
from annotations.rendering import oriented_item
from llmjudge.parsing import ParsedScore
from llmjudge.runs.config import JudgeConfig

Row = tuple[int, int, int, int | None]

# Scores of the swapped orientation -> the original one: A and B trade places, a tie is a tie.
_MAPPED = {float(PAIRWISE_SCORES["A"]): float(PAIRWISE_SCORES["B"]),
           float(PAIRWISE_SCORES["B"]): float(PAIRWISE_SCORES["A"])}


class SwapError(ValueError):
    """A swap share that cannot be used; the message says why."""


def check_swap_share(*, study: Study, config: JudgeConfig) -> None:
    share = config.swap_share
    if not share:
        return
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise SwapError(f"the swap share must be between 0 and 1, got {share!r}")
    if not study.is_pairwise:
        raise SwapError(f"study {study.slug!r} is not pairwise: only a pairwise study's A and B can be swapped")
    if config.kind != "plain":
        raise SwapError(f"only a plain judge asks swapped pairs, not a {config.kind} judge")


def swapped_items(*, config: JudgeConfig, items: list[int]) -> list[int]:
    """The items asked swapped: round(share x n), at least one when the share is positive, seeded."""
    if not config.swap_share or not items:
        return []
    k = min(len(items), max(1, round(config.swap_share * len(items))))
    return sorted(random.Random(config.seed or 0).sample(sorted(items), k))


def swap_rows(*, config: JudgeConfig, items: list[int], questions: list[int]) -> list[Row]:
    """One swapped sample (index ``config.samples``) per question of each chosen item."""
    return [(i, q, config.samples, None) for i in swapped_items(config=config, items=items) for q in questions]


def is_swapped(config: JudgeConfig, sample: int) -> bool:
    return bool(config.swap_share) and sample >= config.samples


def swapped_item(study: Study, item: Item) -> Item:
    """A copy of ``item`` (never saved) whose two candidate fields trade their texts: the same copy a rater
    shown the pair swapped reads (annotations.rendering.oriented_item)."""
    return oriented_item(study=study, item=item, swapped=True)


def map_choice_back(parsed: ParsedScore) -> ParsedScore:
    """A choice read from a swapped prompt, in the original orientation (A <-> B; a tie or no choice unchanged)."""
    if parsed.score is None or parsed.score not in _MAPPED:
        return parsed
    return dataclasses.replace(parsed, score=_MAPPED[parsed.score])


def mapped_back(parse: Callable[[str], ParsedScore]) -> Callable[[str], ParsedScore]:
    """``parse`` whose A/B choice is turned back to the original orientation."""
    return lambda text: map_choice_back(parse(text))
