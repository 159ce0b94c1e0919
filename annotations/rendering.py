"""The one place that turns a Study/Question/Item into text, for raters and for judges alike.

The rater page and the judge prompt are both built from `question_context` and the item's fields,
so "the same instructions to humans and LLMs" holds by construction (tests/llmjudge proves it).
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from annotations.models import Item, Question, Study
from annotations.placeholders import plain_placeholders


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
