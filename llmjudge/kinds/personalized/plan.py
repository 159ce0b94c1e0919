"""The rows a personalized run predicts: each rater's held-out items, from a seeded split."""
from __future__ import annotations

from typing import Any

from annotations.models import Study
from llmjudge.kinds.common.plan import Row
from llmjudge.kinds.common.split import held_out_rows, run_split, split_params
from llmjudge.kinds.personalized.options import PersonalizedOptions
from llmjudge.runs.config import JudgeConfig


def personalized_rows(
    *, study: Study, config: JudgeConfig, options: PersonalizedOptions, items: list[int], questions: list[int]
) -> tuple[list[Row], dict[str, Any]]:
    split = run_split(
        study, "personalized", profile_size=options.profile_size, seed=options.split_seed, held_out=options.held_out
    )
    rows = held_out_rows(study=study, split=split, items=items, questions=questions, samples=config.samples)
    return rows, split_params(options, split)
