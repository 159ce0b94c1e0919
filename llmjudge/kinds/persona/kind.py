"""The persona kind's registry entry."""
from __future__ import annotations

from llmjudge.kinds.common.spec import JudgeKind
from llmjudge.kinds.persona.builder import PersonaBuilder, persona_parser
from llmjudge.kinds.persona.options import persona_options
from llmjudge.kinds.persona.plan import persona_rows, persona_steps
from llmjudge.kinds.persona.preparation import persona_prepare

KIND = JudgeKind(
    "persona",
    persona_options,
    PersonaBuilder(),
    per_rater=True,
    planned_rows=persona_rows,
    planned_steps=persona_steps,
    prepare=persona_prepare,
    answer_parser=persona_parser,
)
