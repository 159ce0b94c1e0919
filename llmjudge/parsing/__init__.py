"""DOCSTRING"""

from __future__ import annotations

from llmjudge.parsing.common import (
    CUT_OFF,
    CUT_OFF_REASONING,
    EMPTY,
    NO_VERDICT,
    OK,
    OUT_OF_SCALE,
    PARSER_ERROR,
    REASONS,
    REFUSAL_PATTERNS,
    REFUSED,
    TWO_VERDICTS,
    UNPARSEABLE,
    ParsedChoice,
    ParsedScore,
)
from llmjudge.parsing.pairwise import parse_pairwise
from llmjudge.parsing.reasoning import split_reasoning
from llmjudge.parsing.scores import parse_score

# Bump when a change can turn the same text into a different result; stored with every LLM rating
# so old ratings can be re-parsed or told apart.
# 2: a dash right before a number is its sign, not a separator ("[RESULT] -1" was read as 1).
# 3: a pairwise answer that is only the choice ("A", "**B**", "Story B.") is read as that choice.
# 4: issue 15, read as a careful human: final verdicts, the aspect asked about, label and number
#    words, markdown, counts skipped, refusals that mention numbers, pairwise prose, "A or B".
# 5: issue 24: the reasoning trace split off and never scored, final markers, several aspects, ten
#    languages, glyphs, "X of Y" in any language, reasons for unparseable answers, pairwise [[A>B]] forms.
PARSER_VERSION = "5"

__all__ = [
    "CUT_OFF",
    "CUT_OFF_REASONING",
    "EMPTY",
    "NO_VERDICT",
    "OK",
    "OUT_OF_SCALE",
    "PARSER_ERROR",
    "PARSER_VERSION",
    "REASONS",
    "REFUSAL_PATTERNS",
    "REFUSED",
    "TWO_VERDICTS",
    "UNPARSEABLE",
    "ParsedChoice",
    "ParsedScore",
    "parse_pairwise",
    "parse_score",
    "split_reasoning",
]
