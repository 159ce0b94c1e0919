"""Personalized judge (PERSE, seed 000): predict one human rater's score for an item from ``k`` of
that rater's earlier ratings, shown in the prompt as the rater's profile.

Prompt (``llmjudge/prompting/data/perse_v1.json``): PERSE's individual-evaluation structure, in order

    [Instruction] ... discern the reviewer's preferences ...
    Reviewer Preference
    [The Start of Story 0] ... [The End of Story 0]
    [Review] <the rater's comment>          (only when the rater left one)
    [Score] <the rater's score>
    ...
    Story Query
    Please follow the above critic and give a review for the given story. [The Start of Story] ...
    Answer in this format: [Review] ... [Score] (an integer between 1 and 5)

EvalHub adds to the paper's text the question the scores answer, the study's scale and the answer
format line (PERSE is fine-tuned on the format; the zero-shot models it is compared with need it
said). When no profile entry has a comment (e.g. HANNA), the instruction speaks of scores rather
than reviews, PERSE's "without review text" ablation (its table 5).

Splitting (``split_profile``): each rater's rated items are sorted, then shuffled by a generator
seeded with ``f"{seed}:{rater}"``, so a rater's split depends only on the seed and that rater's own
items (adding a rater or an item elsewhere leaves it unchanged). The first ``k`` are the profile,
the rest (optionally at most ``n_held_out``) are held out and judged.

Parsing: the score after the last ``[Score]`` marker; the ``[Review]`` text is the rationale.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from llmjudge.kinds.common.templates import check_scale, fill, parse_after_marker, piece, scale_text
from llmjudge.parsing import ParsedScore

PROMPT_FILE = "perse_v1"
PROMPT_VERSION = "perse_v1"

R = TypeVar("R", bound=Hashable)
I = TypeVar("I", bound=Hashable)  # noqa: E741


@dataclass(frozen=True)
class ProfileEntry:
    """One earlier rating of the rater: what they read, what they wrote (may be ""), their score."""

    item_text: str
    comment: str
    score: float


class ProfileSplit(NamedTuple):
    profile: dict  # rater -> list of item keys shown as the profile (k of them)
    held_out: dict  # rater -> list of item keys to predict


def split_profile(
    ratings_by_rater: Mapping[R, Iterable[I]] | Mapping[R, Mapping[I, object]],
    *,
    k: int,
    seed: int,
    n_held_out: int | None = None,
) -> ProfileSplit:
    """Split every rater's rated items into a profile of ``k`` and the held-out rest.

    ``ratings_by_rater`` maps a rater to their rated items (a collection of item keys, or a mapping
    item -> score; only the keys are used). Raises ValueError naming every rater with fewer than
    ``k + 1`` ratings, since such a rater leaves nothing to predict.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"profile size k must be a positive integer, got {k!r}")
    if n_held_out is not None and (isinstance(n_held_out, bool) or not isinstance(n_held_out, int) or n_held_out < 1):
        raise ValueError(f"n_held_out must be a positive integer or None, got {n_held_out!r}")
    too_few = []
    items_of: dict = {}
    for rater, items in ratings_by_rater.items():
        keys = sorted(set(items), key=lambda key: (type(key).__name__, str(key)))
        if len(keys) < k + 1:
            too_few.append(f"{rater} has {len(keys)}")
        items_of[rater] = keys
    if too_few:
        raise ValueError(
            f"profile size k={k} needs at least {k + 1} ratings per rater (k for the profile, 1 to predict); "
            + "; ".join(too_few)
        )
    profile: dict = {}
    held_out: dict = {}
    for rater, keys in items_of.items():
        rng = random.Random(f"{seed}:{rater}")
        order = list(keys)
        rng.shuffle(order)
        profile[rater] = order[:k]
        rest = order[k:]
        held_out[rater] = rest if n_held_out is None else rest[:n_held_out]
    return ProfileSplit(profile, held_out)


def _fmt(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else str(score)


def personalized_prompt(
    *,
    profile: Sequence[ProfileEntry],
    item_text: str,
    question: str,
    scale: tuple[int, int],
    noun: str = "story",
    noun_plural: str = "stories",
) -> str:
    """PERSE's individual-evaluation prompt for one held-out item (see the module docstring)."""
    if not profile:
        raise ValueError("a personalized prompt needs at least one profile entry")
    scale = check_scale(scale)
    Noun = noun[:1].upper() + noun[1:]
    with_reviews = any(entry.comment.strip() for entry in profile)
    words = {"noun": noun, "noun_plural": noun_plural, "question": question, "scale_text": scale_text(scale)}
    parts = [fill(piece(PROMPT_FILE, "instruction_reviews" if with_reviews else "instruction_scores"), **words)]
    parts.append(piece(PROMPT_FILE, "profile_header"))
    for index, entry in enumerate(profile):
        lines = [fill(piece(PROMPT_FILE, "entry_start"), Noun=Noun, index=index, item_text=entry.item_text)]
        if entry.comment.strip():
            lines.append(fill(piece(PROMPT_FILE, "entry_review"), comment=entry.comment.strip()))
        lines.append(fill(piece(PROMPT_FILE, "entry_score"), score=_fmt(entry.score)))
        parts.append("\n".join(lines))
    parts.append(fill(piece(PROMPT_FILE, "query_header"), Noun=Noun))
    parts.append(fill(piece(PROMPT_FILE, "query"), Noun=Noun, noun=noun, item_text=item_text))
    parts.append(fill(piece(PROMPT_FILE, "answer_format"), scale_text=scale_text(scale)))
    return "\n\n".join(parts)


_SCORE_MARK = re.compile(r"\[\s*score\s*\]\s*:?", re.IGNORECASE)
_REVIEW_PREFIX = re.compile(r"^\s*\[\s*review\s*\]\s*:?\s*", re.IGNORECASE)


def parse_personalized(text: str, *, scale: tuple[int, int]) -> ParsedScore:
    """``[Review] ... [Score] n``: the score after the last ``[Score]``, the review as the rationale."""
    return parse_after_marker(text, _SCORE_MARK, scale=check_scale(scale), rationale_prefix=_REVIEW_PREFIX)
