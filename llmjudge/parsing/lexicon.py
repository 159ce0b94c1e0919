"""The words of the languages the parser reads, loaded once from ``words/<code>.json`` and merged.

The word lists are data, like the prompts: each file holds one language's score labels, final labels,
"X of Y" connectors, number words, score units, phrases for the top of the scale, rating verbs,
self-corrections, ranges, conditionals, contrasts, negations, references, refusal phrases, aspect names and
pairwise words. A judge's language is not known beforehand, so every pattern accepts the words of all the
languages.

Templates (``verdict_templates``, ``decision_templates``, ``max_first``, ``ranges``) are tokens separated
by spaces: ``{n}`` is the score, ``{max}`` the scale's top, ``{a}``/``{b}`` a range's ends; a space is
optional whitespace and a token ending in ``?`` is optional.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORDS_DIR = Path(__file__).with_name("words")
LANGUAGES = ("en", "zh", "ja", "ko", "es", "pt", "fr", "de", "it", "ru")
# Patterns that read the answer run on its case-folded copy (``fold``) without re.IGNORECASE: the regex
# engine then skips ahead to the first letter of a word list instead of trying every word at every
# position, which makes the parser several times faster. FLAGS is for the few patterns run on original text.
FLAGS = re.IGNORECASE
FOLDED = 0
# Digits and the letters of the scripts written with spaces (Latin, Greek, Cyrillic): a word or a number of
# these scripts ends where none of them follows. Chinese, Japanese and Korean have no spaces between words,
# so their words have no edges ("4分" is a 4, "评分：4" a label).
LETTER = r"0-9A-Za-z_\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF"
_SPACED = re.compile(f"[{LETTER}]")


class Lazy:
    """A regex compiled on its first use. The parser's patterns hold every language's words and take about
    0.1 s to compile; a process that imports the parser without reading an answer (a web worker serving
    pages, a command) should not pay it (STYLE.md rule 15)."""

    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


def fold(text: str) -> str:
    """``text`` in lower case, character for character (so positions stay the same)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _edged(word: str) -> str:
    """One word as a regex on folded text; in the spaced scripts a whole word (no word character before or
    after it). The check before stands after the first letter, so the engine can skip to the positions where
    that letter is."""
    return alternation([word])


def _branches(node: dict[str, Any], last: str) -> str:
    branches = [
        (r"\s+" if char == " " else re.escape(char)) + _branches(node[char], char) for char in sorted(node) if char
    ]
    if "" in node:
        # Longer words come first, so "points" is not read as "point" and an "s".
        branches.append(r"(?!\w)" if _SPACED.match(last) else "")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


def alternation(words: Iterable[str]) -> str:
    """A regex matching any of ``words`` in folded text, whole words in the spaced scripts (no word character
    before or after). The words are laid out as a trie, so that at each position the engine follows one path
    instead of trying a hundred words; the check before a word stands after its first letter, so the engine
    skips to the positions where a first letter is."""
    trie: dict[str, Any] = {}
    for word in {w.lower() for w in words if w}:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    if not trie:
        return "(?!)"
    roots = []
    for char in sorted(trie):
        edge = rf"(?<!\w{re.escape(char)})" if _SPACED.match(char) else ""
        roots.append(re.escape(char) + edge + _branches(trie[char], char))
    return "(?:" + "|".join(roots) + ")"


def template(text: str, groups: dict[str, str]) -> str:
    """A template (see the module docstring) as a regex; ``groups`` gives the regex of each placeholder.

    The whitespace after a token belongs to the token, so that no pattern starts with optional whitespace
    (which would make a long run of spaces cost its square)."""
    tokens = text.split()
    parts = []
    for index, token in enumerate(tokens):
        optional = token.endswith("?") and len(token) > 1
        token = token[:-1] if optional else token
        body = groups[token[1:-1]] if token.startswith("{") and token.endswith("}") else _edged(token)
        if index < len(tokens) - 1:
            body += r"\s*+"
        parts.append(f"(?:{body})?" if optional else body)
    return "".join(parts)


def template_needs(text: str) -> tuple[str, ...]:
    """The words a template cannot match without ("段階", "中" in "{max} 段階 中 {n}"): where one is missing
    from the text, the template is not searched at all."""
    return tuple(t.lower() for t in text.split() if not t.endswith("?") and not (t.startswith("{") and t.endswith("}")))


@dataclass(frozen=True)
class Lexicon:
    """The merged word lists; string fields are regex alternations, ready to compose."""

    labels: str
    bare_labels: str
    final_prefixes: str
    final_suffixes: str
    final_labels: str
    final_words: tuple[str, ...]  # the words of the three lists above, none holding another ("final", "总")
    other_scale_labels: str
    of: str
    units: str
    top_phrases: str  # "a perfect score", "full marks": the scale's top
    number_words: dict[str, float]
    numbers: str
    ordinals: dict[str, float]
    ordinal_words: str
    levels: str
    verbs: str
    revisions: str
    decisions: str
    corrections: str
    conditionals: str
    contrasts: str  # "but", "aber", "但是": what follows a refusal's clause may still give a verdict
    negations: str
    references: str
    verdict_templates: tuple[str, ...]
    decision_templates: tuple[str, ...]
    max_first: tuple[str, ...]
    ranges: tuple[str, ...]
    refusals: tuple[Lazy, ...]
    alternatives: str  # "or", "oder", "或", "또는": "3 or 4" is two verdicts
    suppositions: str  # "hypothetically", "if it were", "假设": what follows is not the verdict
    suppositions_opening: str  # "Suppose ...", "Had it ...": the same, opening a sentence
    other_raters: str  # "most readers", "a reference answer": a rating of theirs is not the judge's
    declining: tuple[Declining, ...]  # declined ratings, found by their construction (``_declining``)
    aspects: dict[str, tuple[str, ...]]
    pair_nouns: str
    pair_better: str
    pair_better_foreign: str  # the better-words of the languages other than English, which need no qualifier check
    pair_tie: str
    pair_first: str
    pair_second: str
    pair_labels: str  # "Veredicto", "Urteil", "判定": a pairwise verdict's label in the other languages
    pair_label_words: tuple[str, ...]  # the same, for ``str.rfind`` (``normalize.Finals``)
    pair_prefer: str  # "prefiero", "bevorzuge", "更喜欢": a stated choice in the other languages


def _letter_first(pattern: str) -> str:
    """``\\bi\\s+refuse`` as ``i(?<!\\wi)\\s+refuse``: a pattern that starts with a letter lets the engine skip
    to where that letter is; one that starts with ``\\b`` is tried at every word boundary."""
    return re.sub(r"\A\\b([^\W\d_])(?![*+?{])", lambda m: rf"{m.group(1)}(?<!\w{m.group(1)})", pattern)


def _shortest(words: Iterable[str]) -> tuple[str, ...]:
    """The words none of the others holds: any text that holds one of ``words`` holds one of these."""
    kept: list[str] = []
    for word in sorted({w.lower() for w in words if w}, key=len):
        if not any(k in word for k in kept):
            kept.append(word)
    return tuple(kept)


# A declined rating: a declining construction in the first person ("I'm not going to", "ich kann ... nicht",
# "no voy a", "我不会") and, a few words on in the same clause, what it declines ("score", "bewerten",
# "calificar", "评分"). One pattern per language, built from its ``declining`` and ``declined`` lists, so a
# refusal is recognised by its construction rather than by one exact phrase. The gap holds words only: no
# digit, so "I won't give it a 5" is a negated verdict's business, not this one's.
_WORD_GAP = r"(?:[^\S\n]+[^\W\d_][^\s\d.,;:!?]*){0,4}?[^\S\n]+"
_CHAR_GAP = r"[^\d\u3002\uff0e.!\uff01?\uff1f\n\uff0c,\u3001\uff1b;\uff1a:]{0,12}?"
_UNSPACED = ("zh", "ja", "ko")


@dataclass(frozen=True)
class Declining:
    """One language's declined ratings: ``stems`` is what may be declined ("score", "bewerten"), rare in a
    text; where any language's is found, ``whole`` is searched just before it: the construction and the gap."""

    stems: str
    whole: Lazy


def _declining(files: list[dict[str, Any]]) -> tuple[Declining, ...]:
    patterns = []
    for code, data in zip(LANGUAGES, files, strict=True):
        declining, declined = data.get("declining"), data.get("declined")
        if declining and declined:
            gap = _CHAR_GAP if code in _UNSPACED else _WORD_GAP
            edge = "" if code in _UNSPACED else r"\b"
            objects = "|".join(declined)
            whole = rf"{edge}(?:{'|'.join(declining)}){gap}(?:{objects})"
            patterns.append(Declining(objects, Lazy(whole, FOLDED)))
    return tuple(patterns)


def _read() -> list[dict[str, Any]]:
    return [json.loads((WORDS_DIR / f"{code}.json").read_text(encoding="utf-8")) for code in LANGUAGES]


def _merge(files: list[dict[str, Any]]) -> Lexicon:
    def words(key: str) -> list[str]:
        return [w for data in files for w in data.get(key, [])]

    def pairs(key: str, *, foreign: bool = False) -> list[str]:
        chosen = files[1:] if foreign else files
        return [w for data in chosen for w in data.get("pairwise", {}).get(key, [])]

    def mapping(key: str) -> dict[str, float]:
        return {w.lower(): float(v) for data in files for w, v in data.get(key, {}).items()}

    aspects: dict[str, list[str]] = {}
    for data in files:
        for key, names in data.get("aspects", {}).items():
            aspects.setdefault(key.lower(), []).extend(names)
    number_words = mapping("number_words")
    ordinals = mapping("ordinals")
    return Lexicon(
        labels=alternation(words("score_labels")),
        bare_labels=alternation(words("bare_labels")),
        final_prefixes=alternation(words("final_prefixes")),
        final_suffixes=alternation(words("final_suffixes")),
        final_labels=alternation(words("final_labels")),
        final_words=_shortest(w for k in ("final_prefixes", "final_suffixes", "final_labels") for w in words(k)),
        other_scale_labels=alternation(words("other_scale_labels")),
        of=alternation(words("of")),
        units=alternation(words("units")),
        top_phrases=alternation(words("top_phrases")),
        number_words=number_words,
        numbers=alternation(number_words),
        ordinals=ordinals,
        ordinal_words=alternation(ordinals),
        levels=alternation(words("levels")),
        verbs=alternation(words("verbs")),
        revisions=alternation(words("revisions")),
        decisions=alternation(words("decisions")),
        corrections=alternation(words("corrections")),
        conditionals=alternation(words("conditionals")),
        contrasts=alternation(words("contrasts")),
        negations=alternation(words("negations")),
        references=alternation(words("references")),
        verdict_templates=tuple(words("verdict_templates")),
        decision_templates=tuple(words("decision_templates")),
        max_first=tuple(words("max_first")),
        ranges=tuple(words("ranges")),
        refusals=tuple(Lazy(_letter_first(p), FOLDED) for p in words("refusals")),
        alternatives=alternation(words("alternatives")),
        suppositions=alternation(words("suppositions")),
        suppositions_opening=alternation(words("suppositions_opening")),
        other_raters=alternation(words("other_raters")),
        declining=_declining(files),
        aspects={key: tuple(names) for key, names in aspects.items()},
        pair_nouns=alternation(pairs("nouns")),
        pair_better=alternation(pairs("better")),
        pair_better_foreign=alternation(pairs("better", foreign=True)),
        pair_tie=alternation(pairs("tie")),
        pair_first=alternation(pairs("first")),
        pair_second=alternation(pairs("second")),
        pair_labels=alternation(pairs("labels")),
        pair_label_words=_shortest(pairs("labels")),
        pair_prefer=alternation(pairs("prefer")),
    )


LEX = _merge(_read())

# A number in a verdict's place: digits ("4", "3.5", "-1"); its left edge is checked after the first
# character (see ``_edged``). Number words are turned into digits beforehand (``words_to_digits``).
DIGITS = rf"(?:-(?<![{LETTER}.]-)\d+|\d(?<![{LETTER}.]\d)\d*)(?:\.\d+)?(?![{LETTER}])(?!\.\d)"
NUM = rf"(?P<num>{DIGITS})"
# For templates, whose own words already mark the number's place.
NUMBER = rf"\d+(?:\.\d+)?(?![{LETTER}])"
DEN_BODY = rf"(?:\s*+{LEX.units})?\s*+(?:/|{LEX.of})\s*+(?P<den>\d+(?:\.\d+)?(?![{LETTER}])(?!\.\d))"
DEN = rf"(?:{DEN_BODY})?"
# A number word counts only where what follows looks like the end of a score ("a four.", "vier von fünf",
# "四分", "다섯 개 중 세 개"), so "give this one a four" keeps "one" as a word and "一致性" its "一".
_NUMBER_WORD = Lazy(
    rf"(?P<word>{LEX.numbers})(?P<half>\s+and\s+a\s+half)?"
    rf"(?=\s*+(?:[.,;:!?)\]*_\"'»|/\-\u2013\u2014]|{LEX.units}|{LEX.of}|개|\n|\Z))",
    FOLDED,
)


# "the second one.", "this one," are pronouns, not scores.
_PRONOUN_ONE = re.compile(
    r"(?:the|this|that|which|each|every|other|another|first|second|better|best|worse|latter|former)\s+\Z"
)


def _digits(match: re.Match[str]) -> str:
    if match.group("word") == "one" and _PRONOUN_ONE.search(match.string, max(0, match.start() - 12), match.start()):
        return match.group(0)
    value = LEX.number_words[match.group("word")] + (0.5 if match.group("half") else 0.0)
    digits = str(int(value)) if value.is_integer() else str(value)
    # Padded to the word's length, so positions stay those of the original text.
    return digits.ljust(len(match.group(0))) if len(digits) <= len(match.group(0)) else match.group(0)


def words_to_digits(low: str) -> str:
    """Number words in a verdict's place, in any of the languages, as digits: "four out of five" reads as
    "4    out of 5   ". ``low`` is folded text; the result has the same length."""
    return _NUMBER_WORD.sub(_digits, low)


NEGATION = rf"(?:{LEX.negations}|n't)"


def to_number(token: str) -> float | None:
    """ "4", "3.5", "-1" -> the number; None when the token is none."""
    try:
        return float(token.strip().replace("\u2212", "-"))
    except ValueError:
        return None


# "I can't rate it higher than a 3" rates it.
# "I won't grade on style alone", "I'm not going to rate it down for the typos": a decline restricted to a way
# of rating ("on", "by", "solely", "down") rates all the same.
_NOT_A_REFUSAL = re.compile(
    r"[^.\n]{0,20}?\b(?:higher|lower|more|better|above|below)\s+than\b"
    r"|(?:\s+(?:it|this|the\s+\w+))?\s+(?:on|by|solely|only|purely|just|down|based\s+on)\b"
    r"(?!\s+(?:this|that|it|these|those|such)\b|\s+(?:a|the|your|any)\s+(?:[^\s.]+\s+){0,2}?(?:scale|\d))",
    FOLDED,
)


# How far before what is declined its construction may start; and how many of its mentions are looked at
# (the first and last halves): a page of "rate rate rate" costs what a judge's answer costs.
_DECLINING_REACH = 160
# What any language declines, searched once: a hit is then checked against each language's construction.
# The stems are joined flat, not each language's in a group: an alternation of literals lets the engine skip to
# the characters a stem can start with (forty times faster on a page of spaces).
_DECLINED = Lazy("|".join(d.stems for d in LEX.declining) or "(?!)", FOLDED)
_MENTIONS = 32


def _bounded(matches: Iterator[re.Match[str]]) -> list[re.Match[str]]:
    found = list(matches)
    return found if len(found) <= _MENTIONS else found[: _MENTIONS // 2] + found[-_MENTIONS // 2 :]


def refusals(text: str) -> list[re.Match[str]]:
    """Where the folded ``text`` refuses to rate, in any of the languages."""
    found = [m for p in LEX.refusals for m in p.finditer(text)]
    seen: set[tuple[int, int]] = set()
    for hit in _bounded(_DECLINED.finditer(text)):
        for language in LEX.declining:
            # Every construction before the hit, not only the first: "I don't think I should provide a rating
            # for this. I'm going to decline to score it." declines twice, and the last one counts.
            for match in language.whole.finditer(text, max(0, hit.start() - _DECLINING_REACH), hit.end()):
                if match.span() not in seen:
                    seen.add(match.span())
                    found.append(match)
    return [m for m in found if _NOT_A_REFUSAL.match(text, m.end()) is None]


def is_refusal(text: str) -> bool:
    return bool(refusals(fold(text)))


def aspect_names(key: str) -> tuple[str, ...]:
    """The names of an aspect in every language: the key itself ("fluency") and its translations."""
    key = key.strip().lower()
    return (key, *LEX.aspects.get(key, ()))
