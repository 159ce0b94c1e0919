"""The personalized kind's registry entry."""
from __future__ import annotations

from llmjudge.kinds.common.spec import JudgeKind
from llmjudge.kinds.personalized.builder import PersonalizedBuilder, personalized_parser
from llmjudge.kinds.personalized.options import personalized_options
from llmjudge.kinds.personalized.plan import personalized_rows

KIND = JudgeKind(
    "personalized", personalized_options, PersonalizedBuilder(), per_rater=True, planned_rows=personalized_rows,
    answer_parser=personalized_parser,
)
