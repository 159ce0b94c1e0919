"""The rubric kind's registry entry."""
from __future__ import annotations

from llmjudge.kinds.common.spec import JudgeKind
from llmjudge.kinds.rubric.builder import RubricBuilder, rubric_parser
from llmjudge.kinds.rubric.options import rubric_options
from llmjudge.kinds.rubric.plan import rubric_study_check

KIND = JudgeKind("rubric", rubric_options, RubricBuilder(), study_check=rubric_study_check,
                 answer_parser=rubric_parser)
