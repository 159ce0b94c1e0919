"""What a judge is asked: prompt builders keyed by judge kind, each turning (study, judge, item,
questions, sample) into the conversations to send and a parser for their answers.

Every text comes from ``annotations.rendering.llm_prompt``, the function the rater page shares, so
a judge reads exactly what a rater reads (tests/llmjudge/test_prompts.py proves it). Instruction
variants are data (the protocol file's "variants"): they add text before the instruction or after
the question and never change the protocol's own words.

Extension point: issue 6 adds rubric, personalized, persona and role-player judges by registering
a builder under their ``Judge.kind`` in ``BUILDERS``; the engine, the exactly-once bookkeeping and
the pages need no change.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from annotations.models import PAIRWISE_SCORES, Item, Question, Study
from annotations.rendering import llm_prompt
from annotations.studies import PROTOCOL_FILE
from llmjudge.config import JudgeConfig
from llmjudge.parsing import OK, PARSER_VERSION, UNPARSEABLE, ParsedChoice, ParsedScore, parse_pairwise, parse_score

# Bump when the same study and judge would send different text.
PROMPTS_VERSION = "1"


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
    choices: tuple[str, ...] = ()  # a pairwise study's choices; only the offline fake backend reads them


@dataclass(frozen=True)
class Conversation:
    """Turns asked in order; in chat mode each answer joins the conversation before the next turn."""

    turns: list[Turn]
    chat: bool
    sample: int
    seed: int | None
    system: str = ""  # a system message sent before the turns (chat endpoint only), e.g. Prometheus'


class PromptBuilder(Protocol):
    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        """``ratings`` maps question id to the state of this item/sample's rating rows in the chunk
        (judging.RatingState: pk, status, raw, attempts, history; of the
        ``target_rater_id`` for per-rater kinds); ``run`` gives access to its params and steps."""
        ...


@functools.cache
def protocol_variants() -> dict[str, dict[str, str]]:
    return json.loads(PROTOCOL_FILE.read_text(encoding="utf-8"))["variants"]


def variant_affixes(config: JudgeConfig) -> tuple[str, str]:
    """(instruction prefix, question suffix): the variant's protocol text, then the judge's own."""
    spec = protocol_variants().get(config.variant, {})
    return (
        spec.get("instruction_prefix", "") + config.instruction_prefix,
        spec.get("question_suffix", "") + config.question_suffix,
    )


def is_adversarial(study: Study) -> bool:
    """Whether "title 1"/"title 2" are removed before parsing (the paper's adversarial studies)."""
    return study.template.startswith("adversarial") or "title 1" in study.llm_template.lower()


def template_version(study: Study) -> str:
    return f"{study.template_version or 'custom'}+p{PROMPTS_VERSION}+parser{PARSER_VERSION}"[:50]


def judge_prompts(*, study: Study, config: JudgeConfig, item: Item, questions: list[Question]) -> list[str]:
    """The full prompt of every question for one item, in question order."""
    prefix, suffix = variant_affixes(config)
    return [
        llm_prompt(study=study, item=item, question=q, instruction_prefix=prefix, question_suffix=suffix)
        for q in questions
    ]


def chat_turn_texts(prompts: list[str]) -> list[str]:
    """The user turns of one chat conversation asking ``prompts`` in order.

    The first turn is the first prompt in full. A later prompt repeats the instruction and the item
    the model has already read, so its turn is what follows the lines it shares with the first
    prompt (e.g. the relevance turn starts at "Now read the PROMPT ..."), as a rater filling one
    form page reads the story once. Lines, not characters, so a turn never starts mid-word.
    """
    if not prompts:
        return []
    first = prompts[0].split("\n")
    turns = [prompts[0]]
    for prompt in prompts[1:]:
        lines = prompt.split("\n")
        shared = 0
        while shared < min(len(first), len(lines)) - 1 and first[shared] == lines[shared]:
            shared += 1
        turns.append("\n".join(lines[shared:]))
    return turns


def choice_score(study: Study, parsed: ParsedChoice) -> ParsedScore:
    """An A/B(/tie) answer as the study stores choices (``Study.pairwise_score``).

    A tie on a forced-choice study (scale 1-2) is no choice: the rating is unparseable and says why,
    rather than being counted as A or B.
    """
    if parsed.status != OK:
        return ParsedScore(None, parsed.status, parsed.rationale)
    score = study.pairwise_score(parsed.choice)
    if score is None:
        return ParsedScore(None, UNPARSEABLE, f"{parsed.rationale}\n[{parsed.choice}: not a choice this study offers]")
    return ParsedScore(float(score), OK, parsed.rationale)



def study_choices(study: Study) -> tuple[str, ...]:
    """The choices a pairwise study offers ("A", "B" and, on scale 1-3, "tie"); () for other studies."""
    if not study.is_pairwise:
        return ()
    return tuple(c for c, score in PAIRWISE_SCORES.items() if study.scale_min <= score <= study.scale_max)


def study_parser(study: Study) -> Callable[[str], ParsedScore]:
    """The plain judge's parser: a score on the study's scale, or on a pairwise study an A/B choice."""
    if study.is_pairwise:
        return lambda text: choice_score(study, parse_pairwise(text))
    return functools.partial(
        parse_score, scale_min=study.scale_min, scale_max=study.scale_max, adversarial=is_adversarial(study)
    )


class PlainBuilder:
    """The paper's protocol: one query per question, or (chat mode) one conversation per item/sample."""

    def conversations(
        self,
        *,
        study: Study,
        config: JudgeConfig,
        item: Item,
        questions: list[Question],
        sample: int,
        ratings: dict[int, Any],
        run: Any = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        prompts = judge_prompts(study=study, config=config, item=item, questions=questions)
        scale = (study.scale_min, study.scale_max)
        parse = study_parser(study)
        chat = config.mode == "chat"
        texts = chat_turn_texts(prompts) if chat else prompts
        turns = []
        for question, prompt, text in zip(questions, prompts, texts, strict=True):
            rating = ratings.get(question.pk)
            if rating is None:
                continue
            done = rating.status != "pending"
            turns.append(
                Turn(
                    rating_id=rating.pk,
                    prompt=prompt,
                    user_text=text,
                    parse=parse,
                    scale=scale,
                    choices=study_choices(study),
                    # An earlier error has no answer: that turn is left out of the conversation.
                    answer=(rating.raw if rating.status != "error" else None) if done else None,
                    prior_attempts=rating.attempts,
                    prior_history=list(rating.history or []),
                )
            )
            if done and rating.status == "error":
                turns.pop()
        seed = config.sample_seed(sample)
        if chat:
            return [Conversation(turns=turns, chat=True, sample=sample, seed=seed)] if turns else []
        return [Conversation(turns=[t], chat=False, sample=sample, seed=seed) for t in turns if t.answer is None]


BUILDERS: dict[str, PromptBuilder] = {"plain": PlainBuilder()}

# Issue 6's kinds (rubric, personalized, persona, roleplay) register themselves here on import.
from llmjudge import kind_builders  # noqa: E402, F401


def builder_for(kind: str) -> PromptBuilder:
    try:
        return BUILDERS[kind]
    except KeyError:
        raise ValueError(f"judge kind {kind!r} has no prompt builder yet (known: {', '.join(BUILDERS)})") from None
