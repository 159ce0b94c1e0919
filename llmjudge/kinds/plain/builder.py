"""The paper's protocol judge: the prompt the rater's page shares, asked as it is."""
from __future__ import annotations

from collections.abc import Callable

from annotations.models import Item, Question, Study
from llmjudge.engine.conversation import Conversation, RatingState, RunView, Turn
from llmjudge.parsing import ParsedScore
from llmjudge.parsing.labels import parse_label
from llmjudge.prompting.study_prompt import chat_turn_texts, judge_prompts, study_choices, study_parser
from llmjudge.runs.config import JudgeConfig
from llmjudge.runs.swapping import is_swapped, mapped_back, swapped_item


def answer_format(
    study: Study, question: Question | None = None
) -> tuple[Callable[[str], ParsedScore], tuple[str, ...]]:
    """How the plain judge reads an answer to ``question``, and the choices the offline fake backend may
    answer: a categorical study's answer is one of its labels (by name or number), stored as the label's
    code; otherwise the study's scale, its label words and the question's aspect (``study_parser``)."""
    if study.is_categorical:
        labels = tuple(study.category_labels())
        return (lambda text: parse_label(text, labels=labels)), labels
    return study_parser(study, question), study_choices(study)


def plain_parser(*, study: Study, question: Question | None = None) -> Callable[[str], ParsedScore]:
    """What a plain turn is parsed with (and ``llmjudge.runs.reparse`` re-reads with): see ``answer_format``."""
    return answer_format(study, question)[0]


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
        ratings: dict[int, RatingState],
        run: RunView | None = None,
        target_rater_id: int | None = None,
    ) -> list[Conversation]:
        # A position-bias sample: the pair shown swapped, its choice mapped back (llmjudge/runs/swapping.py).
        swapped = is_swapped(config, sample)
        shown = swapped_item(study, item) if swapped else item
        prompts = judge_prompts(study=study, config=config, item=shown, questions=questions)
        scale = (study.scale_min, study.scale_max)
        chat = config.mode == "chat"
        texts = chat_turn_texts(prompts) if chat else prompts
        turns = []
        for question, prompt, text in zip(questions, prompts, texts, strict=True):
            rating = ratings.get(question.pk)
            if rating is None:
                continue
            done = rating.status != "pending"
            parse, choices = answer_format(study, question)
            parse = mapped_back(parse) if swapped else parse
            turns.append(
                Turn(
                    rating_id=rating.pk,
                    prompt=prompt,
                    user_text=text,
                    parse=parse,
                    scale=scale,
                    choices=choices,
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
