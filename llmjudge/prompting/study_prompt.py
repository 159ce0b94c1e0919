"""The study's own prompt text for a judge: the protocol's instruction variants, the full prompt
of each question from ``annotations.rendering.llm_prompt`` (the function the rater page shares, so a
judge reads exactly what a rater reads; tests/llmjudge/prompting/test_prompts.py proves it), chat turns, and
the study's answer format (a score on its scale, or a pairwise choice).

Instruction variants are data (the protocol file's "variants"): they add text before the
instruction or after the question and never change the protocol's own words. Each judge kind's
builder (llmjudge/kinds/<kind>/builder.py) uses these; the kinds are listed in llmjudge/kinds/__init__.py.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable

from annotations.models import PAIRWISE_SCORES, Item, Question, Study
from annotations.rendering import llm_prompt
from annotations.studies import PROTOCOL_FILE
from llmjudge.parsing import OK, PARSER_VERSION, UNPARSEABLE, ParsedChoice, ParsedScore, parse_pairwise, parse_score
from llmjudge.runs.config import JudgeConfig

# Bump when the same study and judge would send different text. 2: kind judges read each item field
# under the rater's label ("Response a", not "Response_a").
PROMPTS_VERSION = "2"


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
        return ParsedScore(None, parsed.status, parsed.rationale, reason=parsed.reason)
    score = study.pairwise_score(parsed.choice)
    if score is None:
        return ParsedScore(None, UNPARSEABLE, f"{parsed.rationale}\n[{parsed.choice}: not a choice this study offers]")
    return ParsedScore(float(score), OK, parsed.rationale)


def study_choices(study: Study) -> tuple[str, ...]:
    """The choices a pairwise study offers ("A", "B" and, on scale 1-3, "tie"); () for other studies."""
    if not study.is_pairwise:
        return ()
    return tuple(c for c, score in PAIRWISE_SCORES.items() if study.scale_min <= score <= study.scale_max)


def study_parser(study: Study, question: Question | None = None) -> Callable[[str], ParsedScore]:
    """The plain judge's parser: a score on the study's scale, or on a pairwise study an A/B choice.

    The study's scale labels count as ratings ("5 (highest)", "Strongly agree"), and with a question the
    answer's rating for that aspect is taken when it scores several ("Fluency: 5 ... Relevance: 1").
    """
    if study.is_pairwise:
        return lambda text: choice_score(study, parse_pairwise(text))
    return functools.partial(
        parse_score,
        scale_min=study.scale_min,
        scale_max=study.scale_max,
        adversarial=is_adversarial(study),
        aspect=question.key.replace("_", " ") if question is not None else None,
        labels=study.scale_labels,
    )
