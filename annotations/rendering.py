"""The one place that turns a Study/Question/Item into text, for raters and for judges alike.

The rater page and the judge prompt are both built from `question_context` and the item's fields,
so "the same instructions to humans and LLMs" holds by construction (tests/llmjudge proves it).

A RaterPage then becomes what the template shows (``display_fields``, ``pair_split``): headings, text, and
the meaning study's word diff. Nothing here marks anything safe: the diff is a list of (word, changed) pairs
and the template escapes each word, so an item's text can never inject markup.
"""
from __future__ import annotations

import copy
import difflib
import random
import re
from dataclasses import dataclass

from django.conf import settings

from annotations.guards.placeholders import plain_placeholders
from annotations.models import PAIRWISE_SCORES, Item, Question, Study


class PromptTooLarge(ValueError):
    """A rendered rater page or prompt is above MAX_PROMPT_CHARS; the message says which and by how much."""


def _capped(text_chars: int, *, what: str, item: Item) -> None:
    # One cap for the rater page and the judge prompt: the same text is built for every rater page view
    # and stored in every LLM rating, so its size is bounded before anything is built again or stored.
    cap = settings.MAX_PROMPT_CHARS
    if text_chars > cap:
        raise PromptTooLarge(
            f"the {what} of item {item.external_id!r} would be {text_chars} characters, above MAX_PROMPT_CHARS={cap}"
        )


@dataclass(frozen=True)
class RaterQuestion:
    key: str
    text: str
    context: str  # shown right before the question ("" if none); may reveal a hidden field


@dataclass(frozen=True)
class RaterPage:
    instruction: str
    fields: dict[str, str]  # fields shown from the start (fields a question reveals are left out)
    questions: list[RaterQuestion]


def prompt_capped(text: str, *, what: str) -> str:
    """``text`` if it is within MAX_PROMPT_CHARS; PromptTooLarge naming ``what`` otherwise. For the prompts the
    judge kinds build around the study's (a rubric, a persona's examples): checked before any is sent or stored."""
    cap = settings.MAX_PROMPT_CHARS
    if len(text) > cap:
        raise PromptTooLarge(f"{what} would be {len(text)} characters, above MAX_PROMPT_CHARS={cap}")
    return text


def oriented_item(*, study: Study, item: Item, swapped: bool) -> Item:
    """The item as one orientation shows it: ``item`` itself, or (``swapped``, pairwise) an unsaved copy whose
    two candidate fields trade their texts. The rater page and the judge prompt of a swapped pair are both
    rendered from this copy, so they stay identical for the same item and orientation."""
    if not swapped:
        return item
    if not study.is_pairwise or len(study.pair_fields) != 2:
        raise ValueError(f"study {study.slug!r} has no pair of candidates to swap")
    first, second = study.pair_fields
    twin = copy.copy(item)
    twin.fields = {**item.fields, first: item.fields.get(second, ""), second: item.fields.get(first, "")}
    return twin


def question_context(*, question: Question, item: Item) -> str:
    if not question.context:
        return ""
    # Checked again here (cached): a template written before the check, or straight into the table.
    plain_placeholders(question.context, f"question {question.key!r}: context")
    return question.context.format_map(item.fields)


def rater_page(*, study: Study, item: Item, questions: list[Question]) -> RaterPage:
    hidden = {q.reveals for q in questions if q.reveals}
    page = RaterPage(
        instruction=study.instruction,
        fields={name: item.fields.get(name, "") for name in study.item_fields if name not in hidden},
        questions=[
            RaterQuestion(key=q.key, text=q.text, context=question_context(question=q, item=item)) for q in questions
        ],
    )
    size = len(page.instruction) + sum(len(str(value)) for value in page.fields.values())
    _capped(size + sum(len(q.text) + len(q.context) for q in page.questions), what="rater page", item=item)
    return page


def llm_prompt(
    *, study: Study, item: Item, question: Question, instruction_prefix: str = "", question_suffix: str = ""
) -> str:
    """The judge's prompt for one question: the study's template filled with the item and question.

    Variants only add text around the protocol's (the persona prefix before, "Please also explain
    your decision." after the question); they never change it.
    """
    values = dict(item.fields)
    values["context"] = question_context(question=question, item=item)
    values["question"] = question.text + question_suffix
    plain_placeholders(study.llm_template, "llm_template")
    prompt = instruction_prefix + study.llm_template.format_map(values)
    _capped(len(prompt), what=f"prompt for question {question.key!r}", item=item)
    return prompt


@dataclass(frozen=True)
class Token:
    text: str  # a word or the whitespace after it
    changed: bool


@dataclass(frozen=True)
class DisplayField:
    name: str
    label: str
    text: str
    tokens: list[Token] | None = None  # set for the two fields of a word diff


_WORDS = re.compile(r"\S+|\s+")


def word_diff(a: str, b: str) -> tuple[list[Token], list[Token]]:
    """Both texts as tokens, with the words that differ between them marked `changed`.

    Words are compared exactly (case and punctuation count: "Oil" vs "oil" is a change a rater should see);
    whitespace is never marked.
    """
    ta, tb = _WORDS.findall(a), _WORDS.findall(b)
    wa = [(n, t) for n, t in enumerate(ta) if not t.isspace()]
    wb = [(n, t) for n, t in enumerate(tb) if not t.isspace()]
    changed_a: set[int] = set()
    changed_b: set[int] = set()
    matcher = difflib.SequenceMatcher(a=[t for _, t in wa], b=[t for _, t in wb], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            changed_a.update(wa[i][0] for i in range(i1, i2))
            changed_b.update(wb[j][0] for j in range(j1, j2))
    return (
        [Token(t, n in changed_a) for n, t in enumerate(ta)],
        [Token(t, n in changed_b) for n, t in enumerate(tb)],
    )


def display_fields(*, study: Study, page: RaterPage) -> list[DisplayField]:
    """The page's visible fields, in the study's order, with headings raters may see."""
    fields = [
        DisplayField(name=name, label=study.field_label(name), text=str(text)) for name, text in page.fields.items()
    ]
    if len(study.diff_fields) == 2:
        first, second = study.diff_fields
        by_name = {f.name: f for f in fields}
        if first in by_name and second in by_name:
            ta, tb = word_diff(by_name[first].text, by_name[second].text)
            tokens = {first: ta, second: tb}
            fields = [
                DisplayField(f.name, f.label, f.text, tokens[f.name]) if f.name in tokens else f for f in fields
            ]
    return fields


def pair_split(*, study: Study, fields: list[DisplayField]) -> tuple[list[DisplayField], list[DisplayField]]:
    """A pairwise study's page: (fields shown above, the two candidates shown side by side, A then B).

    Any other study, or a page lacking a candidate, shows every field above and no pair.
    """
    if not study.is_pairwise or len(study.pair_fields) != 2:
        return fields, []
    by_name = {f.name: f for f in fields}
    if not all(name in by_name for name in study.pair_fields):
        return fields, []
    return [f for f in fields if f.name not in study.pair_fields], [by_name[n] for n in study.pair_fields]


def pair_swapped(*, study: Study, item_id: int, position: int, seat: int | None, seed: int) -> bool:
    """Whether the rater taking ``seat`` of an item sees its two candidates swapped (B's text in A's place).

    Only a pairwise study with ``pair_order`` counterbalanced swaps. Counterbalanced by seat: an item's raters
    alternate orientations (seats 0, 2, ... one way, seats 1, 3, ... the other), so two raters of an item in
    neighbouring seats always see the pair in opposite orders. Which way seat 0 goes is a seeded half of the
    study's items: of each two items in import order (positions 2k and 2k + 1) exactly one, chosen by a coin
    seeded with the study and k, so a rater in seat 0 throughout sees A and B swapped on half of the items.
    Gold items take no seat: a coin seeded with the rater's own seed and the item.
    """
    if not study.is_pairwise or study.pair_order != Study.PairOrder.COUNTERBALANCED:
        return False
    if seat is None:
        return random.Random(f"{seed}:{item_id}:swap").getrandbits(1) == 1
    seat_zero_swapped = (position % 2) ^ random.Random(f"{study.pk}:{position // 2}:swap").getrandbits(1)
    return (seat + seat_zero_swapped) % 2 == 1


def shown_choice_in_file_order(score: int, *, swapped: bool) -> int:
    """A choice made on a swapped pairwise page, in the file's orientation: the first place held the file's B,
    so "A" (1) means B (2) and back; a tie (3) stays a tie. Unswapped scores pass unchanged."""
    if not swapped:
        return score
    a, b = PAIRWISE_SCORES["A"], PAIRWISE_SCORES["B"]
    return {a: b, b: a}.get(score, score)
