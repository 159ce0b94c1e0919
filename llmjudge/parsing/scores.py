"""``parse_score``: one judge answer to a score on the study's scale, or an honest status and its reason.

The rules, in the order they are tried, are listed in ``llmjudge.parsing``; the forms live in
``llmjudge.parsing.forms``. Each tier returns every verdict of its forms; ``resolve`` keeps one, the last
after a self-correction ("Score: 5. Wait — ... Score: 3"), or calls two different ones two verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from llmjudge.parsing import forms
from llmjudge.parsing.common import (
    CUT_OFF,
    CUT_OFF_REASONING,
    EMPTY,
    NO_VERDICT,
    OK,
    OUT_OF_SCALE,
    REFUSED,
    RESULT_MARK,
    TWO_VERDICTS,
    UNPARSEABLE,
    ParsedScore,
    feedback_before,
    fmt,
    is_conditional,
    is_negated,
    plain,
)
from llmjudge.parsing.forms import Verdict, find
from llmjudge.parsing.lexicon import DEN, FLAGS, LETTER, LEX, NUM, is_refusal, refusals, to_number, unnamed
from llmjudge.parsing.normalize import glyphs, remove_echoes, strip_list_markers, window
from llmjudge.parsing.reasoning import split_reasoning
from llmjudge.parsing.score_json import find_score_json, read_score_json

_RESULT = re.compile(
    r"\[\s*result\s*(?:\]|:)\s*+(?:[:=]|-(?!\d))?\s*+(?:(?:score|result)\s*+(?:of\b|[:=])?\s*+)?[(\[]?\s*+" + NUM + DEN,
    FLAGS,
)
# What tells a self-correction: the later of two different verdicts stands.
_CUE = re.compile(
    rf"{LEX.corrections}|{LEX.revisions}|reconsider|second\s+thought|closer\s+inspection|after\s+(?:re-?reading|checking)",
    FLAGS,
)
_REVISION_KINDS = ("revision",)
_NAMED = re.compile(
    r"[^\S\n]*+(?:\([^)\n]{0,15}\)[^\S\n]*+)?(?:[:=|]|-(?!\d)|[\u2013\u2014])[^\S\n]*+[(\[]?\s*+" + NUM + DEN,
    FLAGS,
)
_NAME_BEFORE = re.compile(r"([^\W\d_][^\W\d_'\-]*(?:[ \t]+[^\W\d_][^\W\d_'\-]*){0,2})[\"']?[ \t]*\Z")
# Numbers a judge names beside its verdict that are not ratings ("Confidence: 0.7").
_NOT_RATINGS = re.compile(
    r"\A(?:confidence|certainty|probability|length|word\s+count|words|tokens|date|year|time|version|page|step|"
    r"temperature|price|cost|weight|age|id|count|average|mean|sum|n)\Z",
    FLAGS,
)
_NOT_ASPECT = rf"(?!{LEX.bare_labels}|{LEX.labels}|{LEX.final_prefixes}|{LEX.final_labels})"
_OTHER_ASPECT = re.compile(
    rf"(?<![{LETTER}]){_NOT_ASPECT}[^\W\d_][^\W\d_'\-]{{1,30}}[^\S\n]*+(?:\([^)\n]{{0,15}}\)[^\S\n]*+)?"
    rf"(?:(?:score|rating)[^\S\n]*+)?(?:[:=|]|-(?!\d)|[\u2013\u2014])\s*+[(\[]?\s*+{NUM}{DEN}"
    rf"|(?<![{LETTER}]){_NOT_ASPECT}[^\W\d_]{{3,}}\s*+\(\s*+{unnamed(NUM + DEN)}\s*+\)",
    FLAGS,
)
_PAPER_NUM = re.compile(r"(?<![\w.\-/:,])(?P<num>-?\d+(?:\.\d+)?)(?![\w%])(?![.,:]\d)")
_AFTER_DEN = re.compile(r"\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?)(?!\w)", FLAGS)
_GENERIC_LABELS = {"lowest", "highest"}


@dataclass(frozen=True)
class Scale:
    low: float
    high: float


def resolve(found: list[Verdict], text: str) -> Verdict | None:
    """One verdict from a tier: they agree, or the last follows a self-correction; else two verdicts."""
    if not found:
        return None
    ordered = sorted(found, key=lambda v: (v.start, v.end))
    last = ordered[-1]
    differing = [v for v in ordered if (v.value, v.den) != (last.value, last.den) or v.ambiguous]
    if not differing and not last.ambiguous:
        return last
    if not last.ambiguous and (
        last.kind in _REVISION_KINDS or _CUE.search(text, differing[-1].end, max(differing[-1].end, last.start))
    ):
        return last
    return replace(last, ambiguous=True)


def _final_tier(text: str) -> list[Verdict]:
    found = [v for p in (forms.FINAL_LABELED, forms.BOXED, forms.TAGGED, forms.DOUBLE_BRACKET) for v in find(p, text, "final")]
    for pattern in (forms.REVISED, forms.DECIDED, *forms.DECISION_TEMPLATES):
        found += find(pattern, text, "revision", prose=True)
    for verdict in find(forms.CORRECTED, text, "revision", prose=True):
        # A correction corrects something: a number stands shortly before it.
        if re.search(rf"\d|{LEX.numbers}", text[max(0, verdict.start - 60) : verdict.start], FLAGS):
            found.append(verdict)
    return found


def _named(text: str) -> list[Verdict]:
    """"Fluency: 4", "| Accuracy | 3 |", "Score for clarity: 3": ratings of named criteria."""
    found = []
    for match in _NAMED.finditer(text):
        name = _NAME_BEFORE.search(text, max(0, match.start() - 50), match.start())
        if name is None or _NOT_RATINGS.match(name.group(1)) or forms.is_count(text, match):
            continue
        verdict = forms.verdict_of(match, "named")
        if verdict.value is not None:
            found.append(verdict)
    return found


def _label_words(text: str, words: dict[str, float]) -> list[Verdict]:
    """A label word in a verdict's place: "Rating: Positive", "[RESULT] highest", "I'd rate it the highest"."""
    if not words:
        return []
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    pattern = re.compile(
        r"(?m:(?:\A\W*|\b(?:score|rating|grade|result|verdict|answer)\W{0,4}(?:is\s+)?|^[^\S\n]*\w+[^\S\n]*[:=][^\S\n]*"
        r"|(?<=[.!?])\s+|\b(?:rate|rated|give)\b" + forms.GAP + r"\b(?:as\s+)?))(?:the\s+|a\s+|an\s+)?[\"']?(?P<word>"
        + alt
        + r")\b[\"']?(?=\W*\Z|[^\S\n]*[.,;!)\n]|[^\S\n]+[-\u2013\u2014])",
        FLAGS,
    )
    for match in pattern.finditer(text):
        if not is_negated(text, match.start("word")):
            return [Verdict(words[match.group("word").lower()], None, match.start("word"), match.end(), "label word")]
    return []


def _top(text: str, scale: Scale) -> list[Verdict]:
    """"This deserves a perfect score!": the top of the scale; "not a perfect score" and "a perfect score
    would require ..." are not."""
    return [
        Verdict(scale.high, None, m.start(), m.end(), "top")
        for m in forms.TOP.finditer(text)
        if not is_negated(text, m.start()) and not forms.is_hypothetical(text, m.end())
    ]


def _general_classes(
    text: str, bold: list[Verdict], scale: Scale, options: _Options, *, is_list: bool
) -> tuple[Callable[[], list[Verdict]], ...]:
    def several(*patterns: re.Pattern[str], kind: str) -> list[Verdict]:
        return [v for p in patterns for v in find(p, text, kind, prose=True)]

    return (
        lambda: several(forms.LABELED, forms.GLOSSED, kind="label")
        # "Schulnote: 2": a number on another scale whatever its value.
        + [replace(v, den=float("inf")) for v in find(forms.OTHER_SCALE, text, "label")],
        lambda: [] if options.aspect else _named(text),
        lambda: several(
            forms.VERB, forms.IS_A, forms.UPPER_BOUND, forms.LEVEL, forms.ORDINAL, *forms.VERDICT_TEMPLATES, kind="verb"
        ),
        lambda: _top(text, scale),
        lambda: several(forms.FRACTION, *forms.MAX_FIRST, kind="fraction"),
        lambda: bold,
        lambda: several(forms.ARTICLE_WORD, kind="article"),
        lambda: _label_words(text, options.words),
        lambda: [replace(v, ambiguous=True) for p in forms.RANGES for v in find(p, text, "range")],
        lambda: [] if is_list else several(forms.LEADING, kind="leading"),
        lambda: several(forms.TRAILING, kind="trailing"),
    )


def _paper(text: str, scale: Scale) -> Verdict | None:
    """The paper's rule (Chiang & Lee 2023, appendix D.2.1): drop "out of <max>" and "/<max>", take the first
    number. A denominator other than the scale's maximum survives this and marks another scale. Years,
    counts, references and examples are skipped: they are not ratings."""
    hi = re.escape(fmt(scale.high))
    rest = re.sub(rf"(?<!\s)\s*+(?:/|out\s+of)\s*+{hi}(?![\d.])", " ", text, flags=FLAGS)
    for match in _PAPER_NUM.finditer(rest):
        token = match.group("num")
        if re.fullmatch(r"\d{4,}", token) or forms.is_reference(rest, match.start()) or is_negated(rest, match.start()):
            continue
        if forms.is_count(rest, match):
            continue
        after = _AFTER_DEN.match(rest, match.end())
        return Verdict(to_number(token), float(after.group(1)) if after else None, match.start(), match.end(), "paper")
    return None


def _label_values(labels: Mapping[str, str] | None, scale: Scale) -> dict[str, float]:
    """Label word -> value: the study's ``{"5": "5 (highest)"}`` gives "highest" -> 5.

    A study without labels still has a lowest and a highest point.
    """
    if not labels:
        return {"lowest": float(scale.low), "highest": float(scale.high)}
    words: dict[str, float] = {}
    for key, label in labels.items():
        value = to_number(str(key))
        word = re.sub(r"^\s*[-\d.]+\s*", "", str(label)).strip(" ()[]:-=").lower()
        if value is not None and word:
            words[word] = value
    return words


def _judged(verdict: Verdict | None, scale: Scale, rationale: str, *, refused: bool = False) -> ParsedScore:
    """A verdict on the study's scale is the score; off the scale, on another scale or "3 or 4" it is not.

    After a refusal, a verdict that is not one ("Score: 0 — I refuse to rate this") leaves the refusal."""
    if verdict is None:
        return ParsedScore(None, REFUSED if refused else UNPARSEABLE, rationale, reason="" if refused else NO_VERDICT)
    reason = ""
    if verdict.ambiguous:
        reason = TWO_VERDICTS
    elif verdict.value is None:
        reason = NO_VERDICT
    # NaN compares False both ways, so it is never on the scale.
    elif (verdict.den is not None and verdict.den != scale.high) or not scale.low <= verdict.value <= scale.high:
        reason = OUT_OF_SCALE
    if reason:
        return ParsedScore(None, REFUSED if refused else UNPARSEABLE, rationale, reason="" if refused else reason)
    return ParsedScore(verdict.value, OK, rationale)


def _from_result(text: str, answer: str, scale: Scale, words: dict[str, float], refused: bool) -> ParsedScore:
    """Prometheus's ``[RESULT] 4``: the last marker counts, because the verdict closes the feedback; a marker
    with no score after it is never read from the feedback. The rationale is cut from the answer as written."""
    marks = list(RESULT_MARK.finditer(text))
    originals = list(RESULT_MARK.finditer(answer))
    rationale = feedback_before(answer, originals[-1].start()) if originals else answer
    match = _RESULT.match(text, marks[-1].start())
    if match is not None:
        return _judged(forms.verdict_of(match, "result"), scale, rationale)
    found = _label_words(text[marks[-1].end() :], words)
    return _judged(found[0] if found else None, scale, rationale, refused=refused)


_CONTRAST = re.compile(rf"{LEX.contrasts}|[.!?;\n]", FLAGS)


def _in_refusal(text: str, verdict: Verdict, refusal: re.Match[str]) -> bool:
    """The verdict stands in the refusal's own clause: "I can't rate this (1 von 5)", "Score: 0 — I refuse to
    rate"; a sentence end or a "but" between them ("I can't comment on X, but I'd give it a 4") sets it apart."""
    between = text[refusal.end() : verdict.start] if refusal.start() < verdict.start else text[verdict.end : refusal.start()]
    return len(between) < 400 and _CONTRAST.search(between) is None


def _usable(found: list[Verdict], text: str, refused: list[re.Match[str]]) -> list[Verdict]:
    """After a refusal, "If it were complete, I might give it a 3", "even a 1" and a number inside the refusal
    are no verdicts."""
    if not refused:
        return found
    return [v for v in found if not is_conditional(text, v.start) and not any(_in_refusal(text, v, r) for r in refused)]


def _read_prose(text: str, bold: list[Verdict], scale: Scale, options: _Options) -> Verdict | None:
    """The verdict of an answer without JSON or ``[RESULT]``, tier by tier; None when it has none."""
    text, is_list = strip_list_markers(text)
    refused = refusals(text)
    if options.aspect:
        found = resolve(
            _usable([v for p in forms.aspect_patterns(options.aspect) for v in find(p, text, "aspect")], text, refused),
            text,
        )
        if found is not None:
            return found
    found = resolve(_usable(_final_tier(text), text, refused), text)
    if found is not None:
        return found
    others = 0
    if options.aspect:
        # The aspect is not rated: the ratings of the other aspects ("Fluency: 5", "fluent (5/5)") go.
        text, others = _OTHER_ASPECT.subn(" ", text)
    for general in _general_classes(text, bold, scale, options, is_list=is_list):
        found = resolve(_usable(general(), text, refused), text)
        if found is not None:
            return found
    if refused:
        return None
    found = _paper(text, scale)
    if found is None and others >= 2:
        return Verdict(None, None, 0, 0, "other aspects", ambiguous=True)
    return found


@dataclass(frozen=True)
class _Options:
    aspect: str | None
    question: str
    adversarial: bool
    words: dict[str, float]


def _read(answer: str, scale: Scale, options: _Options) -> ParsedScore:
    text = glyphs(window(answer))
    refused = is_refusal(text)
    found = find_score_json(text, options.aspect)
    if found is not None:
        read = read_score_json(found, options.aspect, answer)
        verdict = replace(read.verdict, ambiguous=True) if read.verdict and read.ambiguous else read.verdict
        if verdict is None and read.ambiguous:
            verdict = Verdict(None, None, 0, 0, "json", ambiguous=True)
        return _judged(verdict, scale, read.rationale, refused=is_refusal(read.rationale) or refused)
    label_words = "|".join(re.escape(w) for w in options.words if w not in _GENERIC_LABELS)
    cleaned = remove_echoes(
        text,
        scale_min=scale.low,
        scale_max=scale.high,
        adversarial=options.adversarial,
        label_words=label_words,
        question=options.question,
    )
    bold = find(forms.BOLD, cleaned, "bold", prose=True)
    plain_text = plain(cleaned)
    if RESULT_MARK.search(plain_text):
        return _from_result(plain_text, answer, scale, options.words, refused)
    verdict = _read_prose(plain_text, bold, scale, options)
    return _judged(verdict, scale, answer, refused=refused)


def parse_score(
    text: str,
    *,
    scale_min: float = 1,
    scale_max: float = 5,
    adversarial: bool = False,
    aspect: str | tuple[str, str] | list[str] | None = None,
    labels: Mapping[str, str] | None = None,
    truncated: bool = False,
) -> ParsedScore:
    """Parse one judge answer on the scale [scale_min, scale_max]; see ``llmjudge.parsing``.

    ``aspect`` is the question's key ("fluency") or its (key, question text) pair: that aspect's rating is
    read when the answer rates several, and the question's text repeated in the answer is not read.
    ``labels`` are the study's scale labels (``Study.scale_labels``), whose words count as ratings.
    ``truncated`` says the server stopped the answer at max_tokens: an answer without a verdict is then
    "cut off" rather than "no verdict".
    """
    reasoning, answer, cut_off = split_reasoning(text or "")
    if cut_off:
        return ParsedScore(None, UNPARSEABLE, "", reason=CUT_OFF_REASONING, reasoning=reasoning)
    if not answer:
        return ParsedScore(None, UNPARSEABLE, "", reason=CUT_OFF if truncated else EMPTY, reasoning=reasoning)
    key, question = (aspect, "") if isinstance(aspect, str) or aspect is None else (aspect[0], aspect[1])
    scale = Scale(float(scale_min), float(scale_max))
    options = _Options(key or None, question or "", adversarial, _label_values(labels, scale))
    result = _read(answer, scale, options)
    if truncated and result.reason in (NO_VERDICT, TWO_VERDICTS):
        result = replace(result, reason=CUT_OFF)
    return replace(result, reasoning=reasoning)
