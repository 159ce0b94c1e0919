"""Persona judge (CINEMETRIC, seed 002): movie characters matched to one human rater role-play that
rater on held-out items; the prediction is their majority vote.

Steps for each rater (prompts in ``llmjudge/prompting/data/cinemetric_v1.json``, appendix B):

1. ``character_proposal_prompt``: the rater's demographics and training ratings (B.1.1), or the
   demographics alone for the "without training examples" ablation (B.1.2); ``parse_characters``.
2. ``verification_prompt`` per character (B.1.3); ``parse_verification`` -> True / False / None.
   ``select_characters`` keeps the first three confirmed ones; a character the model could not
   confirm (None) is discarded like an invalid one. Fewer than three: the pipeline asks again.
3. ``roleplay_prompt`` per character and held-out item (B.2.1; B.2.2 without a selection rationale;
   B.2.3 without the character's name); ``parse_answer`` reads ``Answer: n``.
4. The prediction is the majority vote of the three characters' scores (``evalhub.stats.majority_vote``, in
   the per-rater analysis).

The paper's methods (tables 1-2) are ``METHODS``: ``cinemetric``, ``no_training_examples``,
``no_character_names``, ``personalized_judge`` (demographics only, B.2.4, whose text the paper
leaves empty, reconstructed from B.2.3) and ``plain`` (B.2.5).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmjudge.kinds.common.templates import check_scale, fill, parse_after_marker, piece, scale_text
from llmjudge.parsing import ParsedScore

PROMPT_FILE = "cinemetric_v1"
PROMPT_VERSION = "cinemetric_v1"
CHARACTERS_PROPOSED = 5  # the paper asks for five and keeps the first three verified
CHARACTERS_USED = 3


@dataclass(frozen=True)
class Character:
    name: str
    source: str  # the movie title
    why: str  # the selection rationale ("" when the prompt asked for none)


@dataclass(frozen=True)
class TrainingExample:
    """One of the rater's training ratings shown when proposing characters."""

    item_text: str
    score: float


@dataclass(frozen=True)
class MethodSpec:
    """What one of the paper's methods does; the pipeline follows it step by step."""

    characters: bool  # propose, verify and role-play characters
    training_examples: bool  # the proposal prompt shows the rater's training ratings
    with_name: bool  # the role-play prompt names the character (False: B.2.3, the rater simulated)
    with_reasoning: bool  # the role-play prompt includes the character's selection rationale
    demographics: bool  # the rater's demographics are used


METHODS: dict[str, MethodSpec] = {
    "cinemetric": MethodSpec(
        characters=True, training_examples=True, with_name=True, with_reasoning=True, demographics=True
    ),
    # B.1.2 asks for no reasoning, so there is no rationale to role-play with: B.2.2.
    "no_training_examples": MethodSpec(
        characters=True, training_examples=False, with_name=True, with_reasoning=False, demographics=True
    ),
    "no_character_names": MethodSpec(
        characters=True, training_examples=True, with_name=False, with_reasoning=True, demographics=True
    ),
    "personalized_judge": MethodSpec(
        characters=False, training_examples=False, with_name=False, with_reasoning=False, demographics=True
    ),
    "plain": MethodSpec(
        characters=False, training_examples=False, with_name=False, with_reasoning=False, demographics=False
    ),
}


def method(name: str) -> MethodSpec:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown persona method {name!r} (known: {', '.join(METHODS)})") from None


def describe_demographics(demographics: Mapping[str, object]) -> str:
    """The rater's demographics as ``- field: value`` lines, in the order given; empty values left out."""
    lines = [f"- {key}: {value}" for key, value in demographics.items() if value not in (None, "")]
    if not lines:
        raise ValueError("the rater has no demographics; a persona or personalized judge needs some")
    return "\n".join(lines)


def _fmt(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else str(score)


def _nouns(noun: str) -> dict[str, str]:
    return {"noun": noun, "Noun": noun[:1].upper() + noun[1:]}


def character_proposal_prompt(
    *,
    demographics: Mapping[str, object],
    training_examples: Sequence[TrainingExample] | None,
    question: str,
    n: int = CHARACTERS_PROPOSED,
    noun: str = "story",
    noun_plural: str = "stories",
) -> str:
    """B.1.1 with training examples, B.1.2 when ``training_examples`` is None (the ablation)."""
    if n < 1:
        raise ValueError(f"number of characters must be at least 1, got {n}")
    user_info = describe_demographics(demographics)
    if training_examples is None:
        return fill(piece(PROMPT_FILE, "character_selection_without_examples"), num_characters=n, user_info=user_info)
    if not training_examples:
        raise ValueError("training_examples is empty; pass None for the 'without training examples' ablation")
    examples = "\n\n".join(
        fill(
            piece(PROMPT_FILE, "training_example"),
            item_text=ex.item_text,
            question=question,
            score=_fmt(ex.score),
            Noun=_nouns(noun)["Noun"],
        )
        for ex in training_examples
    )
    return fill(
        piece(PROMPT_FILE, "character_selection_with_examples"),
        num_characters=n,
        user_info=user_info,
        examples=examples,
        noun_plural=noun_plural,
        question=question,
    )


_LABEL = re.compile(
    r"(?P<label>character\s*name|character|movie\s*title|movie|film|reasoning|reason|rationale)\s*[*_]*\s*:\s*[*_]*",
    re.IGNORECASE,
)
_FIELD = {"character": "name", "movie": "source", "film": "source", "reason": "why", "rationale": "why"}


def _clean(value: str) -> str:
    value = value.strip()
    # Trailing list numbering of the next entry ("... Reasoning: x\n2.") and decoration.
    value = re.sub(r"\n\s*(?:\d+[.)]|[-*\u2022])\s*$", "", value)
    value = value.strip().strip("*_").strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1].strip()
    return " ".join(value.split())


def parse_characters(text: str) -> list[Character]:
    """Characters from a proposal answer, in the order given.

    Reads ``Character Name: ... Movie Title: ... Reasoning: ...`` groups, one field per line or all
    on one line, with or without brackets, bold labels or list numbers. A group without a name or
    a movie is dropped (it cannot be verified); a repeat of an earlier name and movie is dropped
    because the prompt asks for different characters.
    """
    matches = list(_LABEL.finditer(text or ""))
    characters: list[Character] = []
    current: dict[str, str] = {}

    def flush() -> None:
        if current.get("name") and current.get("source"):
            key = (current["name"].casefold(), current["source"].casefold())
            if all((c.name.casefold(), c.source.casefold()) != key for c in characters):
                characters.append(Character(current["name"], current["source"], current.get("why", "")))

    for i, match in enumerate(matches):
        label = re.sub(r"\s+", "", match.group("label").lower())
        field = {"charactername": "name", "movietitle": "source", "reasoning": "why"}.get(label, _FIELD.get(label))
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        value = _clean(text[match.end() : end])
        if field == "name":
            flush()
            current = {}
        if field and field not in current:
            current[field] = value
    flush()
    return characters


def verification_prompt(character: Character) -> str:
    """B.1.3: does this character exist in this movie?"""
    return fill(piece(PROMPT_FILE, "character_validation"), character_name=character.name, movie_title=character.source)


_INVALID = re.compile(r"\binvalid\b|\bnot\s+valid\b", re.IGNORECASE)
_VALID = re.compile(r"(?<!in)\bvalid\b", re.IGNORECASE)


def parse_verification(text: str) -> bool | None:
    """True for VALID, False for INVALID; None when the answer says neither or both."""
    text = text or ""
    invalid = bool(_INVALID.search(text))
    valid = bool(_VALID.search(_INVALID.sub(" ", text)))
    if invalid == valid:
        return None
    return valid


def select_characters(
    candidates: Sequence[Character], verdicts: Sequence[bool | None], *, n: int = CHARACTERS_USED
) -> list[Character]:
    """The first ``n`` candidates verified as real; unconfirmed ones (None) are discarded too."""
    if len(candidates) != len(verdicts):
        raise ValueError(f"{len(candidates)} candidates but {len(verdicts)} verdicts")
    return [c for c, ok in zip(candidates, verdicts, strict=True) if ok is True][:n]


def _task_body(*, item_text: str, question: str, scale: tuple[int, int], noun: str) -> str:
    return fill(
        piece(PROMPT_FILE, "task_body"),
        question=question,
        item_text=item_text,
        scale_text=scale_text(check_scale(scale)),
        **_nouns(noun),
    )


def roleplay_prompt(
    *,
    character: Character,
    item_text: str,
    question: str,
    scale: tuple[int, int],
    with_name: bool = True,
    with_reasoning: bool = True,
    demographics: Mapping[str, object] | None = None,
    noun: str = "story",
) -> str:
    """One character's evaluation of one item.

    ``with_name`` and ``with_reasoning``: B.2.1 (the full method); ``with_name`` only: B.2.2;
    ``with_name=False``: B.2.3, the rater described by ``demographics`` with this character's
    selection rationale as the "user rationale" (the character is used to build the persona only).
    """
    body = _task_body(item_text=item_text, question=question, scale=scale, noun=noun)
    if not with_name:
        if demographics is None:
            raise ValueError("a role-play prompt without the character's name needs the rater's demographics")
        if not character.why:
            raise ValueError(f"character {character.name!r} has no selection rationale to use as the user rationale")
        return fill(
            piece(PROMPT_FILE, "evaluation_without_character"),
            noun=noun,
            user_info=describe_demographics(demographics),
            task_body=body,
            reasoning=character.why,
        )
    names = {"character_name": character.name, "movie_name": character.source, "noun": noun, "task_body": body}
    if with_reasoning:
        if not character.why:
            raise ValueError(f"character {character.name!r} has no selection rationale (use with_reasoning=False)")
        return fill(piece(PROMPT_FILE, "evaluation_with_reasoning"), reasoning=character.why, **names)
    return fill(piece(PROMPT_FILE, "evaluation_without_reasoning"), **names)


def personalized_judge_prompt(
    *, demographics: Mapping[str, object], item_text: str, question: str, scale: tuple[int, int], noun: str = "story"
) -> str:
    """The demographics-only personalized judge (B.2.4, reconstructed)."""
    return fill(
        piece(PROMPT_FILE, "personalized_judge"),
        noun=noun,
        user_info=describe_demographics(demographics),
        task_body=_task_body(item_text=item_text, question=question, scale=scale, noun=noun),
    )


def plain_judge_prompt(*, item_text: str, question: str, scale: tuple[int, int], noun: str = "story") -> str:
    """LLM-as-a-Judge without personalization (B.2.5)."""
    return fill(
        piece(PROMPT_FILE, "plain_judge"),
        noun=noun,
        task_body=_task_body(item_text=item_text, question=question, scale=scale, noun=noun),
    )


_ANSWER_MARK = re.compile(r"(?:^|\n)[ \t>#*_-]*answer[*_]*\s*:[*_]*", re.IGNORECASE)
_REASONING_PREFIX = re.compile(r"^\s*[*_]*reasoning[*_]*\s*:[*_]*\s*", re.IGNORECASE)


def parse_answer(text: str, *, scale: tuple[int, int]) -> ParsedScore:
    """The score after the last ``Answer:`` line; the reasoning and aspect lines are the rationale."""
    return parse_after_marker(text, _ANSWER_MARK, scale=check_scale(scale), rationale_prefix=_REASONING_PREFIX)
