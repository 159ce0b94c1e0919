"""Prometheus (rubric) judge: absolute grading against the question's rubric, or on a pairwise study
relative grading of the item's two candidates."""
from __future__ import annotations

from collections.abc import Callable

from annotations.models import Item, Question, Study
from llmjudge.engine.conversation import Conversation, RatingState, RunView
from llmjudge.kinds.common.errors import KindError
from llmjudge.kinds.common.items import pair_texts
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.turns import pending_turns
from llmjudge.kinds.rubric import prompts as rubric
from llmjudge.kinds.rubric.options import rubric_options
from llmjudge.parsing import ParsedScore
from llmjudge.prompting.study_prompt import choice_score, study_choices
from llmjudge.runs.config import JudgeConfig


def pairwise_criteria(question: Question) -> rubric.Criteria:
    """Prometheus relative grading shows only the rubric's criteria: the question's, else its text."""
    criteria = (question.rubric or {}).get("criteria") if isinstance(question.rubric, dict) else None
    try:
        return rubric.Criteria(question.text.strip() if criteria is None else criteria.strip())
    except (ValueError, AttributeError):
        raise KindError(f"question {question.key!r}: rubric 'criteria' must be a non-empty text") from None


def question_rubric(question: Question) -> rubric.Rubric:
    if question.rubric:
        try:
            return rubric.Rubric.from_json(question.rubric, default_criteria=question.text)
        except ValueError as exc:
            raise KindError(f"question {question.key!r}: {exc}") from None
    shipped = rubric.shipped_rubrics()
    if question.key in shipped:
        return shipped[question.key]
    raise KindError(f"question {question.key!r} has no rubric (set Question.rubric) and none ships for it")


def rubric_parser(*, study: Study, question: Question | None = None) -> Callable[[str], ParsedScore]:
    """What every rubric turn is parsed with (and ``llmjudge.runs.reparse`` re-reads with): relative
    grading's A/B as the study stores choices, else absolute grading's 1-5."""
    if study.is_pairwise:
        return lambda text: choice_score(study, rubric.parse_relative(text))
    return rubric.parse_absolute


class RubricBuilder:
    """Prometheus: absolute grading (one call per item, question and sample), or on a pairwise study
    relative grading of the item's two candidates, the choice stored as the study encodes it.

    On the chat endpoint prometheus-eval's system message for the grading mode goes first
    (``RubricOptions.system_prompt``); the completions endpoint has no system role.
    """

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
        options = rubric_options(without_backend_keys(config.options))
        mapping = rubric.ItemMapping(options.instruction, options.response, options.reference_field)
        fields = {k: str(v) for k, v in item.fields.items()}
        scale = (study.scale_min, study.scale_max)
        mode = "relative" if study.is_pairwise else "absolute"
        system = ""
        if options.system_prompt and config.options.get("endpoint", "chat") == "chat":
            system = rubric.system_prompt(mode)
        seed = config.sample_seed(sample)
        if study.is_pairwise:
            # The response template names a Likert field ({story}); a pair has its own two.
            instruction, _, reference = rubric.ItemMapping(
                options.instruction, "", options.reference_field
            ).apply(fields)
            response_a, response_b = pair_texts(study, item)

            def relative(question: Question) -> tuple[str, Callable]:
                prompt = rubric.relative_prompt(
                    instruction=instruction,
                    response_a=response_a,
                    response_b=response_b,
                    rubric=pairwise_criteria(question),
                    reference_answer=reference,
                )
                return prompt, rubric_parser(study=study)

            return pending_turns(
                ratings, questions, relative, scale, sample, seed, system=system, choices=study_choices(study)
            )
        instruction, response, reference = mapping.apply(fields)

        def make(question: Question) -> tuple[str, Callable]:
            prompt = rubric.absolute_prompt(
                instruction=instruction,
                response=response,
                rubric=question_rubric(question),
                reference_answer=reference,
                version=options.version,
            )
            return prompt, rubric_parser(study=study)

        return pending_turns(ratings, questions, make, scale, sample, seed, system=system)
