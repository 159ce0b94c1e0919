"""The verdict of a prose answer, tier by tier: the aspect asked, the final markers, then a sole verdict.

Each tier gathers every verdict of its forms (``llmjudge.parsing.forms``); ``resolve`` keeps one when they
agree, the last one after a self-correction ("Score: 5. Wait — ... Score: 3", "bump that to a 4"), and
otherwise calls them two verdicts. The general tier is a list of classes tried in order (labels, named
criteria, rating verbs, "a perfect score", fractions, bold, number words, the study's label words, ranges, a
number opening or closing the answer); the first class that finds something decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import llmjudge.parsing.forms as forms
from llmjudge.parsing.common import SENTENCE_END, fmt, is_conditional, is_negated, set_apart, taken_back
from llmjudge.parsing.forms import Verdict, find
from llmjudge.parsing.lexicon import DEN, FOLDED, LEX, NUM, Lazy, to_number
from llmjudge.parsing.normalize import Prepared

# What tells a self-correction: the later of two different verdicts stands.
_CUE = Lazy(
    rf"{LEX.corrections}|{LEX.revisions}|reconsider|second\s+thought|closer\s+inspection|after\s+(?:re-?reading|checking)",
    FOLDED,
)
# "Fluency: 4", "| Accuracy | 3 |": a separator and a number, whose name is read backwards from the separator.
_NAMED = Lazy(r"(?:[:=|]|-(?!\d)|[\u2013\u2014]|>(?<=[^\W\d_]>))[^\S\n]*+[(\[]?\s*+" + NUM + DEN, FOLDED)
_NAME_BEFORE = Lazy(
    r"([^\W\d_][^\W\d_'\-]*(?:[ \t]+[^\W\d_][^\W\d_'\-]*){0,2})[\"']?[ \t]*(?:\([^)\n]{0,15}\)[ \t]*)?\Z"
)
_PAREN_NUMBER = Lazy(r"\(\s*+" + NUM + DEN + r"\s*+\)", FOLDED)
_WORD_BEFORE = Lazy(r"[^\W\d_]{3,}[ \t]*\Z")
# Numbers a judge names beside its verdict that are not ratings ("Confidence: 0.7").
_NOT_RATINGS = Lazy(
    r"(?:confidence|certainty|probability|length|word\s+count|words|tokens|date|year|time|version|page|step|"
    r"temperature|price|cost|weight|age|id|count|average|mean|sum|n)\Z",
    FOLDED,
)
# A name that ends in a label ("Score", "Overall score", "I would answer") names the verdict, not an aspect.
_LABEL_NAME = Lazy(rf"(?:{LEX.bare_labels}|{LEX.labels}|{LEX.final_prefixes}|{LEX.final_labels})\Z", FOLDED)
_CONTRAST = Lazy(rf"{LEX.contrasts}|[.!?;\n]", FOLDED)
_CONTRAST_WORD = Lazy(LEX.contrasts, FOLDED)
# After a refusal, the verdicts that a marker sets apart: final markers and self-corrections.
_MARKED = ("final", "revision", "aspect")
_PAPER_NUM = Lazy(
    r"(?P<num>-(?<![\w.\-/:,]-)\d+(?:\.\d+)?|\d(?<![\w.\-/:,]\d)\d*(?:\.\d+)?)(?![\w%])(?![.,:]\d)", FOLDED
)
# "from 2020–2022": years are no range of verdicts.
_YEAR = Lazy(r"\d{4}")
_AFTER_DEN = Lazy(r"\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?)(?!\w)", FOLDED)


@dataclass(frozen=True)
class Scale:
    low: float
    high: float


@dataclass(frozen=True)
class Options:
    aspect: str | None
    question: str
    adversarial: bool
    words: dict[str, float]  # the study's label words and their values


def resolve(found: list[Verdict], low: str) -> Verdict | None:
    """One verdict from a tier: they agree, or the last follows a self-correction; else two verdicts."""
    if not found:
        return None
    ordered = sorted(found, key=lambda v: (v.start, v.end))
    last = ordered[-1]
    differing = [v for v in ordered if (v.value, v.den) != (last.value, last.den) or v.ambiguous]
    if not differing and not last.ambiguous:
        return last
    if not last.ambiguous and (
        last.kind == "revision" or _CUE.search(low, differing[-1].end, max(differing[-1].end, last.start))
    ):
        return last
    return replace(last, ambiguous=True)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _name_before(low: str, sep: int) -> str | None:
    name = _NAME_BEFORE.search(low, max(0, sep - 50), sep)
    return name.group(1) if name else None


def _final_tier(r: Prepared) -> list[Verdict]:
    found = [v for p in forms.FINALS for v in find(p, r.text, r.low, "final")]
    for pattern in (forms.REVISED, forms.DECIDED, *forms.present(forms.DECISION_TEMPLATES, r.low)):
        found += find(pattern, r.text, r.low, "revision", prose=True)
    # "my first 3 stands": its own words tell the number from a count.
    found += find(forms.RESTORED, r.text, r.low, "revision")
    for verdict in find(forms.CORRECTED, r.text, r.low, "revision", prose=True):
        # A correction corrects something: a number stands shortly before it.
        if re.search(r"\d", r.low[max(0, verdict.start - 60) : verdict.start]):
            found.append(verdict)
    return found


def _named(r: Prepared) -> list[Verdict]:
    """ "Fluency: 4", "| Accuracy | 3 |", "Score for clarity: 3": ratings of named criteria."""
    found = []
    for match in forms.bounded(_NAMED, r.low):
        name = _name_before(r.low, match.start())
        if name is None or _NOT_RATINGS.match(name) or forms.is_count(r.text, match) or _is_list_item(r.low, match):
            continue
        if forms.is_hypothetical(r.low, match.end()) or forms.is_supposed(r.low, match.start()):
            continue
        verdict = forms.verdict_of(match, "named")
        if verdict.value is not None:
            found.append(verdict)
    return found


def _other_aspects(r: Prepared) -> tuple[Prepared, int]:
    """With an aspect asked and not rated, the ratings of the other aspects ("Fluency: 5", "fluent (5/5)") go;
    how many there were tells "two verdicts" from "no verdict"."""
    spans = []
    for match in forms.bounded(_NAMED, r.low):
        name = _name_before(r.low, match.start())
        if name is not None and not _LABEL_NAME.search(name) and not _NOT_RATINGS.match(name):
            spans.append((match.start() - len(name) - 1, match.end()))
    for match in forms.bounded(_PAREN_NUMBER, r.low):
        word = _WORD_BEFORE.search(r.low, max(0, match.start() - 40), match.start())
        if word is not None and not _LABEL_NAME.search(word.group(0)):
            spans.append((word.start(), match.end()))
    spans = [(max(0, a), b) for a, b in spans]
    return replace(r, text=_blank(r.text, spans), low=_blank(r.low, spans)), len(spans)


def label_words(low: str, words: dict[str, float], start: int = 0) -> list[Verdict]:
    """A label word in a verdict's place: "Rating: Positive", "[RESULT] highest", "I'd rate it the highest"."""
    if not any(word in low for word in words):
        return []
    alt = "|".join(re.escape(w.lower()) for w in sorted(words, key=len, reverse=True))
    pattern = re.compile(
        r"(?m:(?:\A\W*|\b(?:score|rating|grade|result|verdict|answer)\W{0,4}(?:is\s+)?|^[^\S\n]*\w+[^\S\n]*[:=][^\S\n]*"
        r"|(?<=[.!?])\s+|\b(?:rate|rated|give)\b"
        + forms.GAP
        + r"\b(?:as\s+)?))(?:the\s+|a\s+|an\s+)?[\"']?(?P<word>"
        + alt
        + r")\b[\"']?(?=\W*\Z|[^\S\n]*[.,;!)\n]|[^\S\n]+[-\u2013\u2014])",
        FOLDED,
    )
    for match in pattern.finditer(low[start:]):
        if not is_negated(match.string, match.start("word")):
            value = words[match.group("word")]
            return [Verdict(value, None, start + match.start("word"), start + match.end(), "label word")]
    return []


def _top(low: str, scale: Scale) -> list[Verdict]:
    """ "This deserves a perfect score!": the top of the scale; "not a perfect score" and "a perfect score
    would require ..." are not."""
    return [
        Verdict(scale.high, None, m.start(), m.end(), "top")
        for m in forms.TOP.finditer(low)
        if not is_negated(low, m.start()) and not forms.is_hypothetical(low, m.end())
    ]


def _max_first(r: Prepared, found: list[Verdict]) -> list[Verdict]:
    """ "별점: 다섯 개 중 세 개", "評価：5段階中4": after a label, the scale's top may come first."""
    read = []
    for verdict in found:
        match = next((m for p in forms.present(forms.MAX_FIRST, r.low) if (m := p.match(r.low, verdict.start))), None)
        read.append(forms.verdict_of(match, verdict.kind) if match else verdict)
    return read


# The classes of ``_general_classes`` whose verdicts are stated ones (labels, rating verbs, fractions): one of
# them that disagrees with the class that decided makes two verdicts ("I'd give it 4/5 for clarity but only
# 2/5 for accuracy").
_STRONG = (0, 2, 4)


def _sole(
    found: Verdict, others: list[Callable[[], list[Verdict]]], r: Prepared, refused: list[re.Match[str]], scale: Scale
) -> Verdict:
    """``found``, unless a later class of stated verdicts gives a different one: after a self-correction the
    later of the two stands, without one they are two verdicts. A bare number off the scale there is no
    rival ("gets the sample size right (n = 412)")."""
    if found.ambiguous:
        return found
    for general in others:
        for other in _usable(general(), r.low, refused):
            if other.den is None and (other.value is None or not scale.low <= other.value <= scale.high):
                continue
            # "打3分（满分5分）", "4 Sterne ★★★★☆": the same number with and without its scale agree.
            if other.value == found.value and (other.den is None or found.den is None or other.den == found.den):
                continue
            first, last = sorted((found, other), key=lambda v: v.start)
            if not _CUE.search(r.low, first.end, max(first.end, last.start)):
                return replace(found, ambiguous=True)
            if last is other:
                return other
    return found


def _general_classes(
    r: Prepared, bold: list[Verdict], scale: Scale, options: Options
) -> tuple[Callable[[], list[Verdict]], ...]:
    def several(*patterns: Lazy, kind: str, prose: bool = True, ambiguous: bool = False) -> list[Verdict]:
        return [v for p in patterns for v in find(p, r.text, r.low, kind, prose=prose, ambiguous=ambiguous)]

    templates = forms.present(forms.VERDICT_TEMPLATES, r.low)
    verbs = (forms.VERB, forms.IS_A, forms.UPPER_BOUND, forms.LEVEL, forms.ORDINAL, *templates)
    return (
        lambda: (
            _max_first(r, several(forms.LABELED, forms.GLOSSED, kind="label"))
            # "Schulnote: 2": a number on another scale whatever its value.
            + [replace(v, den=float("inf")) for v in several(forms.OTHER_SCALE, kind="label")]
        ),
        lambda: [] if options.aspect else _named(r),
        lambda: several(*verbs, kind="verb"),
        lambda: _top(r.low, scale),
        lambda: several(forms.FRACTION, *forms.present(forms.MAX_FIRST, r.low), kind="fraction"),
        lambda: bold,
        lambda: [v for v in several(forms.ARTICLE_WORD, kind="article") if r.text[v.start].isalpha()],
        lambda: label_words(r.low, options.words),
        lambda: [
            v
            for v in several(*forms.present(forms.RANGES, r.low), kind="range", prose=False, ambiguous=True)
            if not _YEAR.match(r.low, v.start)
        ],
        lambda: [] if r.is_list else several(forms.LEADING, kind="leading"),
        lambda: find(forms.TRAILING, r.text, r.low, "trailing", prose=True, span=forms.tail(r.low)),
    )


# "1. Accuracy: The response correctly", "2) Clarity": an enumeration's number opens a line, then a word.
_LINE_START = Lazy(r"(?:\A|\n)[^\S\n]*+\Z")
_LIST_AFTER = Lazy(r"[.)][^\S\n]++[^\W\d_]")


def _is_list_item(low: str, match: re.Match[str]) -> bool:
    start = match.start("num")
    return _LIST_AFTER.match(low, match.end("num")) is not None and (
        _LINE_START.search(low, max(0, start - 40), start) is not None
    )


def _paper(r: Prepared, scale: Scale) -> Verdict | None:
    """The paper's rule (Chiang & Lee 2023, appendix D.2.1): drop "out of <max>" and "/<max>", take the first
    number. A denominator other than the scale's maximum survives this and marks another scale. Years,
    counts, references, examples and hypotheticals ("a 5... if") are skipped: they are not ratings.

    The first number is a guess at a terse answer, not a stated verdict: off the scale ("502 Bad Gateway")
    it means there is none, and another plausible number after it ("Hmm. 3? Maybe 4.") makes two."""
    hi = re.escape(fmt(scale.high))
    # "4 z 5", "7 av 10": a short word between a number and the scale's top is "of" in some language; a range's
    # or an alternative's word is not ("3 to 5", "3 o 5").
    of_any = rf"(?<=\d)[^\S\n]+(?!(?:{forms.JOINS})[^\S\n])[^\W\d_]{{1,3}}[^\S\n]+"
    top = rf"(?<!\s)\s*+(?:/|out\s+of)\s*+{hi}(?![\d.])|{of_any}{hi}(?![\d.])"
    spans = [m.span() for m in re.finditer(top, r.low)]
    text, low = _blank(r.text, spans), _blank(r.low, spans)
    found = []
    for match in forms.bounded(_PAPER_NUM, low):
        token = match.group("num")
        if re.fullmatch(r"\d{4,}", token) or forms.is_reference(low, match.start()) or is_negated(low, match.start()):
            continue
        if forms.is_count(text, match) or forms.is_hypothetical(low, match.end()):
            continue
        if forms.is_supposed(low, match.start()) or _is_list_item(low, match):
            continue
        after = _AFTER_DEN.match(low, match.end())
        den = float(after.group(1)) if after else None
        found.append(Verdict(to_number(token), den, match.start(), match.end(), "paper"))
    if not found:
        return None
    first = found[0]
    if first.value is None or not scale.low <= first.value <= scale.high or first.den not in (None, scale.high):
        return None
    plausible = [v for v in found if v.value is not None and scale.low <= v.value <= scale.high]
    return resolve(plausible, r.low)


def _in_refusal(low: str, verdict: Verdict, refusal: re.Match[str]) -> bool:
    """The verdict belongs to the refusal. Before it, in its own clause: "Score: 0 — I refuse to rate". After
    it, unless a contrast turns the answer round ("I can't comment on X, but I'd give it a 4") or the verdict
    is an explicit final marker or a label on a line of its own: a sentence end alone does not set apart a
    number that goes on explaining the refusal ("I cannot rate this. Giving it 2/5 would be misleading")."""
    if refusal.start() >= verdict.start:
        between = low[verdict.end : refusal.start()]
        return len(between) < 400 and _CONTRAST.search(between) is None
    if verdict.kind in _MARKED or (verdict.kind == "verb" and _stated(low, refusal.end(), verdict.start)):
        return False
    return not set_apart(low, refusal.end(), verdict.start, own_line=verdict.kind == "label")


def _stated(low: str, after: int, start: int) -> bool:
    """The judge rates in its own voice, in a sentence of its own after the refusal: "I cannot evaluate the
    runtime behaviour. Reading the code, I'd give it a 4." ("给2分也不公平" and "Giving it 2/5 ..." are not)."""
    clause = low[max(after, start - 80) : start]
    cut = max(clause.rfind(c) for c in ".!?;\n")
    return cut >= 0 and not taken_back(low, start) and forms.FIRST_PERSON.search(clause, cut) is not None


def _usable(found: list[Verdict], low: str, refused: list[re.Match[str]]) -> list[Verdict]:
    """After a refusal, "If it were complete, I might give it a 3", "even a 1" and a number inside the refusal
    are no verdicts."""
    if not refused:
        return found
    return [v for v in found if not is_conditional(low, v.start) and not any(_in_refusal(low, v, x) for x in refused)]


# What a withdrawing refusal declines: the rating or the response as a whole ("decline to score this one.", "withdraw
# the rating and ...", "provide a rating for this essay."), not one side of it ("can't evaluate the runtime").
_WHOLE = Lazy(
    r"\w*+(?:[^\S\n]+(?:this|it|that|the|any|a|my|your)(?:[^\S\n]+(?:response|answer|essay|text|submission|content|piece"
    r"|one|output|summary|story|translation|rating|score|grade|evaluation|request|task|number|code|poem)s?)?)?"
    r"(?:[^\S\n]+(?:for|of|to)[^\S\n]+(?:this|it|that|the)(?:[^\S\n]+[^\W\d_]++)?)?"
    r"(?:[^\S\n]+(?:at\s+all|any\s+further|here|now|either|anymore))?[^\S\n]*+(?:[.!;\n]|\Z|,?[^\S\n]*+and\b)"
    # "... a score for propaganda like this at all."
    r"|[^.!?;\n]{0,60}?\bat\s+all\b",
    FOLDED,
)
_DIGIT = Lazy(r"\d")


def withdrawn(low: str, refused: list[re.Match[str]]) -> bool:
    """The answer ends by refusing the rating as a whole, with no number after the refusal and no contrast that
    turns it round: what it rated before is withdrawn ("Rating: 4/5 ... I withdraw the rating and decline to
    evaluate this response.", "Please disregard the 1; I'm declining to score this response.")."""
    last = max(refused, key=lambda m: m.start(), default=None)
    if last is None or _DIGIT.search(low, last.start()) is not None or is_conditional(low, last.start()):
        return False
    return _WHOLE.match(low, last.end()) is not None and _CONTRAST_WORD.search(low, last.end()) is None


# After its verdict, the judge says it cannot choose between two numbers ("3 or 4, I can't decide between them"), or
# announces a correction it never gives ("Grammaticality: 4. Wait, I need to revise.").
_UNDECIDED = Lazy(
    r"(?:can't|cannot|can\s+not|couldn't|could\s+not)\s+(?:decide|choose|pick|settle)\s+(?:between|on\s+one\b|which\s+"
    r"(?:score|number|rating|grade|one)\b)|(?:torn|undecided|wavering)\s+between"
    r"|(?:hard|difficult|impossible)\s+to\s+(?:choose|decide|pick)\s+between",
    FOLDED,
)
_BETWEEN_NUMBERS = Lazy(
    r"[^\S\n]*+(?:them|these|those|the\s+two(?:\s+(?:scores|numbers|ratings|grades))?(?![^\S\n]+[^\W\d_])|(?:an?\s+)?\d)",
    FOLDED,
)
_ANNOUNCED = Lazy(
    r"(?<![^\W\d_])(?:i\s+(?:need|have|want|ought)\s+to|let\s+me|i(?:'ll|\s+will|\s+should|\s+must))\s+"
    r"(?:revise|reconsider|re-?evaluate|rethink|correct|amend|change|adjust|update|redo)(?![^\W\d_])",
    FOLDED,
)


def _settled(low: str, found: Verdict) -> Verdict:
    """``found``, unless what follows it, with no number after, unsettles it: an indecision between numbers makes
    two verdicts, an announced correction that never comes leaves none."""
    for undecided in _UNDECIDED.finditer(low, found.end):
        after = undecided.end()
        # "torn between praising the style and ..." is no indecision about the number.
        if undecided.group(0).endswith("between") and _BETWEEN_NUMBERS.match(low, after) is None:
            continue
        # Its own numbers ("between a 3 and a 4") are the two; a number in a later sentence may settle it.
        end = SENTENCE_END.search(low, after)
        if end is None or _DIGIT.search(low, end.end()) is None:
            return replace(found, ambiguous=True)
    announced = _ANNOUNCED.search(low, found.end)
    if announced is not None and _DIGIT.search(low, announced.end()) is None:
        return Verdict(None, None, found.start, found.end, "announced")
    return found


def read_prose(
    r: Prepared, bold: list[Verdict], scale: Scale, options: Options, refused: list[re.Match[str]]
) -> Verdict | None:
    """The verdict of an answer without JSON or ``[RESULT]``; None when it has none. Two verdicts come back as
    an ambiguous verdict. ``refused``: where the answer refuses (``lexicon.refusals``)."""
    if refused and withdrawn(r.low, refused):
        return None
    found = _tiers(r, bold, scale, options, refused)
    return found if found is None or found.ambiguous else _settled(r.low, found)


def _tiers(
    r: Prepared, bold: list[Verdict], scale: Scale, options: Options, refused: list[re.Match[str]]
) -> Verdict | None:
    """The tiers in order (``llmjudge.parsing``, step 5): the first that finds a verdict decides."""
    if options.aspect:
        aspect = [v for p in forms.aspect_patterns(options.aspect) for v in find(p, r.text, r.low, "aspect")]
        found = resolve(_usable(aspect, r.low, refused), r.low)
        if found is not None:
            return found
    found = resolve(_usable(_final_tier(r), r.low, refused), r.low)
    if found is not None:
        return found
    others = 0
    if options.aspect:
        r, others = _other_aspects(r)
    classes = _general_classes(r, bold, scale, options)
    for index, general in enumerate(classes):
        found = resolve(_usable(general(), r.low, refused), r.low)
        if found is not None:
            return _sole(found, [classes[i] for i in _STRONG if i > index], r, refused, scale)
    if refused:
        return None
    found = _paper(r, scale)
    if found is None and others >= 2:
        return Verdict(None, None, 0, 0, "other aspects", ambiguous=True)
    return found
