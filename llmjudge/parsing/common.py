"""What the score and the pairwise parser share: the typed results, refusals, numbers, markdown.

Pure, no Django. See ``llmjudge.parsing`` for the rules in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OK = "ok"
UNPARSEABLE = "unparseable"
REFUSED = "refused"


@dataclass(frozen=True)
class ParsedScore:
    score: float | None
    status: str  # "ok" | "unparseable" | "refused"
    rationale: str
    # Structured account of how the score came about, kept with the attempt in the rating's history
    # (e.g. a role-player panel's votes and confidences). None for a plain parse.
    details: dict[str, Any] | None = None
    # Why the answer got its status when that is not the parser's ordinary reading ("parser error":
    # the parser raised); "" when the answer was read as usual. Stored on the rating (LLMRating.reason).
    reason: str = ""


@dataclass(frozen=True)
class ParsedChoice:
    choice: str | None  # "A" | "B" | "tie" | None
    status: str
    rationale: str
    reason: str = ""  # as ParsedScore.reason


FLAGS = re.IGNORECASE

# Stems, so "rating", "scoring" and "choosing" count as well as "rate", "score" and "choose".
_REFUSE_VERBS = r"(?:provid|giv|assign|offer|mak|rat|evaluat|assess|judg|scor|grad|choos|compar|pick)\w*"
REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, FLAGS)
    for p in (
        (
            r"\bas an ai\b(?:[ -](?:language model|assistant|model|system))?,?\s+i\b[^.\n]{0,40}?"
            r"\b(?:cannot|can't|can not|don't|do not|am not able|am unable|lack|have no)\b"
        ),
        (
            r"\bi(?:'m| am) sorry,?\s+(?:but\s+)?i\s+(?:cannot|can't|can not|am unable|am not able|"
            r"won't|will not)\b"
        ),
        (
            r"\bi(?:'m|'d|\s+am|\s+would)?\s+(?:cannot|can't|can not|unable to|not able to|won't|will not|"
            r"must decline to|have to decline to|(?:do not|don't) feel comfortable|not comfortable|rather not)\s+"
            r"(?:in good conscience\s+|\w+\s+)?" + _REFUSE_VERBS + r"\b"
        ),
        r"\bi\s+(?:must|have to|will)\s+(?:respectfully\s+)?decline\b",
        r"\b(?:content|usage|safety)\s+polic(?:y|ies)\b",
        r"\bviolates?\b[^.\n]{0,40}\bpolic(?:y|ies)\b",
        (
            r"\bi\s+(?:do not|don't)\s+have\s+(?:personal\s+)?(?:preferences|opinions|feelings|"
            r"emotions|experiences?|tastes?|the ability to (?:enjoy|experience|feel))\b"
        ),
        (
            r"\b(?:cannot|can't|unable to|not able to)\s+(?:experience|feel)\s+"
            r"(?:enjoyment|emotions?|pleasure|entertainment)\b"
        ),
    )
)


def is_refusal(text: str) -> bool:
    return any(p.search(text) for p in REFUSAL_PATTERNS)


WORDS = {
    "zero": 0.0,
    "one": 1.0,
    "two": 2.0,
    "three": 3.0,
    "four": 4.0,
    "five": 5.0,
    "six": 6.0,
    "seven": 7.0,
    "eight": 8.0,
    "nine": 9.0,
    "ten": 10.0,
}
WORD_ALT = "|".join(WORDS)
_DIGITS = r"[-\u2212]?\d+(?:\.\d+)?(?!\w)(?!\.\d)"
# A number word counts only when what follows looks like the end of a score ("a four.", "four out
# of five", "four stars"), so "give this one a four" skips "one".
_WORD_NUM = (
    rf"(?:{WORD_ALT})(?:\s+and\s+a\s+half)?\b"
    r"(?=\s*(?:[.,;:!?)\]*_]|stars?\b|points?\b|out\s+of\b|/|\n|\Z))"
)
NUM = rf"(?<![\w.])(?P<num>{_DIGITS}|{_WORD_NUM})"
WORD_NUM = rf"(?P<num>{_WORD_NUM})"
DEN_BODY = rf"\s*+(?:/|out\s+of)\s*+(?P<den>\d+(?:\.\d+)?(?!\w)|(?:{WORD_ALT})\b)"
DEN = rf"(?:{DEN_BODY})?"

# The gap between a verdict verb and its number may not cross a sentence end, a digit, or a word
# that turns the sentence around ("I cannot give a rating because the 3 characters ...").
GAP = (
    r"(?:(?!\b(?:because|since|but|however|although|not|cannot|can't|unable|if|when|unless)\b)"
    r"[^.\n\d!?;]){0,60}?"
)

RESULT_MARK = re.compile(r"\[\s*result\s*\]", FLAGS)
_FEEDBACK_PREFIX = re.compile(r"^\s*(?:#+\s*)?\**feedback\**\s*:?\**\s*", FLAGS)
# Markdown emphasis and code marks: "**[RESULT]** 4", "[RESULT] **4**", "`4`" read as their text.
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)|\*|`")
# "would not give it a 5", "I wouldn't choose A": a verdict under negation is not the verdict.
# "I would not hesitate to give it a 5" is a 5.
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bno|\bnor|\bneither)\s+(?!hesitate)(?:\w+\s+){0,2}\Z", FLAGS)
_SENTENCE_START = re.compile(r"[.!?;\n]\s")
_CONDITIONAL = re.compile(r"\b(?:if|were|might|could|would have|hypothetically)\b", FLAGS)


def plain(text: str) -> str:
    return _EMPHASIS.sub("", text)


def to_number(token: str) -> float | None:
    token = token.strip().lower().replace("\u2212", "-")
    half = 0.0
    if token.endswith("half"):
        half = 0.5
        token = token.split()[0]
    if token in WORDS:
        return WORDS[token] + half
    try:
        return float(token)
    except ValueError:
        return None


def fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def feedback_before(text: str, end: int) -> str:
    """The rationale of a ``[RESULT]`` answer: the feedback before the marker, its label and marks cut."""
    return _FEEDBACK_PREFIX.sub("", text[:end], count=1).strip().rstrip("*_").strip()


def is_negated(text: str, start: int) -> bool:
    return _NEGATED.search(text[max(0, start - 30) : start]) is not None


def sentence_at(text: str, pos: int) -> str:
    """The sentence (or clause after ';') that holds position ``pos``."""
    starts = [m.end() for m in _SENTENCE_START.finditer(text, 0, pos)]
    begin = starts[-1] if starts else 0
    end_match = _SENTENCE_START.search(text, pos)
    return text[begin : end_match.start() + 1 if end_match else len(text)]


def is_conditional(text: str, pos: int) -> bool:
    """A verdict in an "if it were ..., I might give it a 3" sentence is hypothetical."""
    return _CONDITIONAL.search(sentence_at(text, pos)) is not None
