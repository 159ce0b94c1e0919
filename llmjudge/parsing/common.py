"""What the score and the pairwise parser share: the typed results, the reasons, sentences and negation.

Pure, no Django. See ``llmjudge.parsing`` for the rules in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from llmjudge.parsing.lexicon import FLAGS, FOLDED, LEX, NEGATION, Lazy

OK = "ok"
UNPARSEABLE = "unparseable"
REFUSED = "refused"

# Why an answer is unparseable ("" for ok and refused answers). The run page and ``reparse`` count by these.
EMPTY = "empty"
NO_VERDICT = "no verdict"
TWO_VERDICTS = "two verdicts"
OUT_OF_SCALE = "out of scale"
CUT_OFF_REASONING = "cut off while reasoning"
CUT_OFF = "cut off"
PARSER_ERROR = "parser error"
REASONS = (EMPTY, NO_VERDICT, TWO_VERDICTS, OUT_OF_SCALE, CUT_OFF_REASONING, CUT_OFF, PARSER_ERROR)


@dataclass(frozen=True)
class ParsedScore:
    score: float | None
    status: str  # "ok" | "unparseable" | "refused"
    rationale: str
    # Structured account of how the score came about, kept with the attempt in the rating's history
    # (e.g. a role-player panel's votes and confidences). None for a plain parse.
    details: dict[str, Any] | None = None
    reason: str = ""  # one of REASONS when unparseable, else ""
    reasoning: str = ""  # the model's reasoning trace, split off the answer and never scored


@dataclass(frozen=True)
class ParsedChoice:
    choice: str | None  # "A" | "B" | "tie" | None
    status: str
    rationale: str
    reason: str = ""
    reasoning: str = ""


REFUSAL_PATTERNS: tuple[Lazy, ...] = LEX.refusals

RESULT_MARK = re.compile(r"\[\s*result\s*(?:\]|:)", FLAGS)
_FEEDBACK_PREFIX = re.compile(r"^\s*(?:#+\s*)?\**feedback\**\s*:?\**\s*", FLAGS)
# "would not give it a 5", "I wouldn't choose A", "ni siquiera un 1": a verdict under negation is not the
# verdict. "I would not hesitate to give it a 5" is a 5.
_NEGATED = Lazy(rf"{NEGATION}\s+(?!hesitate)(?:\w+\s+){{0,2}}\Z", FOLDED)
# A sentence ends at . ! ? ; or a line break; Chinese and Japanese put no space after their full stop.
SENTENCE_END = Lazy(r"[.!?;](?:\s|(?=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]))|\n")
_CONDITIONAL = Lazy(LEX.conditionals, FOLDED)


def fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def last_result_mark(answer: str) -> int:
    """Where the answer's last ``[RESULT]`` marker starts (its length when it has none); looks at the last 8 KB
    first, so that a megabyte of markers costs what 8 KB cost."""
    tail = max(0, len(answer) - 8_192)
    marks = list(RESULT_MARK.finditer(answer, tail)) or list(RESULT_MARK.finditer(answer, 0, tail + 16))
    return marks[-1].start() if marks else len(answer)


def feedback_before(text: str, end: int) -> str:
    """The rationale of a ``[RESULT]`` answer: the feedback before the marker, its label and marks cut."""
    return _FEEDBACK_PREFIX.sub("", text[:end], count=1).strip().rstrip("*_").strip()


# The helpers below read the case-folded text (``lexicon.fold``).


def is_negated(text: str, start: int) -> bool:
    return _NEGATED.search(text[max(0, start - 30) : start]) is not None


def sentence_at(text: str, pos: int) -> str:
    """The sentence (or clause after ';') that holds position ``pos``; looks at most 400 characters each way."""
    low = max(0, pos - 400)
    starts = [m.end() for m in SENTENCE_END.finditer(text, low, pos)]
    begin = starts[-1] if starts else low
    end_match = SENTENCE_END.search(text, pos, pos + 400)
    return text[begin : end_match.start() + 1 if end_match else min(len(text), pos + 400)]


def is_conditional(text: str, pos: int) -> bool:
    """A verdict in an "if it were ..., I might give it a 3" or "even a 1 ..." sentence is hypothetical."""
    return _CONDITIONAL.search(sentence_at(text, pos)) is not None


_CONTRAST_WORD = Lazy(LEX.contrasts, FOLDED)
# What may stand on a line before a verdict: markup and a short label, no sentence ("**Score:** ", "My final
# verdict is: ").
_LINE_LABEL = Lazy(r"[^\S\n]*+[#>*_\-\s]*+(?:[^\W\d_][^.!?\n]{0,30})?\Z", FOLDED)


def set_apart(text: str, refusal_end: int, start: int, *, own_line: bool) -> bool:
    """A verdict at ``start``, after a refusal that ends at ``refusal_end``, is the answer's own only when a
    contrast turns the answer round ("I can't comment on X, but I'd give it a 4") or, with ``own_line``, when
    it opens a line of its own ("...decline to judge the dosage.\nScore: 2"); a sentence end alone does not
    set apart a number that goes on explaining the refusal ("I cannot rate this. 2/5 would mislead")."""
    if _CONTRAST_WORD.search(text, refusal_end, start) is not None:
        return True
    line = text.rfind("\n", refusal_end, start)
    return own_line and line >= 0 and _LINE_LABEL.match(text, line + 1, start) is not None


_SENTENCE_REST = Lazy(r"[^.!?\n]{0,200}")
_TAKEN_BACK = Lazy(r"\bwould\b|\bwäre\b|sería|serait|sarebbe|seria|было\s+бы|也不|都不|也会|误导|misleading", FOLDED)


def taken_back(text: str, start: int) -> bool:
    """The rest of the sentence from ``start`` takes its verdict back ("I would give it 2/5, but that would be
    misleading", "我给2分也不公平")."""
    rest = _SENTENCE_REST.match(text, start)
    return rest is not None and _TAKEN_BACK.search(rest.group(0)) is not None


def own_sentence(text: str, after: int, start: int) -> bool:
    """A sentence end lies between ``after`` (a refusal's end) and ``start`` (a verdict), and the verdict's
    sentence does not take it back."""
    return SENTENCE_END.search(text, after, start) is not None and not taken_back(text, start)

