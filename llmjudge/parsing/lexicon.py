"""The words of the languages the parser reads, loaded once from ``words/<code>.json`` and merged.

The word lists are data, like the prompts: each file holds one language's score labels, final labels,
"X of Y" connectors, number words, score units, phrases for the top of the scale, rating verbs, self-corrections, ranges, conditionals,
negations, references, refusal phrases, aspect names and pairwise words. A judge's language is not known
beforehand, so every pattern accepts the words of all the languages.

Templates (``verdict_templates``, ``decision_templates``, ``max_first``, ``ranges``) are tokens separated
by spaces: ``{n}`` is the score, ``{max}`` the scale's top, ``{a}``/``{b}`` a range's ends; a space is
optional whitespace and a token ending in ``?`` is optional.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORDS_DIR = Path(__file__).with_name("words")
LANGUAGES = ("en", "zh", "ja", "ko", "es", "pt", "fr", "de", "it", "ru")
FLAGS = re.IGNORECASE
# Digits and the letters of the scripts written with spaces (Latin, Greek, Cyrillic): a word or a number of
# these scripts ends where none of them follows. Chinese, Japanese and Korean have no spaces between words,
# so their words have no edges ("4分" is a 4, "评分：4" a label).
LETTER = r"0-9A-Za-z_\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF"
_SPACED = re.compile(f"[{LETTER}]")


def _edged(word: str) -> str:
    body = re.escape(word).replace(r"\ ", r"\s+")
    if _SPACED.match(word[0]):
        body = rf"(?<![{LETTER}]){body}"
    if _SPACED.match(word[-1]):
        body = rf"{body}(?![{LETTER}])"
    return body


def alternation(words: Iterable[str]) -> str:
    """A regex matching any of ``words`` (case-insensitively), whole words in the spaced scripts, longest first."""
    unique = sorted({w.lower() for w in words if w}, key=len, reverse=True)
    return "(?:" + "|".join(_edged(w) for w in unique) + ")" if unique else "(?!)"


def template(text: str, groups: dict[str, str]) -> str:
    """A template (see the module docstring) as a regex; ``groups`` gives the regex of each placeholder."""
    parts = []
    for token in text.split():
        optional = token.endswith("?") and len(token) > 1
        token = token[:-1] if optional else token
        if token.startswith("{") and token.endswith("}"):
            body = groups[token[1:-1]]
        else:
            body = _edged(token)
        parts.append(f"(?:{body})?" if optional else body)
    return r"\s*+".join(parts)


@dataclass(frozen=True)
class Lexicon:
    """The merged word lists; string fields are regex alternations, ready to compose."""

    labels: str
    bare_labels: str
    final_prefixes: str
    final_suffixes: str
    final_labels: str
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
    refusals: tuple[re.Pattern[str], ...]
    aspects: dict[str, tuple[str, ...]]
    pair_nouns: str
    pair_better: str
    pair_better_foreign: str  # the better-words of the languages other than English, which need no qualifier check
    pair_tie: str
    pair_first: str
    pair_second: str


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
        refusals=tuple(re.compile(p, FLAGS) for p in words("refusals")),
        aspects={key: tuple(names) for key, names in aspects.items()},
        pair_nouns=alternation(pairs("nouns")),
        pair_better=alternation(pairs("better")),
        pair_better_foreign=alternation(pairs("better", foreign=True)),
        pair_tie=alternation(pairs("tie")),
        pair_first=alternation(pairs("first")),
        pair_second=alternation(pairs("second")),
    )


LEX = _merge(_read())

# A number in a verdict's place: digits ("4", "3.5", "-1") or a number word of any language. A word counts
# only when what follows looks like the end of a score ("a four.", "vier von fünf", "四分"), so "give this
# one a four" skips "one".
DIGITS = rf"[-\u2212]?\d+(?:\.\d+)?(?![{LETTER}])(?!\.\d)"
_WORD_END = (
    rf"(?=\s*+(?:[.,;:!?)\]*_\"'»|/\-\u2013\u2014]|{LEX.units}|{LEX.of}|\n|\Z))"
)
NUMBER_WORD = rf"{LEX.numbers}(?:\s+and\s+a\s+half)?"
NUM = rf"(?<![{LETTER}.])(?P<num>{DIGITS}|{NUMBER_WORD}{_WORD_END})"
# For templates, whose own words already mark the number's place.
NUMBER = rf"(?:\d+(?:\.\d+)?(?![{LETTER}])|{LEX.numbers})"
DEN_BODY = (
    rf"(?:\s*+{LEX.units})?\s*+(?:/|{LEX.of})\s*+(?P<den>\d+(?:\.\d+)?(?![{LETTER}])(?!\.\d)|{LEX.numbers})"
)
DEN = rf"(?:{DEN_BODY})?"
NEGATION = rf"(?:{LEX.negations}|n't)"


def unnamed(pattern: str) -> str:
    """``pattern`` without its named groups, to use it twice in one regex."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def to_number(token: str) -> float | None:
    """"4", "3.5", "four and a half", "vier", "四" -> the number; None when the token is none."""
    token = token.strip().lower().replace("\u2212", "-")
    half = 0.0
    if token.endswith("half"):
        half = 0.5
        token = token.split()[0]
    if token in LEX.number_words:
        return LEX.number_words[token] + half
    try:
        return float(token)
    except ValueError:
        return None


# "I can't rate it higher than a 3" rates it.
_NOT_A_REFUSAL = re.compile(r"[^.\n]{0,20}?\b(?:higher|lower|more|better|above|below)\s+than\b", FLAGS)


def refusals(text: str) -> list[re.Match[str]]:
    """Where ``text`` refuses to rate, in any of the languages."""
    found = [m for p in LEX.refusals for m in p.finditer(text)]
    return [m for m in found if _NOT_A_REFUSAL.match(text, m.end()) is None]


def is_refusal(text: str) -> bool:
    return bool(refusals(text))


def aspect_names(key: str) -> tuple[str, ...]:
    """The names of an aspect in every language: the key itself ("fluency") and its translations."""
    key = key.strip().lower()
    return (key, *LEX.aspects.get(key, ()))
