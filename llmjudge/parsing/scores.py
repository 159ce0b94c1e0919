"""``parse_score``: one judge answer to a score on the study's scale, or an honest status.

The rules, in the order they are tried, are listed in ``llmjudge.parsing``; each is a small named
function here returning a ``Verdict`` (the number, its denominator, where it stood) or None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from llmjudge.parsing.common import (
    DEN,
    DEN_BODY,
    FLAGS,
    GAP,
    NUM,
    OK,
    REFUSED,
    RESULT_MARK,
    UNPARSEABLE,
    WORD_NUM,
    ParsedScore,
    feedback_before,
    fmt,
    is_conditional,
    is_negated,
    is_refusal,
    plain,
    to_number,
)


@dataclass(frozen=True)
class Verdict:
    """A number read as the answer's rating: ``den`` is its "/5" or "out of 5", if any."""

    value: float | None
    den: float | None
    start: int
    end: int
    ambiguous: bool = False  # "3 or 4": two verdicts and no final one


_RESULT = re.compile(r"\[\s*result\s*\]\s*+(?:[:=]|-(?!\d))?\s*+(?:score\s*+[:=]?\s*+)?[(\[]?\s*+" + NUM + DEN, FLAGS)
_DOUBLE_BRACKET = re.compile(r"\[\[\s*+" + NUM + DEN + r"\s*+\]\]", FLAGS)
_LABEL_WORDS = r"(?:score|rating|grade|result)"
_LABELED = re.compile(
    r"(?<!\w)(?:(?:final|overall|total|my)\s+)?" + _LABEL_WORDS + r"\s*+\]?\s*+"
    r"(?:[:=]|-(?!\d)|\bis\b|\bof\b|\bwould\s+be\b)?\s*+[(\[]?\s*+" + NUM + DEN,
    FLAGS,
)
# "Final score: 4", "so I'd lower it to 3": the answer's last word on its rating overrides the rest.
_FINAL = re.compile(
    r"(?:(?<!\w)(?:final|revised|adjusted|corrected|updated|overall)\s+(?:score|rating|grade|verdict|answer)\s*+"
    r"(?:[:=]|-(?!\d)|\bis\b|\bof\b|\bwould\s+be\b)?\s*+[(\[]?\s*+"
    r"|\b(?:lower|lowered|lowering|raise|raised|raising|bump|bumped|revise|revised|adjust|adjusted|"
    r"change|changed|reduce|reduced|increase|increased|drop|dropped|downgrade|upgrade|settle|settled)\b"
    + GAP
    + r"\b(?:to|at|on)\s+(?:a\s+)?)"
    + NUM
    + DEN,
    FLAGS,
)
_BOLD = re.compile(r"\*\*\s*+" + NUM + DEN + r"\s*+\*\*", FLAGS)
_OUT_OF = re.compile(NUM + DEN_BODY, FLAGS)
_RATE_VERB = re.compile(
    r"\b(?:rate|rated|rating|give|gave|giving|score|scored|assign|assigned|award|awarded|deserves?|merits?|"
    r"earns?|warrants?|gets?|got|i'd\s+say|i\s+would\s+say|(?:would|should)\s+be|i'd\s+go\s+with)\b" + GAP + NUM + DEN,
    FLAGS,
)
# "this is a solid three.": an article before a number word marks it as a rating, not a count.
_ARTICLE_WORD = re.compile(r"\b(?:a|an)\s+(?:(?:solid|strong|weak|low|high|fair|generous)\s+)?" + WORD_NUM + DEN, FLAGS)
_LEADING = re.compile(
    r"\A[\s#>]*" + NUM + DEN + r"[^\S\n]*+(?:stars?\b)?[^\S\n]*+(?:[.:;,!)\-\u2013\u2014]|\n|\Z)",
    FLAGS,
)
# After a rating come "stars", "out of", "because", "overall", an adverb...; any other lower-case word
# makes the number a count ("2 twists and 1 major flaw", "3 sentences"). A capital starts a new
# sentence ("5 Great story!").
_COUNT = re.compile(
    r"[^\S\n]+(?!(?:stars?|points?|out|of|and|or|to|for|because|but|since|as|on|in|overall|given|due|is|was|"
    r"would|will|should|seems?|feels?|here|there|at|with|without|from|by|after|before|this|it|considering|too|"
    r"though|while|then|now|also|based|which|so|if|even|despite|being|i|tops|max|at|instead|rather|myself|"
    r"\w+ly)\b)(?-i:[a-z])",
    FLAGS,
)
# "A score of 5 would require vivid imagery": a number the answer talks about, not its rating.
_HYPOTHETICAL = re.compile(r"[^\S\n]*(?:would\s+(?:require|need|mean)|requires|needs|is\s+reserved)\b", FLAGS)
_UPPER_BOUND = re.compile(r"\b(?:higher|more|better|above|beyond)\s+than\b|\babove\b", FLAGS)
# "paragraph 5", "line 4": a number that points into the text.
_REFERENCE = re.compile(
    r"\b(?:paragraph|line|sentence|chapter|section|step|item|page|part|version|question)\s*#?\s*\Z", FLAGS
)
_EXAMPLE = re.compile(r"(?:e\.\s*g\.|for example|for instance|such as|like)\s*,?\s*\(?\Z", FLAGS)
_ALTERNATIVE = re.compile(r"\s*(?:or|/)\s*(?:a\s+)?" + NUM.replace("?P<num>", "?:"), FLAGS)

_LIST_MARKER = re.compile(r"^[ \t]*(\d+)[.)][ \t]+(?=\S)", re.MULTILINE)
_FALLBACK_NUM = re.compile(r"(?<![\w.\-/:,\u2212])([-\u2212]?\d+(?:\.\d+)?)(?![\w%])(?![.,:]\d)")
_AFTER_DEN = re.compile(r"\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?)(?!\w)", FLAGS)
_ECHO_END = r"(?:the\s+)?(?:strongly\s+)?(?:lowest|highest|worst|best|poorest|agree|disagree|poor|excellent)\b"
# "being" only occurs in echoed scale explanations; "is"/"means"/"=" only count after "where",
# "with", "and", "(" or "," so that "I think 4 is the best fit" keeps its score.
_BEING = re.compile(
    r"\b(?:with\s+|where\s+|and\s+)?\d+(?:\.\d+)?\s+being\s+"
    + _ECHO_END
    + r"|(?:\b(?:where|with|and)\b|[(,])\s*\d+(?:\.\d+)?\s+(?:is|means|=)\s+"
    + _ECHO_END,
    FLAGS,
)
_GENERIC_LABELS = r"lowest|highest|worst|best|strongly\s+(?:dis)?agree"
_ADVERSARIAL = re.compile(r"\btitle\s*+#?\s*+[12]\b", FLAGS)
_JSON_FENCE = re.compile(r"```(?:json)?\s*+(.*?)```", FLAGS | re.DOTALL)
_JSON_SCORE_KEYS = ("score", "rating", "grade")
_JSON_RATIONALE_KEYS = ("explanation", "rationale", "reason", "reasoning", "feedback", "justification", "comment")
# Bounds the work on pathological inputs (a page of "{"): a judge answer has one JSON object.
_MAX_JSON_STARTS = 20


def _verdict(match: re.Match[str]) -> Verdict:
    den = match.group("den")
    tail = match.string[match.end() : match.end() + 40]
    return Verdict(
        to_number(match.group("num")),
        to_number(den) if den else None,
        match.start("num"),
        match.end(),
        ambiguous=_ALTERNATIVE.match(tail) is not None,
    )


def _is_count(text: str, match: re.Match[str]) -> bool:
    end = match.end("den") if match.group("den") else match.end("num")
    return match.group("num")[0].isdigit() and _COUNT.match(text, end) is not None


def _first(pattern: re.Pattern[str], text: str, *, last: bool = False, prose: bool = False) -> Verdict | None:
    """The first (or last) match that is a verdict: prose matches skip counts and negated verbs."""
    found = None
    for match in pattern.finditer(text):
        # "I can't rate it higher than a 3" is a 3; "I would not give it a 5" is no 5.
        negated = is_negated(text, match.start()) and not _UPPER_BOUND.search(match.group(0))
        if prose and (_is_count(text, match) or negated):
            continue
        if _HYPOTHETICAL.match(text, match.end()):
            continue
        found = _verdict(match)
        if not last:
            break
    return found


def _remove_echoes(text: str, scale_min: float, scale_max: float, adversarial: bool, label_words: str) -> str:
    """Cut the parts of an answer that repeat the question, because their numbers are not scores.

    A scale label after a number ("5 (highest)") is a gloss: the label goes, the number stays.
    """
    lo, hi = re.escape(fmt(scale_min)), re.escape(fmt(scale_max))
    gloss = r"(?:\s*\([^)\n]{0,30}\))?"
    text = re.sub(rf"(?<![\d.]){lo}{gloss}\s*(?:-|\u2013|\u2014|~|to)\s*{hi}{gloss}(?!\d|\.\d)", " ", text, flags=FLAGS)
    text = _BEING.sub(" ", text)
    text = re.sub(rf"(\d)\s*\((?:{label_words})\)", r"\1", text, flags=FLAGS)
    if adversarial:
        text = _ADVERSARIAL.sub(" ", text)
    return text


def _label_values(labels: Mapping[str, str] | None, scale_min: float, scale_max: float) -> dict[str, float]:
    """Label word -> value: the study's ``{"5": "5 (highest)"}`` gives "highest" -> 5.

    A study without labels still has a lowest and a highest point.
    """
    if not labels:
        return {"lowest": float(scale_min), "highest": float(scale_max)}
    words: dict[str, float] = {}
    for key, label in labels.items():
        value = to_number(str(key))
        word = re.sub(r"^\s*[-\d.]+\s*", "", str(label)).strip(" ()[]:-=").lower()
        if value is not None and word:
            words[word] = value
    return words


def _find_json(text: str, aspect: str | None) -> tuple[dict[str, object], str] | None:
    keys = ((aspect.lower(),) if aspect else ()) + _JSON_SCORE_KEYS
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
                key = next((k for k in keys if k in lowered), None)
                if key is not None:
                    return lowered, key
            start = candidate.find("{", start + 1)
    return None


def _parse_json(obj: dict[str, object], key: str, scale_min: float, scale_max: float) -> ParsedScore:
    rationale = next((str(obj[k]).strip() for k in _JSON_RATIONALE_KEYS if isinstance(obj.get(k), str)), "")
    raw = obj[key]
    if isinstance(raw, bool):
        return ParsedScore(None, UNPARSEABLE, rationale)
    if isinstance(raw, (int, float)):
        return _score(Verdict(float(raw), None, 0, 0), scale_min, scale_max, rationale)
    if isinstance(raw, str):
        match = re.match(r"\s*" + NUM + DEN + r"\s*\Z", raw, FLAGS)
        if match:
            return _score(_verdict(match), scale_min, scale_max, rationale)
    return ParsedScore(None, UNPARSEABLE, rationale)


def _score(verdict: Verdict, scale_min: float, scale_max: float, rationale: str) -> ParsedScore:
    """A verdict on the study's scale is the score; off the scale, on another scale or "3 or 4" it is not."""
    value, den = verdict.value, verdict.den
    if verdict.ambiguous or value is None or (den is not None and den != scale_max):
        return ParsedScore(None, UNPARSEABLE, rationale)
    # NaN compares False both ways, so it is never on the scale.
    if not scale_min <= value <= scale_max:
        return ParsedScore(None, UNPARSEABLE, rationale)
    return ParsedScore(value, OK, rationale)


def _rule_aspect(text: str, aspect: str | None) -> Verdict | None:
    """The aspect asked about: "Relevance: 1", "the relevance a 2", "a 4 for relevance"."""
    if not aspect:
        return None
    name = re.escape(aspect) + r"\w*\b"
    after = _first(re.compile(r"\b" + name + GAP + NUM + DEN, FLAGS), text, last=True, prose=True)
    if after is not None:
        return after
    # "a 3 for grammar and a 4 for relevance"
    before = re.compile(NUM + DEN + r"\s+(?:for|in|on)\s+(?:its\s+|the\s+)?" + name, FLAGS)
    return _first(before, text, last=True)


def _rule_labeled(text: str) -> Verdict | None:
    """A label ("Score: 4"); two labels that disagree ("Score: 4 ... Score: 2") are two verdicts, no final one."""
    first = _first(_LABELED, text)
    last = _first(_LABELED, text, last=True)
    if first is not None and last is not None and (first.value, first.den) != (last.value, last.den):
        return Verdict(first.value, first.den, first.start, first.end, ambiguous=True)
    return first


def _cut_other_aspects(text: str, aspect: str | None) -> str:
    """With an aspect asked about, the ratings of other aspects ("Fluency: 5", "fluent (5/5)") go."""
    if not aspect:
        return text
    other = r"\b(?!" + re.escape(aspect) + r"|" + _LABEL_WORDS + r"|overall|final|total|answer|verdict|judg)[a-z]{3,}\b"
    text = re.sub(other + r"[^\S\n]*+(?:(?:score|rating)[^\S\n]*+)?[:=]\s*+" + NUM + DEN, " ", text, flags=FLAGS)
    return re.sub(other + r"\s*+\(\s*+" + NUM + DEN + r"\s*+\)", " ", text, flags=FLAGS)


def _rule_label_word(text: str, words: dict[str, float]) -> Verdict | None:
    """A label word in a verdict's place: "Rating: Positive", "[RESULT] highest", "I'd rate it the highest"."""
    if not words:
        return None
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    pattern = re.compile(
        r"(?m:(?:\A\W*|\b(?:score|rating|grade|result|verdict|answer)\W{0,4}(?:is\s+)?|^[^\S\n]*\w+[^\S\n]*[:=][^\S\n]*"
        r"|(?<=[.!?])\s+|\b(?:rate|rated|give)\b"
        + GAP
        + r"\b(?:as\s+)?))(?:the\s+|a\s+|an\s+)?[\"']?(?P<word>"
        + alt
        + r")\b[\"']?(?=\W*\Z|[^\S\n]*[.,;!)\n]|[^\S\n]+[-\u2013\u2014])",
        FLAGS,
    )
    for match in pattern.finditer(text):
        if not is_negated(text, match.start("word")):
            return Verdict(words[match.group("word").lower()], None, match.start("word"), match.end())
    return None


def _rule_out_of(text: str, scale_max: float) -> Verdict | None:
    for match in _OUT_OF.finditer(text):
        if to_number(match.group("den")) == scale_max:
            return _verdict(match)
    return None


def _rule_paper(text: str, scale_max: float) -> Verdict | None:
    """The paper's rule (appendix D.2.1): drop "out of <max>" and "/<max>", take the first number.

    A denominator other than the scale's maximum survives this and marks another scale. Years,
    counts and examples are skipped: they are not ratings.
    """
    hi = re.escape(fmt(scale_max))
    rest = re.sub(rf"(?<!\s)\s*+(?:/|out\s+of)\s*+{hi}(?![\d.])", " ", text, flags=FLAGS)
    for match in _FALLBACK_NUM.finditer(rest):
        token = match.group(1)
        before = rest[max(0, match.start() - 20) : match.start()]
        if re.fullmatch(r"\d{4,}", token) or _EXAMPLE.search(before) or _REFERENCE.search(before):
            continue
        if is_negated(rest, match.start()):
            continue
        if _COUNT.match(rest, match.end()):
            continue
        after = _AFTER_DEN.match(rest, match.end())
        return Verdict(to_number(token), float(after.group(1)) if after else None, match.start(), match.end())
    return None


def _strip_list_markers(text: str) -> tuple[str, bool]:
    markers = {m.group(1) for m in _LIST_MARKER.finditer(text)}
    if {"1", "2"} <= markers:
        return _LIST_MARKER.sub("", text), True
    return text, False


def parse_score(
    text: str,
    *,
    scale_min: float = 1,
    scale_max: float = 5,
    adversarial: bool = False,
    aspect: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> ParsedScore:
    """Parse one judge answer on the scale [scale_min, scale_max]; see ``llmjudge.parsing``.

    ``aspect`` (e.g. "relevance") picks that aspect's rating when the answer scores several;
    ``labels`` are the study's scale labels (``Study.scale_labels``), whose words count as ratings.
    """
    if not text or not text.strip():
        return ParsedScore(None, UNPARSEABLE, "")
    full = text.strip()

    found = _find_json(full, aspect)
    if found is not None:
        return _parse_json(found[0], found[1], scale_min, scale_max)

    words = _label_values(labels, scale_min, scale_max)
    gloss_words = "|".join([_GENERIC_LABELS, *(re.escape(w) for w in words)])
    cleaned = _remove_echoes(full, scale_min, scale_max, adversarial, gloss_words)
    refused = is_refusal(full)
    bold = _first(_BOLD, cleaned)
    text_ = plain(cleaned)

    marks = list(RESULT_MARK.finditer(text_))
    if marks:
        # The verdict closes the feedback, so the last marker counts; the rationale is cut from the
        # original so it reads as the model wrote it.
        rationale = feedback_before(full, list(RESULT_MARK.finditer(full))[-1].start())
        match = _RESULT.match(text_, marks[-1].start())
        if match is not None:
            return _score(_verdict(match), scale_min, scale_max, rationale)
        verdict = _rule_label_word(text_[marks[-1].end() :], words)
        if verdict is not None:
            return _score(verdict, scale_min, scale_max, rationale)
        # A marker with no score after it: never let a number from the feedback stand in.
        return ParsedScore(None, REFUSED if refused else UNPARSEABLE, rationale)

    text_, is_list = _strip_list_markers(text_)
    if _rule_aspect(text_, aspect) is None:
        text_ = _cut_other_aspects(text_, aspect)
    rules: tuple[Callable[[], Verdict | None], ...] = (
        lambda: _rule_aspect(text_, aspect),
        lambda: _first(_FINAL, text_, last=True, prose=True),
        lambda: _first(_DOUBLE_BRACKET, text_),
        lambda: _rule_labeled(text_),
        lambda: bold,
        lambda: _rule_out_of(text_, scale_max),
        lambda: _first(_RATE_VERB, text_, prose=True),
        lambda: _first(_ARTICLE_WORD, text_),
        lambda: _rule_label_word(text_, words),
        lambda: None if is_list else _first(_LEADING, text_, prose=True),
    )
    for rule in rules:
        verdict = rule()
        # After a refusal, "If it were complete, I might give it a 3" is not a verdict.
        if verdict is not None and not (refused and is_conditional(text_, verdict.start)):
            return _score(verdict, scale_min, scale_max, full)
    if refused:
        return ParsedScore(None, REFUSED, full)
    verdict = _rule_paper(text_, scale_max)
    if verdict is not None:
        return _score(verdict, scale_min, scale_max, full)
    return ParsedScore(None, UNPARSEABLE, full)
