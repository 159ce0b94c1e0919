"""The forms a score verdict takes, as compiled patterns, and the checks that tell a verdict from a number.

``parse_score`` (``llmjudge.parsing.scores``) asks for them tier by tier; ``find`` returns every ``Verdict``
of a form in the text, already filtered (counts, negations, hypotheticals skipped). The patterns read the
case-folded text (``lexicon.fold``) and are written in lower case; the one check that needs the case (is
the word after a number lower-case?) reads the original text at the same position.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from llmjudge.parsing.common import SENTENCE_END, is_negated
from llmjudge.parsing.lexicon import (
    DEN,
    DEN_BODY,
    FLAGS,
    FOLDED,
    LETTER,
    LEX,
    NUM,
    NUMBER,
    Lazy,
    alternation,
    aspect_names,
    template,
    template_needs,
    to_number,
)


@dataclass(frozen=True)
class Verdict:
    """A number read as the answer's rating: ``den`` is its "/5" or "out of 5", if any."""

    value: float | None
    den: float | None
    start: int
    end: int
    kind: str = ""
    ambiguous: bool = False  # "3 or 4", "between 3 and 4": two verdicts and no final one


# A label's separator: "Score: 4", "| Overall | 4 |", "Rating - 3", "点数は4", "评分为2".
_SEP = r"(?:[:=|]|-(?!\d)|[\u2013\u2014]|\bis\b|\bwould\s+be\b|は|는|은|为|為)"
_OPTIONAL_SEP = rf"[^\S\n]*+\]?\s*+(?:{_SEP}|\bof\b|\bde\b)?\s*+"
_REQUIRED_SEP = rf"[^\S\n]*+\]?[^\S\n]*+{_SEP}\s*+"
_OPEN = r"(?:\\boxed\{\s*+)?[(\[]{0,2}\s*+"
_PCT = r"(?P<pct>[^\S\n]*+%)?"
_ANY_LABEL = rf"(?:{LEX.bare_labels}|{LEX.labels})"
# The gap between a verdict verb and its number may not cross a sentence end, a digit, or a word that
# turns the sentence around ("I cannot give a rating because the 3 characters ...").
# The words are checked after a space only, where a word starts: a check at every character made a page of
# "I'd give it a" cost five times as much.
GAP = (
    r"(?:[^.\n\d!?;\s]|\s(?!(?:because|since|but|however|although|not|cannot|can't|unable|if|when|unless)\b))"
    r"{0,60}?"
)


def _c(pattern: str) -> Lazy:
    return Lazy(pattern, FOLDED)


LABELED = _c(
    rf"(?:{alternation(['my', 'your', 'the'])}\s+)?(?:{LEX.bare_labels}{_OPTIONAL_SEP}|{LEX.labels}{_REQUIRED_SEP})"
    + _OPEN
    + NUM
    + DEN
    + _PCT
)
# "Calificación: excelente (5)", "Оценка: «отлично» (5)": a label word, then its number in parentheses.
GLOSSED = _c(rf"{_ANY_LABEL}{_REQUIRED_SEP}[«\"']?[^\W\d_]{{2,20}}[»\"']?[^\S\n]*+\(\s*+{NUM}\s*+\)")
OTHER_SCALE = _c(rf"{LEX.other_scale_labels}{_REQUIRED_SEP}{_OPEN}{NUM}")
FINAL_LABELED = _c(
    rf"(?:{LEX.final_prefixes}[^\S\n]+(?:{_ANY_LABEL}|verdict|answer|decision|assessment|evaluation)"
    rf"{_OPTIONAL_SEP}|{_ANY_LABEL}[^\S\n]+{LEX.final_suffixes}{_OPTIONAL_SEP}|{LEX.final_labels}{_OPTIONAL_SEP}"
    rf"|{LEX.final_prefixes}{_REQUIRED_SEP})" + _OPEN + NUM + DEN + _PCT
)
BOXED = _c(rf"\\boxed\{{\s*+{NUM}{DEN}\s*+\}}")
TAGGED = _c(rf"<(?P<tag>answer|score|rating|grade)>\s*+{NUM}{DEN}\s*+</(?P=tag)>")
DOUBLE_BRACKET = _c(rf"\[\[\s*+{NUM}{DEN}\s*+\]\]")
# The explicit final markers, searched in the whole of a long answer too (``normalize.window``), and the
# literal words one of which each of their matches holds.
FINALS = (FINAL_LABELED, BOXED, TAGGED, DOUBLE_BRACKET)
FINAL_KEYS = (*LEX.final_words, "\\boxed", "</", "[[")
REVISED = _c(rf"{LEX.revisions}{GAP}\b(?:to|at|on|as)\s+(?:a\s+|an\s+)?{NUM}{DEN}")
DECIDED = _c(rf"{LEX.decisions}[^\S\n]*+(?:(?:to|at|on|with|a|an|towards?)\s+){{0,2}}{NUM}{DEN}")
# "I'd say 3... actually, no — 4", "Eu daria um 3... não, um 4", "Поставлю 3... нет, всё-таки 4".
CORRECTED = _c(
    rf"{LEX.corrections}[\s,.:;!\u2013\u2014\-]*+(?:(?:let's\s+say|i'd\s+say|make\s+it|it's|it\s+is|um|uma|un|una|une"
    rf"|a|an|to|rather|eher|plutôt|скорее|piuttosto|más\s+bien|mais\s+para)\s+)?{NUM}{DEN}"
)
# "the original 3 was right after all", "my first 4 stands": a correction of a correction, back to an earlier number.
RESTORED = _c(
    r"\b(?:the|my)\s+(?:original|initial|first|earlier|previous)\s+(?:(?:score|rating|grade|verdict|number)\s+(?:of\s+)?)?"
    + NUM
    + DEN
    + r"(?=[^\S\n]+(?:(?:was|is)\s+(?:right|correct|fair|fine|accurate|the\s+right\s+one)|stands|holds)\b)"
)
# The templates of the word lists, each with the words it needs (see ``present``).
NEEDS: dict[Lazy, tuple[str, ...]] = {}


def _templates(texts: tuple[str, ...], groups: Callable[[str], dict[str, str]]) -> tuple[Lazy, ...]:
    compiled = []
    for text in texts:
        pattern = _c(template(text, groups(text)))
        NEEDS[pattern] = template_needs(text)
        compiled.append(pattern)
    return tuple(compiled)


def present(patterns: tuple[Lazy, ...], low: str) -> tuple[Lazy, ...]:
    """The templates among ``patterns`` whose words all occur in ``low``: the others cannot match, and a
    page of digits would cost each of them a search."""
    return tuple(p for p in patterns if all(word in low for word in NEEDS.get(p, ())))


DECISION_TEMPLATES = _templates(LEX.decision_templates, lambda _: {"n": f"(?P<num>{NUMBER})"})
VERB = _c(rf"{LEX.verbs}{GAP}{NUM}{DEN}")
IS_A = _c(
    r"\b(?:this|it|that|which|one|response|answer|summary|text|essay|story|reply|translation)(?:\s+one)?"
    r"\s*(?:is|'s|was|would\s+be|lands\s+at|sits\s+at)\s+(?:about\s+|roughly\s+|around\s+)?(?:a|an)\s+"
    rf"(?:(?:solid|strong|weak|low|high|fair|generous|clear|perfect|decent|good)\s+)?{NUM}{DEN}"
)
UPPER_BOUND = _c(rf"\b(?:no|not|never)\s+(?:better|higher|more)\s+than\s+(?:a\s+|an\s+)?{NUM}{DEN}")
LEVEL = _c(
    rf"\b(?:meets|reaches|achieves|is\s+at|falls\s+(?:in|into|at|within)|sits\s+at)\s+(?:the\s+)?{LEX.levels}"
    rf"\s+{NUM}"
)
# "this deserves a perfect score!": the scale's top, whatever its number.
TOP = _c(rf"(?:\b(?:a|the)\s+)?{LEX.top_phrases}(?![^\S\n]*+(?:of\s+)?\d)")
ORDINAL = _c(rf"(?P<ord>{LEX.ordinal_words})\s+{LEX.levels}")
VERDICT_TEMPLATES = _templates(LEX.verdict_templates, lambda _: {"n": f"(?P<num>{NUMBER})"})
FRACTION = _c(NUM + DEN_BODY + _PCT)
MAX_FIRST = _templates(LEX.max_first, lambda _: {"n": f"(?P<num>{NUMBER})", "max": f"(?P<den>{NUMBER})"})
BOLD = _c(rf"\*\*\s*+{NUM}{DEN}\s*+\*\*")
# "this is a solid three.": an article before a number word marks it as a rating, not a count (the word is
# checked on the original text: "a 3" is no such form).
ARTICLE_WORD = _c(rf"\b(?:a|an)\s+(?:(?:solid|strong|weak|low|high|fair|generous)\s+)?{NUM}{DEN}")
_END_ARTICLE = r"(?:a\s+|an\s+|um\s+|un\s+|una\s+)?"
# No article before a template's first number: a pattern that starts with an optional group is tried at
# every position of the text, one that starts with a digit only where a digit is.
RANGES = _templates(
    LEX.ranges,
    lambda t: {
        "a": f"{'' if t.startswith('{a}') else _END_ARTICLE}(?P<num>{NUMBER})",
        "b": f"{_END_ARTICLE}(?P<b>{NUMBER})",
    },
)
# The ranges that make a verdict two ("somewhere between 3 and 4", "60–70/100", "3-4"): all but "{a} / {b}",
# which is also how a fraction is written, and the alternatives ("3 or 4"), which ``_ALTERNATIVE`` reads.
_RANGE_CHECKS = tuple(
    p
    for t, p in zip(LEX.ranges, RANGES, strict=True)
    if not any(w == "/" or re.fullmatch(LEX.alternatives, w) for w in t.split())
)
LEADING = _c(rf"\A[\s#>]*{NUM}{DEN}[^\S\n]*+(?:{LEX.units})?[^\S\n]*+(?:[.:;,!)\-\u2013\u2014]|\n|\Z)")
# Searched in the answer's last characters only (``tail``): a pattern that may start at every line break of
# a page of line breaks would cost its square.
TRAILING = _c(rf"(?:\A|[.!?:]\s|\n)\s*+{NUM}{DEN}[^\S\n]*+[.!]?\s*\Z")
TAIL = 120

# The words that join a range's or an alternative's two numbers, in the ten languages.
JOINS = rf"{LEX.alternatives}|to|and|y|e|et|und|bis|и|до|a|à|al|até|ao"
# After a rating come "stars", "out of", "because", "overall", an adverb...; any other lower-case word
# makes the number a count ("2 twists and 1 major flaw", "3 sentences", "2 ошибки"). A capital starts a
# new sentence ("5 Great story!").
_COUNT = Lazy(
    r"[^\S\n]+(?!(?:stars?|points?|out|of|and|or|to|for|because|but|since|as|on|in|overall|given|due|is|was|"
    r"would|will|should|seems?|feels?|here|there|at|with|without|from|by|after|before|this|it|considering|too|"
    r"though|while|then|now|also|based|which|so|if|even|despite|being|i|tops|max|instead|rather|myself|"
    r"leaning|once|until|unless|when|whereas|except|"
    r"from|après|porque|pois|parce|weil|perché|потому|так|но|aber|mais|pero|ma|mas|\w+ly)\b)"
    # "4 z 5", "7 av 10": a short word and a number make "of" in a language without a word list.
    rf"(?!{LEX.units}|{LEX.of}\s*+\d|{LEX.alternatives}\s*+\d|(?!(?:{JOINS})[^\S\n])[^\W\d_]{{1,3}}[^\S\n]+\d)"
    r"(?-i:[a-zà-ÿа-яё])",
    FLAGS,
)
# "3 of the 4 key points", "2 de los 3", "2 dei 5 punti", "5 reasons, 2 of which": a part of a count.
_PART_OF = _c(
    r"\s+(?:of|de|dei|degli|delle|des|du|von|из|em)\s+(?:the|which|them|los|las|les|la|el|der|den|die|das|os|as|"
    r"i|gli|le|these|those|its|all)\b"
)
# "the response gave 7, two of which are duplicates": a count whose part is counted next.
_COUNTED = _c(
    r",[^\S\n]*+(?:\d+|[^\W\d_]+)[^\S\n]+(?:of|de|von|из)[^\S\n]+(?:which|them|these|those|denen|ellos|elles)\b"
)
# "A score of 5 would require vivid imagery", "1/5 would be unfair", "Un 2 sería injusto", "deserves a 5... if the
# citations were real": a number the answer talks about, not its rating. A number that "would be fair" (or
# "right", "my score", "justo", "angemessen"...) is the verdict, in a softer voice.
_APPROVING = (
    r"(?:be\s+(?:(?:about|just|more\s+or\s+less)\s+)?(?:my\b|the\s+(?:right|correct|fair|appropriate|most)\b|a\s+(?:fair|reasonable)\b"
    r"|fair\b|appropriate\b|right\b|reasonable\b|accurate\b|justified\b|warranted\b|apt\b|suitable\b|correct\b"
    r"|defensible\b|honest\b|(?:the\s+)?(?:better|safer|stronger|preferred|preferable|superior|winner|best)\b"
    r"|more\s+(?:accurate|appropriate|fitting|suitable|reasonable|correct|helpful|useful)\b)"
    r"|(?:reflect|fit|suit|capture|describe|sum|recommend|seem\s+(?:fair|right|appropriate))\w*\b"
    r"|(?:be\s+)?(?:preferred|chosen|picked)\b)"
)
_APPROVING_FOREIGN = (
    r"(?:justo|justa|adecuad|apropiad|razonable|correct|mi\s|gerecht|angemessen|fair|richtig|passend|meine\s|juste"
    r"|approprié|raisonnable|ma\s|giust|adeguat|appropriat|ragionevol|il\s+mio|adequad|razoável|minha\s"
    r"|справедлив|уместн|правильн|разумн)"
)
_WOULD = (
    r"would(?:n't|\s+not)?\s+(?!"
    + _APPROVING
    + r")[^\W\d_]|(?:sería|wäre|serait|sarebbe|seria|было\s+бы)\s+(?!"
    + _APPROVING_FOREIGN
    + ")"
)
# "Score: 4 — would recommend with edits" keeps its 4: only an "if" may follow a dash or an ellipsis.
# A word may stand between the number and its "would": "A 5 here would require ...", "a 4 rating would mean ...".
_HYPOTHETICAL = _c(
    r"[^\S\n]*+(?:(?:here|there|rating|score|grade|on\s+this\s+scale|in\s+this\s+case)[^\S\n]++(?=would))?(?:"
    + _WOULD
    + r"|requires|needs|is\s+reserved|(?:分|点|점)?(?:也|都)(?:不|会|没|是)"
    + r"|(?:(?:\.{2,3}|\u2026|[\u2013\u2014])[^\S\n]*+)?(?:if|unless|si|se|wenn|falls|если)\s)"
)
# A choice the answer talks about: "[[A=B]] would be misleading" (no "if": "B if I must pick" is a choice).
_WOULD_CHOICE = _c(r"[^\S\n]*+(?:" + _WOULD + ")")
_REFERENCE = _c(rf"(?:{LEX.references})\s*#?\s*\Z|第\s*\Z")
_EXAMPLE = _c(r"(?:e\.\s*g\.|for example|for instance|such as|like)\s*,?\s*\(?\Z")
# "3 or 4", "3分或4分", "3점 또는 4점", "3 ou 4": two verdicts. The unit may stand after each number.
_ALT_UNIT = rf"(?:[^\S\n]*+(?:分|点|점|{LEX.units}))?"
_ALTERNATIVE = _c(
    rf"{_ALT_UNIT}[^\S\n]*+(?:{LEX.alternatives}|-|\u2013|to|/|\u301c|\uff5e|到)[^\S\n]*+(?:a\s+|an\s+)?"
    rf"(?<![{LETTER}.])\d+(?:\.\d+)?(?![{LETTER}])"
)
# "3/5, maybe 4/5", "I'll go with 3. Hmm, or 4.": a second number offered as a hedge, not a correction ("3, or
# rather 4" corrects) nor a condition ("4, maybe 5 if the sources were cited" is a 4).
_HEDGE = _c(
    r"(?:[,;]|[^\S\n]*+(?:[.!?]|\.\.\.|\u2026)?[^\S\n]*+(?:hmm+|um+|well)[,.]?)?[^\S\n]*+"
    r"(?:(?:or\s+)?(?:maybe|perhaps|possibly)|or)[^\S\n]+(?:even\s+)?(?:a\s+|an\s+)?\d+(?:\.\d+)?(?!\.?\d)"
    rf"(?:{DEN_BODY})?(?![^\S\n]*+(?:if|once|when|unless|with|after)\b)"
)
# "around a 7 or 8 out of 10": the other number before the verdict.
_ALTERNATIVE_BEFORE = _c(
    rf"(?<![{LETTER}.])\d+(?:\.\d+)?{_ALT_UNIT}[^\S\n]*+(?:{LEX.alternatives})[^\S\n]*+(?:a\s+|an\s+)?\Z"
)


# A judge speaking for itself, in the ten languages: "I'd give it", "je donne", "ich gebe", "我给", "私は".
FIRST_PERSON = Lazy(
    r"(?<![^\W\d_])(?:i|i'd|i'll|i'm|we|we'd|je|j'|ich|yo|eu|io|я|мы)(?![^\W\d_])|我|私は|私の|저는|제가|나는"
    r"|(?<![^\W\d_])(?:doy|dou|daría|daria|darei|darò|donne|donnerais|gebe|würde|поставлю|поставил)(?![^\W\d_])",
    FOLDED,
)
# A supposition ("Suppose we score it a 4", "Had it cited its sources, I'd give it a 5", "假设给5分") or another
# rater's score ("Most readers would give this a 5", "a reference answer that would score 5") is not the judge's
# verdict: a number after one in its sentence is skipped, unless a contrast turns the sentence round ("...,
# but I'd go lower: a 3") or, after another rater, the judge speaks for itself or the rater's clause ends.
_SUPPOSED = _c(LEX.suppositions)
# Opening the sentence, after markup: "Suppose we ...", "Had the author ...". Followed by "to", either is the
# judge's own hedge: "Were I to rate it, 4", "If I had to pick, 4".
_OPENING = _c(rf"[\s*_#>\-]*+(?:{LEX.suppositions_opening})")
_OPENING_WORD = _c(LEX.suppositions_opening)
_TO = _c(r"\s+to\b")
_OTHER_RATER = _c(LEX.other_raters)
_CONTRAST = _c(LEX.contrasts)
# Another rater's clause ends at a comma, a colon or a dash: "an ideal answer would hold — call it a 3" is a 3.
_CLAUSE_BREAK = _c(r"[,:\u2013\u2014\uff0c\u3001]|\s-\s")


@lru_cache(maxsize=8)
def _cues(low: str) -> tuple[tuple[int, ...], ...]:
    """Where the suppositions, the sentence-opening ones and the other raters of ``low`` start (the text is
    searched once, not once per number)."""
    return tuple(tuple(m.start() for m in p.finditer(low)) for p in (_SUPPOSED, _OPENING_WORD, _OTHER_RATER))


def is_supposed(low: str, start: int) -> bool:
    """The number at ``start`` of the folded ``low`` is a supposition's or another rater's."""
    begin = max(0, start - 200)
    cues = _cues(low)
    if not any(bisect_left(c, start) > bisect_left(c, begin) for c in cues):
        return False
    ends = [m.end() for m in SENTENCE_END.finditer(low, begin, start)]
    begin = ends[-1] if ends else begin
    opening = _OPENING.match(low, begin)
    supposed = [m.end() for m in _SUPPOSED.finditer(low, begin, start) if not _TO.match(low, m.end())]
    if opening is not None and opening.end() <= start and not _TO.match(low, opening.end()):
        supposed.insert(0, opening.end())
    if supposed and _CONTRAST.search(low, supposed[-1], start) is None:
        return True
    other = [m.end() for m in _OTHER_RATER.finditer(low, begin, start)]
    return bool(other) and not (
        _CONTRAST.search(low, other[-1], start)
        or FIRST_PERSON.search(low, other[-1], start)
        or _CLAUSE_BREAK.search(low, other[-1], start)
    )


def verdict_of(match: re.Match[str], kind: str, *, ambiguous: bool = False) -> Verdict:
    groups = match.groupdict()
    den = groups.get("den")
    value = LEX.ordinals.get(groups["ord"].lower()) if groups.get("ord") else to_number(groups["num"] or "")
    den_value = to_number(den) if den else None
    if groups.get("pct"):
        den_value = 100.0
    tail = match.string[match.end() : match.end() + 40]
    start = match.start("ord") if groups.get("ord") else match.start("num")
    before = match.string[max(0, start - 24) : start]
    ambiguous = (
        ambiguous
        or bool(groups.get("b"))
        or _ALTERNATIVE.match(tail) is not None
        or _HEDGE.match(tail) is not None
        or _ALTERNATIVE_BEFORE.search(before) is not None
    )
    return Verdict(value, den_value, start, match.end(), kind, ambiguous or in_range(match.string, start))


_DATE_BEFORE = re.compile(r"[\d.\-/]")
_DATE_AFTER = re.compile(r"[-.]\d")
# How far before a verdict's number its range may start ("somewhere between 3" is 16 characters).
_RANGE_REACH = 40


def in_range(low: str, start: int) -> bool:
    """The number at ``start`` of the folded ``low`` is one end of a range ("between 3 and 4", "60–70/100"): without
    a commitment after it, two verdicts. A date ("2024-05-12") is no range: its parts are not read as verdicts."""
    if start > 0 and (low[start - 1].isdigit() or low[start - 1] == "."):
        return False
    window = low[max(0, start - _RANGE_REACH) : start + _RANGE_REACH]
    for pattern in present(_RANGE_CHECKS, window):
        for match in pattern.finditer(low, max(0, start - _RANGE_REACH), start + _RANGE_REACH):
            if start in (match.start("num"), match.start("b")) and not _date_like(low, match):
                return True
    return False


def _date_like(low: str, match: re.Match[str]) -> bool:
    """ "2019-2020", "05-12" inside "2024-05-12": joined to more digits, or years, not a range of scores."""
    start = match.start("num")
    joined = (start > 0 and _DATE_BEFORE.match(low, start - 1) is not None) or _DATE_AFTER.match(low, match.end("b"))
    return bool(joined) or len(match.group("num")) >= 4 or len(match.group("b")) >= 4


# "a 10-step guide", "a 3-paragraph answer": a number joined to a word is a measure ("a 4-star answer" is a rating).
_COMPOUND = Lazy(rf"-(?!(?:{LEX.units}))(?-i:[a-zà-ÿа-яё])", FLAGS)


def is_count(text: str, match: re.Match[str]) -> bool:
    """``text`` is the original-case text ``match`` was found in (folded)."""
    groups = match.groupdict()
    if not groups.get("num") or not groups["num"][0].isdigit():
        return False
    end = match.end("den") if groups.get("den") else match.end("num")
    if _COMPOUND.match(text, match.end("num")) is not None:
        return True
    return (
        _COUNT.match(text, end) is not None
        or _PART_OF.match(match.string, end) is not None
        or _COUNTED.match(match.string, end) is not None
    )


def is_reference(text: str, start: int) -> bool:
    before = text[max(0, start - 24) : start]
    return _REFERENCE.search(before) is not None or _EXAMPLE.search(before) is not None


# An answer with more matches of one form than this is read from its first and last ones: the checks on
# each match cost more than the search, and a judge's answer has a handful.
MAX_MATCHES = 64


def tail(low: str) -> tuple[int, int]:
    """The span of the last ``TAIL`` characters of ``low`` before its trailing whitespace."""
    stop = len(low.rstrip())
    return max(0, stop - TAIL), stop


def bounded(pattern: Lazy, low: str, span: tuple[int, int] | None = None) -> list[re.Match[str]]:
    """The matches of ``pattern`` in ``low`` (or in ``span`` of it), at most the first and last
    ``MAX_MATCHES // 2`` of them."""
    matches = list(pattern.finditer(low, *span) if span else pattern.finditer(low))
    if len(matches) > MAX_MATCHES:
        matches = matches[: MAX_MATCHES // 2] + matches[-MAX_MATCHES // 2 :]
    return matches


def is_hypothetical(text: str, end: int) -> bool:
    return _HYPOTHETICAL.match(text, end) is not None


def is_hypothetical_choice(text: str, end: int) -> bool:
    """A pairwise choice followed by "would" and a verb ("[[A>B]] would endorse it"), in any language."""
    return _WOULD_CHOICE.match(text, end) is not None


def find(
    pattern: Lazy,
    text: str,
    low: str,
    kind: str,
    *,
    prose: bool = False,
    ambiguous: bool = False,
    span: tuple[int, int] | None = None,
) -> list[Verdict]:
    """Every match of ``pattern`` in ``low`` (the folded ``text``) that is a verdict: prose forms skip counts,
    references and negated verbs."""
    found = []
    for match in bounded(pattern, low, span):
        if match.groupdict().get("num") is None and match.groupdict().get("ord") is None:
            continue
        start = match.start("num") if match.groupdict().get("num") else match.start()
        if prose:
            # "I can't rate it higher than a 3" is a 3; "I would not give it a 5" is no 5.
            negated = is_negated(low, match.start()) and not re.search(r"\b(?:higher|more|better|above)\b", match[0])
            if negated or is_count(text, match) or is_reference(low, start):
                continue
        if is_hypothetical(low, match.end()) or is_supposed(low, start):
            continue
        verdict = verdict_of(match, kind, ambiguous=ambiguous)
        if verdict.value is not None:
            found.append(verdict)
    return found


@lru_cache(maxsize=64)
def aspect_patterns(key: str) -> tuple[Lazy, ...]:
    """The ways an answer rates the aspect ``key`` ("Fluency: 4", "Coherence is strong (4)", "a 4 for relevance",
    "I'd rate the relevance a 2"), in all the languages' names of the aspect."""
    names = aspect_names(key)
    key = key.strip().lower()
    # "Fluency score", "fluency_score", "relevanceScore": the key may run on into a longer word.
    prefix = rf"{re.escape(key[0])}(?<![{LETTER}]{re.escape(key[0])}){re.escape(key[1:])}[{LETTER}]*"
    name = rf"(?:{alternation(names)}|{prefix})"
    return (
        _c(
            rf"{name}[^\S\n]*+(?:\((?:\d+\s*[-\u2013]\s*\d+)\)[^\S\n]*+)?(?:{_ANY_LABEL}[^\S\n]*+)?\]?"
            rf"[^\S\n]*+(?:[:=|]|-(?!\d)|[\u2013\u2014])\s*+{_OPEN}{NUM}{DEN}"
        ),
        # "<fluency>4</fluency>" in a "<scores>" block.
        _c(rf"<{name}[^<>\n]{{0,20}}>\s*+{NUM}{DEN}"),
        _c(rf"{name}\s+(?:is|was|seems|looks)\s+(?:\w+\s+){{0,2}}?\(\s*+{NUM}{DEN}\s*+\)"),
        _c(rf"{NUM}{DEN}\s+(?:for|in|on)\s+(?:its\s+|the\s+)?{name}"),
        _c(rf"{name}{GAP}{NUM}{DEN}"),
    )
