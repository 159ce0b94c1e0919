"""Find the JSON object a judge wrote, also when it is loosely written, and note keys given twice.

Judges write JSON with single quotes (``{'score': 3}``), a trailing comma, a raw line break inside a string,
or inside a ```json fence after a sentence. ``find_json`` tries each ``{`` (or a leading ``[``) of the text,
cuts the balanced object by a linear scan, and reads it strictly, then without trailing commas, then as a
Python literal. Keys are lower-cased. A key written twice with two different values is recorded in
``duplicates``: the answer gave two verdicts.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

_FENCE = re.compile(r"```(?:json)?[^\S\n]*\n?(.*?)```", re.IGNORECASE | re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
# Bounds the work on pathological inputs (a page of "{"): a judge answer has one JSON object.
MAX_STARTS = 20


@dataclass(frozen=True)
class FoundJson:
    value: dict[str, object] | list[object]
    duplicates: frozenset[str] = field(default_factory=frozenset)
    whole: bool = False  # the answer is this JSON (apart from a fence and whitespace)


_SPECIAL = re.compile(r"[\"'{}\[\]\\]")
# An object starts with "{" and a key (quoted or not); "{{{{" is no object and is not tried.
_OBJECT_START = re.compile(r"\{\s*+[\"'\w]")
# A format example echoed from the prompt ("Example output: {"score": 3}", "e.g. {...}", a line "Output format: {...}")
# is never the judge's JSON; its own ("My output: {"score": 5}") is.
_EXAMPLE_BEFORE = re.compile(
    r"(?:(?<!\w)(?:example|e\.\s*g\.|for\s+instance|sample|ejemplo|exemplo|exemple|esempio|beispiel|пример|例如|示例|例)"
    r"(?:[^\S\n]+(?:output|format|answer|response|json|de\s+[^\W\d_]+))?"
    r"|(?:\A|\n)[^\S\n]*+(?:[^\W\d_]+[^\S\n]+)?(?:format|template|schema))[^\S\n]*+[:,]?[^\S\n]*+[(\[]?[^\S\n]*+\Z",
    re.IGNORECASE,
)
_EXAMPLE_REACH = 40
# The balanced scan visits at most this many brackets and quotes in all, so a page of unbalanced braces
# costs a bounded time.
_SCAN_BUDGET = 4_000


def _balanced_end(text: str, start: int, budget: list[int]) -> int:
    """The index after the bracket closing the one at ``start``, or -1; quotes respected, plain text skipped."""
    depth, quote, escaped_at = 0, "", -1
    for match in _SPECIAL.finditer(text, start):
        budget[0] -= 1
        if budget[0] < 0:
            return -1
        char = match.group(0)
        if match.start() == escaped_at:
            continue
        if quote:
            if char == "\\":
                escaped_at = match.end()
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return match.end()
    return -1


def _lowered(value: object) -> object:
    if isinstance(value, dict):
        return {str(k).lower(): _lowered(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lowered(v) for v in value]
    return value


def _strict(text: str, duplicates: set[str]) -> object:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for key, value in items:
            key = key.lower()
            if key in seen and seen[key] != value:
                duplicates.add(key)
            seen[key] = value
        return seen

    return json.loads(text, strict=False, object_pairs_hook=pairs)


def loads(text: str) -> tuple[object, frozenset[str]] | None:
    """Read one JSON value loosely; None when it is not JSON in any of the forms judges write."""
    duplicates: set[str] = set()
    for attempt in (text, _TRAILING_COMMA.sub(r"\1", text)):
        try:
            return _strict(attempt, duplicates), frozenset(duplicates)
        except (ValueError, RecursionError):
            duplicates.clear()
    try:
        return _lowered(ast.literal_eval(text.strip())), frozenset()
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def find_json(text: str, wanted: Callable[[dict[str, object] | list[object], bool], bool]) -> FoundJson | None:
    """The first object (or leading list) in ``text`` or its fences that ``wanted(value, whole)`` accepts."""
    stripped = text.strip()
    fenced_whole = stripped.startswith("```") and stripped.endswith("```") and stripped.count("```") == 2
    budget = [_SCAN_BUDGET]
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        body = candidate.strip()
        starts = [0] if body.startswith("[") else []
        starts += [m.start() for m in itertools.islice(_OBJECT_START.finditer(body), MAX_STARTS)]
        for start in starts:
            if _EXAMPLE_BEFORE.search(body[max(0, start - _EXAMPLE_REACH) : start]):
                continue
            end = _balanced_end(body, start, budget)
            if end == -1:
                continue
            read = loads(body[start:end])
            whole = start == 0 and end == len(body) and (candidate is text or fenced_whole)
            if read is not None and isinstance(read[0], (dict, list)) and wanted(read[0], whole):
                return FoundJson(read[0], read[1], whole)
    return None
