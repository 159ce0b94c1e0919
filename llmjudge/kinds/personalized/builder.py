"""PERSE (personalized) judge: the target rater's profile ratings, then the held-out item."""
from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable

from annotations.models import HumanRating, Item, Question, Study
from llmjudge.engine.conversation import Conversation, RatingState, RunView
from llmjudge.kinds.common.items import item_text
from llmjudge.kinds.common.option_values import without_backend_keys
from llmjudge.kinds.common.turns import pending_turns
from llmjudge.kinds.personalized import prompts as personalized
from llmjudge.kinds.personalized.options import personalized_options
from llmjudge.parsing import ParsedScore
from llmjudge.runs.config import JudgeConfig


def personalized_parser(*, study: Study, question: Question | None = None) -> Callable[[str], ParsedScore]:
    """What every personalized turn is parsed with (and ``llmjudge.runs.reparse`` re-reads with)."""
    return functools.partial(personalized.parse_personalized, scale=(study.scale_min, study.scale_max))


class PersonalizedBuilder:
    """PERSE: the target rater's profile ratings of the question, then the held-out item."""

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
        options = personalized_options(without_backend_keys(config.options))
        scale = (study.scale_min, study.scale_max)
        profile_ids = run.params["split"][str(target_rater_id)]["profile"]
        # Only the profile's ratings: a query per conversation stays small on a 1,000-item study.
        human: dict[int, dict[int, tuple[float, str]]] = defaultdict(dict)
        for item_id, question_id, score, comment in HumanRating.objects.filter(
            rater_id=target_rater_id, item_id__in=profile_ids
        ).values_list("item_id", "question_id", "score", "comment"):
            human[item_id][question_id] = (score, comment)
        profile_items = {i.pk: i for i in Item.objects.filter(pk__in=profile_ids)}
        text = item_text(study, item)

        def make(question: Question) -> tuple[str, Callable]:
            profile = [
                personalized.ProfileEntry(
                    item_text(study, profile_items[i]), human[i][question.pk][1], human[i][question.pk][0]
                )
                for i in profile_ids
                if question.pk in human.get(i, {})
            ]
            prompt = personalized.personalized_prompt(
                profile=profile,
                item_text=text,
                question=question.text,
                scale=scale,
                noun=options.noun,
                noun_plural=options.noun_plural,
            )
            return prompt, personalized_parser(study=study)

        return pending_turns(ratings, questions, make, scale, sample, config.sample_seed(sample))
