"""Prepare an answer for reading: a bounded window, one form for digits and glyphs, the question's echoes cut.

Pure. Each step keeps a number's meaning and drops what cannot be a rating:

- ``window``: the verdict is searched in the first 4 KB and the last 12 KB of an answer only, so a megabyte of
  text costs what 16 KB cost (judges put their verdict at the start or the end; the reasoning trace is split
  off before, by ``str.find``).
- ``glyphs``: full-width digits and punctuation, circled digits, keycaps ("4️⃣", "🔟"), decimal commas ("3,5"),
  curly quotes, and star runs ("★★★½☆" -> "3.5/5", "⭐⭐⭐⭐" -> "4").
- ``remove_echoes``: the scale's range ("1-5", "1 to 10", "1から5"), "with 1 being the lowest", format
  placeholders ("<1-5>", "[your score here]", "Score: N"), instructions repeated from the prompt, the question
  text itself, a reference answer's "(Score 5)", and "title 1"/"title 2" in adversarial studies.
"""

from __future__ import annotations

import re

from llmjudge.parsing.common import fmt
from llmjudge.parsing.lexicon import FLAGS, LETTER, LEX

HEAD = 4_096
TAIL = 12_288

_TRANSLATE: dict[int, str] = {
    **{0xFF10 + d: str(d) for d in range(10)},
    **{0xFF21 + i: chr(0x41 + i) for i in range(26)},
    **{0xFF41 + i: chr(0x61 + i) for i in range(26)},
    **{0x2460 + i: str(i + 1) for i in range(20)},  # circled digits ① ... ⑳
    0xFF0F: "/",
    0xFF1A: ":",
    0xFF0E: ".",
    0xFF08: "(",
    0xFF09: ")",
    0xFF0C: ",",
    0xFF1B: ";",
    0xFF01: "!",
    0xFF1F: "?",
    0xFF1D: "=",
    0xFF05: "%",
    0x3002: ".",
    0x2026: "...",
    0x2018: "'",
    0x2019: "'",
    0x201C: '"',
    0x201D: '"',
    0x2212: "-",
    0xFE0F: "",  # emoji variation selector: "⭐️" is "⭐"
}
_KEYCAP = re.compile("(\\d)\u20e3")
_HALF = re.compile(r"(\d)[^\S\n]*\u00bd")
_FILLED = "\u2605\u2b50\U0001f31f\u272d\u272e"  # ★ ⭐ 🌟 ✭ ✮
_EMPTY = "\u2606\u2729"  # ☆ ✩
_STAR_RUN = re.compile(f"[{_FILLED}{_EMPTY}\u00bd]{{2,}}")
# "3,5 de 5", "Endnote: 2,5": a decimal comma before a half or whole point; "3,000" and "1, 2" stay.
_DECIMAL_COMMA = re.compile(r"(?<![\d.,])(\d{1,2}),([05])(?![\d,])")


def window(text: str) -> str:
    if len(text) <= HEAD + TAIL:
        return text
    return text[:HEAD] + "\n\n" + text[-TAIL:]


def _stars(match: re.Match[str]) -> str:
    run = match.group(0)
    filled = sum(run.count(c) for c in _FILLED)
    half = run.count("\u00bd")
    empty = sum(run.count(c) for c in _EMPTY)
    if filled + half == 0:
        return run
    value = fmt(filled + 0.5 * half)
    return f" {value}/{filled + half + empty} " if empty else f" {value} "


def glyphs(text: str) -> str:
    text = text.translate(_TRANSLATE).replace("\U0001f51f", "10")
    text = _KEYCAP.sub(r"\1", text)
    text = _HALF.sub(r"\1.5", text)
    text = _STAR_RUN.sub(_stars, text)
    return _DECIMAL_COMMA.sub(r"\1.\2", text)


_ECHO_END = r"(?:the\s+)?(?:strongly\s+)?(?:lowest|highest|worst|best|poorest|agree|disagree|poor|excellent)\b"
# "being" only occurs in echoed scale explanations; "is"/"means"/"=" only count after "where", "with",
# "and", "(" or "," so that "I think 4 is the best fit" keeps its score.
_BEING = re.compile(
    r"\b(?:with\s+|where\s+|and\s+)?\d+(?:\.\d+)?\s+being\s+"
    + _ECHO_END
    + r"|(?:\b(?:where|with|and)\b|[(,])\s*\d+(?:\.\d+)?\s+(?:is|means|=)\s+"
    + _ECHO_END,
    FLAGS,
)
_GENERIC_LABELS = r"lowest|highest|worst|best|strongly\s+(?:dis)?agree"
_ADVERSARIAL = re.compile(r"\btitle\s*+#?\s*+[12]\b", FLAGS)
_RANGE_JOIN = r"(?:-|\u2013|\u2014|~|\u301c|\uff5e|to|and|bis|und|a|à|até|e|et|y|до|и|から|到|至|에서|와|과)"
_UNIT = r"(?:[^\S\n]*(?:分|点|점))?"
_PLACEHOLDER = re.compile(
    r"<(?!/?(?:answer|score|rating|grade|feedback|think|thinking)\b)[^<>\n]{1,40}>"
    r"|\[\s*your\b[^\]\n]{0,60}\]"
    r"|(?<![\w/])(?-i:[XNY])(?:\s*/\s*\d+)?(?![\w/])",
    FLAGS,
)
# A line that repeats the prompt's instructions: its numbers are the prompt's, not the judge's.
_INSTRUCTION = re.compile(
    r"^[^\S\n]*(?:please\s+rate|rate\s+the\s+following|respond\b|output\s+format|format\s*:|answer\s+with|"
    r"provide\s+your|your\s+(?:response|answer)\s+(?:should|must))[^\n]*",
    FLAGS | re.MULTILINE,
)
_REFERENCE_SCORE = re.compile(r"\breference(?:\s+answer)?\s*[(\[]\s*score\s*\d+\s*[)\]]", FLAGS)


def remove_echoes(
    text: str,
    *,
    scale_min: float,
    scale_max: float,
    adversarial: bool = False,
    label_words: str = "",
    question: str = "",
) -> str:
    """Cut the parts of an answer that repeat the question, because their numbers are not scores.

    A scale label after a number ("5 (highest)") is a gloss: the label goes, the number stays.
    """
    if question.strip():
        text = re.sub(re.escape(question.strip()), " ", text, flags=FLAGS)
    text = _INSTRUCTION.sub(" ", text)
    text = _PLACEHOLDER.sub(" ", text)
    text = _REFERENCE_SCORE.sub(" ", text)
    lo, hi = re.escape(fmt(scale_min)), re.escape(fmt(scale_max))
    gloss = r"(?:\s*\([^)\n]{0,30}\))?"
    text = re.sub(
        rf"(?<![\d.]){lo}{_UNIT}{gloss}\s*{_RANGE_JOIN}\s*{hi}{_UNIT}{gloss}(?![{LETTER}]|\.\d)",
        " ",
        text,
        flags=FLAGS,
    )
    text = _BEING.sub(" ", text)
    labels = "|".join(filter(None, [_GENERIC_LABELS, label_words]))
    text = re.sub(rf"(\d)\s*\((?:{labels})\)", r"\1", text, flags=FLAGS)
    if adversarial:
        text = _ADVERSARIAL.sub(" ", text)
    return text


_LIST_MARKER = re.compile(r"^[ \t]*(\d+)[.)][ \t]+(?=\S)", re.MULTILINE)


def strip_list_markers(text: str) -> tuple[str, bool]:
    """A numbered list ("1. Grammar ...", "2. Flow ...") loses its markers: they count items, not points."""
    markers = {m.group(1) for m in _LIST_MARKER.finditer(text)}
    if {"1", "2"} <= markers:
        return _LIST_MARKER.sub("", text), True
    return text, False

