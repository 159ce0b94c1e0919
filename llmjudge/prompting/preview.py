"""What a judge is sent for one item, for the preview page: each kind's own prompts, built by the
kind's builder exactly as a run builds them.

A per-rater kind (personalized, persona) predicts one human rater at a time, so the preview shows
the prompt for one example rater: the first rater, by id, for whom the item is held out (else the
first rater of the split). Calls a run asks before its ratings (persona characters, a panel's
dynamic roles) are read from the judge's latest run on the study when there is one; without it a
panel shows its static roles, and a persona judge that role-plays characters shows the character
proposal it asks first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotations.guards.placeholders import TemplateError
from annotations.models import Item, Question, Rater, Study
from annotations.rendering import PromptTooLarge, prompt_capped
from llmjudge.engine.conversation import RatingState, RunView
from llmjudge.kinds import kind_for, planned_rows
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.persona.options import persona_options
from llmjudge.kinds.persona.preparation import proposal_prompt
from llmjudge.kinds.persona.prompts import method
from llmjudge.models import Judge, JudgeRun
from llmjudge.prompting.study_prompt import chat_turn_texts, judge_prompts
from llmjudge.runs.config import JudgeConfig


@dataclass(frozen=True)
class Preview:
    prompts: list[tuple[Question, str]]  # (question, what the judge is sent for it)
    chat: bool = False  # the texts are a chat conversation's user turns
    rater: Rater | None = None  # the example rater of a per-rater kind
    note: str = ""  # what the preview could not show, and why


@dataclass(frozen=True)
class _PlannedRun:
    """A run not yet started: what the builders read of one (its params; no stored calls)."""

    study: Study
    params: dict[str, Any] = field(default_factory=dict)
    pk: None = None


def judge_preview(*, study: Study, judge: Judge | None, item: Item, questions: list[Question]) -> Preview:
    """What ``judge`` is sent for ``item``; a note instead when a prompt is refused (a template that is not
    plain, or a prompt above MAX_PROMPT_CHARS: issue 23, finding 2), as a run would refuse it."""
    try:
        shown = _preview(study=study, judge=judge, item=item, questions=questions)
        for question, text in shown.prompts:
            prompt_capped(text, what=f"the prompt for question {question.key!r}")
    except (PromptTooLarge, TemplateError) as exc:
        return Preview([], note=f"This judge's prompts are refused: {exc}")
    return shown


def _preview(*, study: Study, judge: Judge | None, item: Item, questions: list[Question]) -> Preview:
    config = JudgeConfig.from_judge(judge) if judge else None
    if config is None or config.kind == "plain":
        config = config or JudgeConfig(judge_id=0, name="", kind="plain", backend="fake", model="")
        texts = judge_prompts(study=study, config=config, item=item, questions=questions)
        chat = config.mode == "chat"
        return Preview(list(zip(questions, chat_turn_texts(texts) if chat else texts, strict=True)), chat=chat)
    kind = kind_for(config.kind)
    run: RunView | None = JudgeRun.objects.filter(study=study, judge=judge).order_by("-pk").first()
    if run is not None:
        config = JudgeConfig.from_params(run.params)
    else:
        ids = list(study.items.values_list("pk", flat=True))
        try:
            _, params = planned_rows(study=study, config=config, items=ids, questions=[q.pk for q in questions])
        except ValueError as exc:
            return Preview([], note=f"This judge cannot run on this study yet: {exc}")
        run = _PlannedRun(study=study, params={**config.to_params(), **params})
    rater = _example_rater(study, run.params.get("split", {}), item) if kind.per_rater else None
    if kind.per_rater and rater is None:
        return Preview([], note="No rater to show the prompt for.")
    ratings = {q.pk: RatingState(pk=q.pk, status="pending", raw="", attempts=0, history=[]) for q in questions}
    conversations = kind.builder.conversations(
        study=study, config=config, item=item, questions=questions, sample=0, ratings=ratings, run=run,
        target_rater_id=rater.pk if rater else None,
    )
    by_rating = {turn.rating_id: turn.prompt for c in conversations for turn in c.turns}
    prompts = [(q, by_rating[q.pk]) for q in questions if q.pk in by_rating]
    if prompts or config.kind != "persona" or rater is None:
        return Preview(prompts, rater=rater)
    # A persona judge that role-plays characters has none before its first run: its first call is
    # the character proposal for the rater, one per question.
    options = persona_options(without_backend_keys(config.options))
    if not method(options.method).characters:
        return Preview([], rater=rater)
    proposals = [(q, proposal_prompt(study=study, options=options, rater=rater, question=q, split=run.params["split"]))
                 for q in questions]
    return Preview(proposals, rater=rater, note="Characters are proposed first; the rating prompts role-play them.")


def _example_rater(study: Study, split: dict[str, dict[str, list[int]]], item: Item) -> Rater | None:
    ids = sorted(int(r) for r in split)
    held_out = [r for r in ids if item.pk in split[str(r)]["held_out"]]
    candidates = held_out or ids
    return study.raters.filter(pk=candidates[0]).first() if candidates else None
