"""Prepare an answer for reading: a bounded window, one form for digits and glyphs, the question's echoes cut.

Pure. Each step keeps a number's meaning and drops what cannot be a rating:

- ``window``: the verdict is searched in the first 2 KB and the last 6 KB of an answer, plus the last two
  explicit final markers ("Final score: 2", ``\\boxed{2}``, ``[[A>B]]``) of the middle with their context, so
  a megabyte of text costs what 8 KB and one linear search cost (judges put their verdict at the start or
  the end, or mark it; the reasoning trace, whatever its length, is split off by ``str.find``).
- ``glyphs``: full-width digits and punctuation, circled digits, keycaps ("4️⃣", "🔟"), decimal commas ("3,5"),
  curly quotes, and star runs ("★★★½☆" -> "3.5/5", "⭐⭐⭐⭐" -> "4").
- ``prepare``: all of it, number words in a verdict's place as digits ("four out of five"), then blanks the scale's
  range ("1-5", "1 to 10", "1から5"), "with 1 being the lowest", format placeholders ("<1-5>", "[your score here]",
  "Score: N"), a format example ("Example: Score: 5"), instructions repeated from the prompt, the question text
  itself, a reference answer's "(Score 5)", "title 1"/"title 2" in adversarial studies, markdown emphasis and the
  markers of a numbered list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from llmjudge.parsing.common import fmt
from llmjudge.parsing.lexicon import FOLDED, LETTER, Lazy, fold, words_to_digits

HEAD = 2_048
TAIL = 6_144

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


# Around a final marker found in the skipped middle, this much context is kept: enough for the checks that
# look around a verdict (a negation before it, "would ..." or "if ..." after it, its sentence).
BEFORE_MARKER = 240
AFTER_MARKER = 160
MARKERS_KEPT = 2
# How many places of one key word are checked, from the end of the middle backwards.
KEY_TRIES = 8
MIDDLE_MAX = 262_144


@dataclass(frozen=True)
class Finals:
    """The explicit final markers searched in the skipped middle of a long answer: their patterns (on folded
    text), and literal words one of which every match holds, so that the middle is scanned by ``str.rfind``
    and a pattern only runs on a few hundred characters around each place found."""

    patterns: tuple[Lazy, ...] = ()
    keys: tuple[str, ...] = ()


def _marker_hits(low: str, finals: Finals, start: int, stop: int) -> list[int]:
    hits = set()
    for key in finals.keys:
        end = stop
        for _ in range(KEY_TRIES):
            at = low.rfind(key, start, end)
            if at < 0:
                break
            begin, until = max(start, at - 80), min(stop, at + 120)
            found = [m.start() for p in finals.patterns for m in p.finditer(low, begin, until)]
            if found:
                hits.add(max(found))
                break
            end = at + len(key) - 1
    return sorted(hits)[-MARKERS_KEPT:]


def window(text: str, finals: Finals | None = None) -> str:
    """The first ``HEAD`` and last ``TAIL`` characters of a long answer; between them, the last
    ``MARKERS_KEPT`` explicit final markers of the skipped middle, with their context, so that "Final score:
    2" 4 KB into an 11 KB answer is not lost to an early "I'd give it a 4"."""
    if len(text) <= HEAD + TAIL:
        return text
    stop = len(text) - TAIL
    pieces = []
    if finals is not None:
        end = HEAD
        # Stored answers are at most 256 KB (LLM_ANSWER_MAX_BYTES): the middle is searched that far back only.
        first = max(HEAD, stop - MIDDLE_MAX)
        for found in _marker_hits(fold(text[first:stop]), finals, 0, stop - first):
            start = first + found
            begin = max(end, start - BEFORE_MARKER)
            end = min(stop, start + AFTER_MARKER)
            if begin < end:
                pieces.append(text[begin:end])
    return "\n\n".join([text[:HEAD], *pieces, text[-TAIL:]])


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
    FOLDED,
)
_GENERIC_LABELS = r"lowest|highest|worst|best|strongly\s+(?:dis)?agree"
_ADVERSARIAL = re.compile(r"\btitle\s*+#?\s*+[12]\b", FOLDED)
_RANGE_JOIN = r"(?:-|\u2013|\u2014|~|\u301c|\uff5e|to|and|bis|und|a|à|até|e|et|y|до|и|から|到|至|에서|와|과)"
_UNIT = r"(?:[^\S\n]*(?:分|点|점))?"
# "<1-5>", "<your score>"; not a tag that holds a number ("<fluency>4</fluency>" in a "<scores>" block).
_PLACEHOLDER = re.compile(
    r"<(?!/?(?:answer|score|rating|grade|feedback|think|thinking)\b)"
    r"(?!(?P<tag>[^\W\d_][\w-]{0,30})>\s*+\d[\d.]*\s*+</(?P=tag)>)[^<>\n]{1,40}>|\[\s*your\b[^\]\n]{0,60}\]"
)
# "Score: X/5", "Score: [X]/5", "where N is an integer": a capital letter standing for the number (read on the
# original case); in brackets, its denominator goes with it.
_LETTER_PLACEHOLDER = re.compile(r"[XNY](?<![\w/][XNY])(?:(?<=\[[XNY])\])?(?:\s*/\s*\d+)?(?![\w/])")
# A line that repeats the prompt's instructions: its numbers are the prompt's, not the judge's.
_INSTRUCTION = re.compile(
    r"^[^\S\n]*(?:please\s+rate|rate\s+the\s+following|respond\b|output\s+format|format\s*:|answer\s+with|"
    r"provide\s+your|your\s+(?:response|answer)\s+(?:should|must))[^\n]*",
    FOLDED | re.MULTILINE,
)
# "Example: Score: 5", "(e.g. \"Rating: 4/5\")", "Beispiel: Note: 2": a format example echoed from the prompt.
_EXAMPLE_VERDICT = re.compile(
    r"(?<!\w)(?:example|e\.\s*g\.|for\s+example|for\s+instance|ejemplo|exemplo|exemple|esempio|beispiel|пример|例如|示例|例)"
    r"(?:[^\S\n]+(?:output|format|answer|response|de\s+respuesta|de\s+resposta))?[^\S\n]*+[:,]?[^\S\n]*+[\"'(\[{]?"
    r"[^\S\n]*+[\"']?[^\W\d_]{1,20}(?:[^\S\n]+[^\W\d_]{1,20}){0,2}[\"']?[^\S\n]*+[:=][^\S\n]*+\d+(?:\.\d+)?(?:[^\S\n]*+/[^\S\n]*+\d+)?",
    FOLDED,
)
_REFERENCE_SCORE = re.compile(r"\breference(?:\s+answer)?\s*[(\[]\s*score\s*\d+\s*[)\]]", FOLDED)
# Markdown emphasis and code marks: "**[RESULT]** 4", "[RESULT] **4**", "`4`" read as their text.
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)|\*|`")
_LIST_MARKER = re.compile(r"^[ \t]*(\d+)[.)][ \t]+(?=\S)", re.MULTILINE)
# What the judge took back while writing: struck-through text ("~~4~~ 3", "<del>4</del> 3") and the first number of
# a revision arrow ("3 \u2192 4", "3/5 -> 4/5"), which reads as the number the arrow points to.
_STRUCK = re.compile(r"~~[^~\n]{1,80}~~|<(?P<tag>s|del|strike)>[^<\n]{1,80}</(?P=tag)>", FOLDED)
# Digits only on each side: "A -> B" is a pairwise verdict's business.
_ARROW = re.compile(
    r"(?<![\d.])(?P<from>\d+(?:\.\d+)?)(?:[^\S\n]*+/[^\S\n]*+\d+)?[^\S\n]*+(?:\u2192|\u27f6|\u21d2|\u2794|\u279d|->|=>)"
    r"[^\S\n]*+(?P<to>\d+(?:\.\d+)?)(?![\d.])",
    FOLDED,
)


@lru_cache(maxsize=64)
def _scale_range(low: float, high: float) -> re.Pattern[str]:
    """The scale's own range, "1-5", "1 (lowest) to 5 (highest)", "1から5", "от 1 до 5": not a verdict."""
    lo, hi = re.escape(fmt(low)), re.escape(fmt(high))
    gloss = r"(?:\s*\([^)\n]{0,30}\))?"
    return re.compile(rf"{lo}(?<![\d.]{lo}){_UNIT}{gloss}\s*{_RANGE_JOIN}\s*{hi}{_UNIT}{gloss}(?![{LETTER}]|\.\d)")


@lru_cache(maxsize=64)
def _glossed(label_words: str) -> re.Pattern[str]:
    labels = "|".join(filter(None, [_GENERIC_LABELS, label_words]))
    return re.compile(rf"\d\s*(\((?:{labels})\))")


@dataclass(frozen=True)
class Prepared:
    """An answer ready to read. ``text`` and ``low`` have the same length and positions: ``low`` is the
    case-folded copy the patterns read, ``text`` keeps the case a few checks need ("A" vs "a", a capital
    after a number). Echoes and markup are blanked with spaces rather than cut, to keep the positions.
    ``marked`` is ``low`` before the markdown emphasis was blanked (for "**4**")."""

    text: str
    low: str
    marked: str
    is_list: bool


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _echo_spans(text: str, low: str, options: EchoOptions) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    question = fold(options.question.strip())
    if question:
        spans += [m.span() for m in re.finditer(re.escape(question), low)]
    for pattern in (
        _INSTRUCTION,
        _PLACEHOLDER,
        _REFERENCE_SCORE,
        _EXAMPLE_VERDICT,
        _scale_range(options.low, options.high),
        _BEING,
    ):
        spans += [m.span() for m in pattern.finditer(low)]
    spans += [m.span() for m in _LETTER_PLACEHOLDER.finditer(text)]
    # A scale label after a number is a gloss: "5 (highest)" reads as 5.
    spans += [m.span(1) for m in _glossed(options.label_words).finditer(low)]
    if options.adversarial:
        spans += [m.span() for m in _ADVERSARIAL.finditer(low)]
    return spans


def _withdrawn_spans(low: str, options: EchoOptions) -> list[tuple[int, int]]:
    """Struck-through text and the number a revision arrow leaves ("3 \u2192 4" reads 4); the scale's own range
    written with an arrow ("1 -> 5") is an echo, not a revision."""
    spans = [m.span() for m in _STRUCK.finditer(low)]
    for match in _ARROW.finditer(low):
        ends = (float(match.group("from")), float(match.group("to")))
        if ends != (options.low, options.high):
            spans.append((match.start(), match.start("to")))
    return spans


@dataclass(frozen=True)
class EchoOptions:
    low: float = 1
    high: float = 5
    adversarial: bool = False
    label_words: str = ""  # the study's scale label words, as a regex alternation
    question: str = ""


def prepare(
    answer: str, options: EchoOptions, letters: Callable[[str], str] | None = None, finals: Finals | None = None
) -> Prepared:
    """The window of ``answer`` (with the ``finals`` markers of its middle), glyphs normalised (and ``letters``
    applied), its echoes and markup blanked."""
    text = glyphs(window(answer, finals))
    if letters is not None:
        text = letters(text)
    low = words_to_digits(fold(text))
    spans = _echo_spans(text, low, options) + _withdrawn_spans(low, options)
    text, marked = _blank(text, spans), _blank(low, spans)
    markup = [m.span() for m in _EMPHASIS.finditer(marked)]
    markers = list(_LIST_MARKER.finditer(marked))
    is_list = {"1", "2"} <= {m.group(1) for m in markers}
    if is_list:
        # A numbered list ("1. Grammar ...", "2. Flow ...") loses its markers: they count items, not points.
        markup += [m.span() for m in markers]
    return Prepared(_blank(text, markup), _blank(marked, markup), marked, is_list)
