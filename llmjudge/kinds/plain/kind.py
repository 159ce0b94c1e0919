"""The plain kind's registry entry."""
from __future__ import annotations

from llmjudge.kinds.common.spec import JudgeKind
from llmjudge.kinds.plain.builder import PlainBuilder, plain_parser
from llmjudge.kinds.plain.options import plain_options

KIND = JudgeKind("plain", plain_options, PlainBuilder(), has_options=False, answer_parser=plain_parser)
