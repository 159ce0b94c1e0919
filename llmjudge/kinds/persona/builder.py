"""CINEMETRIC (persona) judge: sample i is the i-th verified character role-playing the target rater."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypedDict

from annotations.models import Item, Question, Study
from llmjudge.engine.conversation import Conversation, RatingState, RunView
from llmjudge.kinds.common.items import item_text, rater_demographics
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.turns import pending_turns
from llmjudge.kinds.persona import prompts as persona
from llmjudge.kinds.persona.options import persona_options
from llmjudge.kinds.persona.preparation import persona_characters
from llmjudge.parsing import ParsedScore
from llmjudge.runs.config import JudgeConfig


class _PromptTexts(TypedDict):
    """What every persona prompt shows: the item, the question, the scale and what the item is called."""

    item_text: str
    question: str
    scale: tuple[int, int]
    noun: str


def persona_parser(*, study: Study, question: Question | None = None) -> Callable[[str], ParsedScore]:
    """What every persona turn is parsed with (and ``llmjudge.runs.reparse`` re-reads with)."""
    return functools.partial(persona.parse_answer, scale=(study.scale_min, study.scale_max))


class PersonaBuilder:
    """CINEMETRIC: sample i is the i-th verified character role-playing the target rater."""

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
        # A per-rater kind's turns are built for one rater of a planned run (a started one, or the preview's).
        assert run is not None and target_rater_id is not None
        options = persona_options(without_backend_keys(config.options))
        spec = persona.method(options.method)
        scale = (study.scale_min, study.scale_max)
        text = item_text(study, item)
        demographics = rater_demographics(study.raters.get(pk=target_rater_id).demographics)

        def make(question: Question) -> tuple[str, Callable]:
            kw = _PromptTexts(item_text=text, question=question.text, scale=scale, noun=options.noun)
            if spec.characters:
                character = persona_characters(run, target_rater_id, question.pk)[sample]
                prompt = persona.roleplay_prompt(
                    character=character,
                    with_name=spec.with_name,
                    with_reasoning=spec.with_reasoning and bool(character.why),
                    demographics=demographics,
                    **kw,
                )
            elif spec.demographics:
                prompt = persona.personalized_judge_prompt(demographics=demographics, **kw)
            else:
                prompt = persona.plain_judge_prompt(**kw)
            return prompt, persona_parser(study=study)

        if spec.characters:
            # Rows whose rater lacks characters were set to error by the preparation.
            ratings = {q: r for q, r in ratings.items() if len(persona_characters(run, target_rater_id, q)) > sample}
        return pending_turns(ratings, questions, make, scale, sample, config.sample_seed(sample))
