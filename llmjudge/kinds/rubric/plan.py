"""Whether a rubric judge can run on a study: every question needs a rubric (or, pairwise, criteria)."""
from __future__ import annotations

from annotations.models import Study
from llmjudge.kinds.common.items import pair_fields
from llmjudge.kinds.rubric.builder import pairwise_criteria, question_rubric
from llmjudge.kinds.rubric.options import RubricOptions
from llmjudge.kinds.rubric.prompts import check_study_scale
from llmjudge.runs.config import JudgeConfig


def rubric_study_check(*, study: Study, config: JudgeConfig, options: RubricOptions) -> None:
    """Fails now, naming the question, rather than once per call."""
    if study.is_pairwise:
        pair_fields(study)
        for question in study.questions.all():
            pairwise_criteria(question)
        return
    check_study_scale((study.scale_min, study.scale_max))
    for question in study.questions.all():
        question_rubric(question)
