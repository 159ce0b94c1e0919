"""Turn a judge model's free-text answer into a score (or an honest "could not").

Pure functions, no Django: the judging service stores the typed result, the tests feed it a table
of real-looking answers. Unparseable is a status, never a guess (STYLE.md rule 8), so nothing here
clips, rescales or re-samples.

How ``parse_score`` decides, in order:

1. Empty or whitespace-only text -> ``unparseable``.
2. Question echoes are cut first because they carry numbers that are not scores: the scale range
   (``1-5``, ``1 - 5``, ``1 to 5``, generalised to the study's scale), "with 1 being the lowest",
   "5 being strongly agree", "1 (lowest)", "where 1 is the lowest"; for adversarial studies also
   "title 1" / "title 2" (Chiang & Lee 2023, appendix D.2.1).
3. Explicit score formats win over the paper's first-number rule, in this priority:
   JSON answer (keys score/rating/grade, also inside a ```json fence) > Prometheus ``[RESULT] 4``
   (last marker; a marker with no score after it makes the answer unparseable rather than letting a
   number from the feedback stand in) > FastChat ``[[4]]`` > a label ("Score: 4", "Rating: 3.5/5",
   "[SCORE 5]", "**Rating:** 4") > bold ``**4**`` > "4 out of 5" / "4/5" (denominator equal to the
   scale maximum) > a rating verb ("I would rate it a 4", "I'd give it a four", "I'd say 4") > a
   number at the very start of the answer followed by punctuation or a line break ("4. The story
   is ...", "Four out of five.").
   Number words (zero..ten, "four and a half") count only inside these explicit formats, because
   "one" in prose ("one of the best") is not a score.
4. Otherwise the paper's rule: remove "out of <max>" and "/<max>", take the first number left.
   Numbers that cannot be scores are skipped rather than taken: parts of words ("GPT-2", "3rd"),
   percentages, thousands separators and times ("3,000", "10:30"), and integers of four or more
   digits (years such as "in 1999"). A range answer "3-4" gives 3, as the paper's regex did.
5. List markers: when the answer is a numbered list (lines starting "1." and "2."), the markers
   are removed and never read as scores; a single leading "4." is the explain-variant answer
   ("4. The story is ...") and is the score.
6. A number followed by a denominator other than the scale maximum ("4/10", "8 out of 10" on a
   1-5 scale) is a score on another scale: ``unparseable``. Any score outside
   ``[scale_min, scale_max]`` is ``unparseable``; half points and other in-range decimals are kept.
7. Refusals: if a refusal phrase (``REFUSAL_PATTERNS``) is present, only an explicit format of
   step 3 may still yield a score ("As an AI I don't have feelings, but I would rate it 4" -> 4);
   the bare first-number fallback is not used, since a number after a refusal is rarely a score.
   Without an explicit score the answer is ``refused``.

The rationale is the feedback before ``[RESULT]``, the explanation field of a JSON answer, and the
whole answer stripped otherwise.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Bump when a change can turn the same text into a different result; stored with every LLM rating
# so old ratings can be re-parsed or told apart.
# 2: a dash right before a number is its sign, not a separator ("[RESULT] -1" was read as 1).
# 3: a pairwise answer that is only the choice ("A", "**B**", "Story B.") is read as that choice.
PARSER_VERSION = "3"

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


@dataclass(frozen=True)
class ParsedChoice:
    choice: str | None  # "A" | "B" | "tie" | None
    status: str
    rationale: str


_FLAGS = re.IGNORECASE

REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, _FLAGS)
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
            r"\bi\s+(?:cannot|can't|can not|am unable to|am not able to|won't|will not)\s+"
            r"(?:provide|give|assign|offer|make|rate|evaluate|assess|judge|score)\b"
        ),
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

_WORDS = {
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
_WORD_ALT = "|".join(_WORDS)
_DIGITS = r"[-\u2212]?\d+(?:\.\d+)?(?!\w)(?!\.\d)"
# A number word counts only when what follows looks like the end of a score ("a four.", "four out
# of five", "four stars"), so "give this one a four" skips "one".
_WORD_NUM = (
    rf"(?:{_WORD_ALT})(?:\s+and\s+a\s+half)?\b"
    r"(?=\s*(?:[.,;:!?)\]*_]|stars?\b|points?\b|out\s+of\b|/|\n|\Z))"
)
_NUM = rf"(?<![\w.])(?P<num>{_DIGITS}|{_WORD_NUM})"
_DEN_BODY = rf"\s*+(?:/|out\s+of)\s*+(?P<den>\d+(?:\.\d+)?(?!\w)|(?:{_WORD_ALT})\b)"
_DEN = rf"(?:{_DEN_BODY})?"

_RESULT_MARK = re.compile(r"\[\s*result\s*\]", _FLAGS)
_RESULT = re.compile(
    r"\[\s*result\s*\]\s*+(?:[:=]|-(?!\d))?\s*+(?:score\s*+[:=]?\s*+)?[(\[]?\s*+" + _NUM + _DEN, _FLAGS
)
_DOUBLE_BRACKET = re.compile(r"\[\[\s*+" + _NUM + _DEN + r"\s*+\]\]", _FLAGS)
_LABELED = re.compile(
    r"(?<!\w)(?:(?:final|overall|total|my)\s+)?(?:score|rating|grade|result)\s*+[*_]*+\]?\s*+"
    r"(?:[:=]|-(?!\d)|\bis\b|\bof\b|\bwould\s+be\b)?\s*+[*_]*+\s*+[(\[]?\s*+" + _NUM + _DEN,
    _FLAGS,
)
_BOLD = re.compile(r"\*\*\s*+" + _NUM + _DEN + r"\s*+\*\*", _FLAGS)
_OUT_OF = re.compile(_NUM + _DEN_BODY, _FLAGS)
# The gap between the verb and the number may not cross a sentence end, a digit, or a word that
# turns the sentence around ("I cannot give a rating because the 3 characters ...").
_GAP = (
    r"(?:(?!\b(?:because|since|but|however|although|not|cannot|can't|unable|if|when|unless)\b)"
    r"[^.\n\d!?;]){0,60}?"
)
_RATE_VERB = re.compile(
    r"\b(?:rate|rated|rating|give|gave|giving|score|scored|assign|assigned|award|awarded|"
    r"i'd\s+say|i\s+would\s+say)\b" + _GAP + _NUM + _DEN,
    _FLAGS,
)
_LEADING = re.compile(
    r"\A[\s*_#>]*" + _NUM + _DEN + r"[^\S\n]*+(?:stars?\b)?(?:[^\S\n]|[*_])*+(?:[.:;,!)\-\u2013\u2014]|\n|\Z)",
    _FLAGS,
)
_EXPLICIT: tuple[re.Pattern[str], ...] = (_DOUBLE_BRACKET, _LABELED, _BOLD)

_LIST_MARKER = re.compile(r"^[ \t]*(\d+)[.)][ \t]+(?=\S)", re.MULTILINE)
_FALLBACK_NUM = re.compile(r"(?<![\w.\-/:,\u2212])([-\u2212]?\d+(?:\.\d+)?)(?![\w%])(?![.,:]\d)")
_AFTER_DEN = re.compile(r"\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?)(?!\w)", _FLAGS)
_ECHO_END = r"(?:the\s+)?(?:strongly\s+)?(?:lowest|highest|worst|best|poorest|agree|disagree|poor|excellent)\b"
# "being" only occurs in echoed scale explanations; "is"/"means"/"=" only count after "where",
# "with", "and", "(" or "," so that "I think 4 is the best fit" keeps its score.
_BEING = re.compile(
    r"\b(?:with\s+|where\s+|and\s+)?\d+(?:\.\d+)?\s+being\s+"
    + _ECHO_END
    + r"|(?:\b(?:where|with|and)\b|[(,])\s*\d+(?:\.\d+)?\s+(?:is|means|=)\s+"
    + _ECHO_END,
    _FLAGS,
)
_LABEL_ECHO = re.compile(r"\b\d+\s*\((?:lowest|highest|worst|best|strongly\s+(?:dis)?agree)\)", _FLAGS)
_ADVERSARIAL = re.compile(r"\btitle\s*+#?\s*+[12]\b", _FLAGS)
_JSON_FENCE = re.compile(r"```(?:json)?\s*+(.*?)```", _FLAGS | re.DOTALL)
_JSON_SCORE_KEYS = ("score", "rating", "grade")
_JSON_RATIONALE_KEYS = (
    "explanation",
    "rationale",
    "reason",
    "reasoning",
    "feedback",
    "justification",
    "comment",
)
_FEEDBACK_PREFIX = re.compile(r"^\s*(?:#+\s*)?\**feedback\**\s*:?\**\s*", _FLAGS)
# Bounds the work on pathological inputs (a page of "{"): a judge answer has one JSON object.
_MAX_JSON_STARTS = 20


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _to_number(token: str) -> float | None:
    token = token.strip().lower().replace("\u2212", "-")
    half = 0.0
    if token.endswith("half"):
        half = 0.5
        token = token.split()[0]
    if token in _WORDS:
        return _WORDS[token] + half
    try:
        return float(token)
    except ValueError:
        return None


def _in_scale(value: float, scale_min: float, scale_max: float) -> bool:
    # NaN compares False both ways, so it is never in the scale.
    return scale_min <= value <= scale_max


def _score_result(
    value: float | None,
    den: float | None,
    scale_min: float,
    scale_max: float,
    rationale: str,
) -> ParsedScore:
    if value is None or (den is not None and den != scale_max):
        return ParsedScore(None, UNPARSEABLE, rationale)
    if not _in_scale(value, scale_min, scale_max):
        return ParsedScore(None, UNPARSEABLE, rationale)
    return ParsedScore(value, OK, rationale)


def _from_match(match: re.Match[str], scale_min: float, scale_max: float, rationale: str) -> ParsedScore:
    den = match.group("den")
    return _score_result(
        _to_number(match.group("num")),
        _to_number(den) if den else None,
        scale_min,
        scale_max,
        rationale,
    )


def _remove_echoes(text: str, scale_min: float, scale_max: float, adversarial: bool) -> str:
    """Cut the parts of an answer that repeat the question, because their numbers are not scores."""
    lo, hi = re.escape(_fmt(scale_min)), re.escape(_fmt(scale_max))
    text = re.sub(
        rf"(?<![\d.]){lo}\s*(?:-|\u2013|\u2014|~|to)\s*{hi}(?![\d.])",
        " ",
        text,
        flags=_FLAGS,
    )
    text = _BEING.sub(" ", text)
    text = _LABEL_ECHO.sub(" ", text)
    if adversarial:
        text = _ADVERSARIAL.sub(" ", text)
    return text


def _strip_list_markers(text: str) -> tuple[str, bool]:
    markers = {m.group(1) for m in _LIST_MARKER.finditer(text)}
    if {"1", "2"} <= markers:
        return _LIST_MARKER.sub("", text), True
    return text, False


def _find_json(text: str) -> dict[str, object] | None:
    candidates = [m.group(1) for m in _JSON_FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        tries = 0
        while start != -1 and tries < _MAX_JSON_STARTS:
            tries += 1
            try:
                obj, _ = decoder.raw_decode(candidate, start)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                lowered = {str(k).lower(): v for k, v in obj.items()}
                if any(k in lowered for k in _JSON_SCORE_KEYS):
                    return lowered
            start = candidate.find("{", start + 1)
    return None


def _parse_json(obj: dict[str, object], scale_min: float, scale_max: float) -> ParsedScore:
    rationale = ""
    for key in _JSON_RATIONALE_KEYS:
        if isinstance(obj.get(key), str):
            rationale = str(obj[key]).strip()
            break
    raw = next(obj[k] for k in _JSON_SCORE_KEYS if k in obj)
    if isinstance(raw, bool):
        return ParsedScore(None, UNPARSEABLE, rationale)
    if isinstance(raw, (int, float)):
        return _score_result(float(raw), None, scale_min, scale_max, rationale)
    if isinstance(raw, str):
        match = re.match(r"\s*" + _NUM + _DEN + r"\s*\Z", raw, _FLAGS)
        if match:
            return _from_match(match, scale_min, scale_max, rationale)
    return ParsedScore(None, UNPARSEABLE, rationale)


def _feedback_before(text: str, end: int) -> str:
    return _FEEDBACK_PREFIX.sub("", text[:end], count=1).strip()


def parse_score(text: str, *, scale_min: float = 1, scale_max: float = 5, adversarial: bool = False) -> ParsedScore:
    """Parse one judge answer on the scale [scale_min, scale_max]; see the module docstring."""
    if not text or not text.strip():
        return ParsedScore(None, UNPARSEABLE, "")
    full = text.strip()

    obj = _find_json(full)
    if obj is not None:
        return _parse_json(obj, scale_min, scale_max)

    cleaned = _remove_echoes(full, scale_min, scale_max, adversarial)

    marks = list(_RESULT_MARK.finditer(cleaned))
    if marks:
        # Echo removal never touches the marker, so the last marker is the same in both texts;
        # the rationale is cut from the original so it reads as the model wrote it.
        last = marks[-1]
        rationale = _feedback_before(full, list(_RESULT_MARK.finditer(full))[-1].start())
        match = _RESULT.match(cleaned, last.start())
        if match is None:
            return ParsedScore(None, UNPARSEABLE, rationale)
        return _from_match(match, scale_min, scale_max, rationale)

    cleaned, is_list = _strip_list_markers(cleaned)

    for pattern in _EXPLICIT:
        match = pattern.search(cleaned)
        if match:
            return _from_match(match, scale_min, scale_max, full)
    for match in _OUT_OF.finditer(cleaned):
        if _to_number(match.group("den")) == scale_max:
            return _from_match(match, scale_min, scale_max, full)
    match = _RATE_VERB.search(cleaned)
    if match:
        return _from_match(match, scale_min, scale_max, full)
    if not is_list:
        match = _LEADING.match(cleaned)
        if match:
            return _from_match(match, scale_min, scale_max, full)

    if any(p.search(full) for p in REFUSAL_PATTERNS):
        return ParsedScore(None, REFUSED, full)

    # The paper's rule (appendix D.2.1): drop "out of <max>" and "/<max>", take the first number.
    # A denominator other than the scale's maximum survives this and marks another scale.
    hi = re.escape(_fmt(scale_max))
    rest = re.sub(rf"(?<!\s)\s*+(?:/|out\s+of)\s*+{hi}(?![\d.])", " ", cleaned, flags=_FLAGS)
    for match in _FALLBACK_NUM.finditer(rest):
        token = match.group(1)
        if re.fullmatch(r"\d{4,}", token):
            continue
        after = _AFTER_DEN.match(rest, match.end())
        den = float(after.group(1)) if after else None
        return _score_result(_to_number(token), den, scale_min, scale_max, full)
    return ParsedScore(None, UNPARSEABLE, full)


_CHOICE_TOKEN = r"(?P<choice>a|b|c|tie|draw|equal)\b"
_PAIR_RESULT = re.compile(
    r"\[\s*result\s*\]\s*+[:=\-]?\s*+[(\[]?\s*+(?:response\s+|output\s+)?" + _CHOICE_TOKEN,
    _FLAGS,
)
_PAIR_BRACKET = re.compile(r"\[\[\s*+" + _CHOICE_TOKEN + r"\s*+\]\]", _FLAGS)
_PAIR_LABELED = re.compile(
    r"(?<!\w)(?:winner|verdict|answer|choice|better\s+response|preferred(?:\s+response)?)\s*+[*_]*+"
    r"\s*+[:=\-]\s*+[*_]*+\s*+[(\[]?\s*+(?:response\s+|output\s+)?" + _CHOICE_TOKEN,
    _FLAGS,
)
# The whole answer is the choice, as a pairwise study's "(Answer A or B.)" asks; nothing else may follow.
_PAIR_ALONE = re.compile(
    r"\A[\s*_\[(\"']*+(?:(?:story|response|output|candidate|option)\s+)?(?P<choice>a|b)[\s*_\])\"'.!]*+\Z", _FLAGS
)
_PAIR_PROSE = re.compile(
    r"\b(?:response|output|answer)\s+(?P<choice>a|b)\b\s+is\s+(?:clearly\s+|slightly\s+|much\s+)?"
    r"(?:better|superior|preferred|stronger)\b",
    _FLAGS,
)


def _choice_of(token: str) -> str:
    token = token.lower()
    if token in ("a", "b"):
        return token.upper()
    # FastChat's pairwise prompt uses [[C]] for a tie.
    return "tie"


def parse_pairwise(text: str) -> ParsedChoice:
    """Parse a relative-grading answer (Prometheus ``[RESULT] A``, FastChat ``[[A]]``/``[[C]]``).

    Same principles as ``parse_score``: explicit formats only, a refusal without a verdict is
    ``refused``, anything else ``unparseable``. A ``[RESULT]`` marker with no verdict after it is
    unparseable, and the last marker counts because the verdict closes the feedback.
    """
    if not text or not text.strip():
        return ParsedChoice(None, UNPARSEABLE, "")
    full = text.strip()
    marks = list(_RESULT_MARK.finditer(full))
    if marks:
        last = marks[-1]
        rationale = _feedback_before(full, last.start())
        match = _PAIR_RESULT.match(full, last.start())
        if match is None:
            return ParsedChoice(None, UNPARSEABLE, rationale)
        return ParsedChoice(_choice_of(match.group("choice")), OK, rationale)
    for pattern in (_PAIR_BRACKET, _PAIR_LABELED, _PAIR_PROSE, _PAIR_ALONE):
        match = pattern.search(full)
        if match:
            return ParsedChoice(_choice_of(match.group("choice")), OK, full)
    if any(p.search(full) for p in REFUSAL_PATTERNS):
        return ParsedChoice(None, REFUSED, full)
    return ParsedChoice(None, UNPARSEABLE, full)
