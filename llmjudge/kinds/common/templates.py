"""Small helpers shared by the judge kinds: loading prompt data and strict template filling.

Prompts are data (STYLE.md rule 7): each kind's wording lives in ``llmjudge/prompting/data/`` as a
versioned ``.txt`` (one whole template) or ``.json`` (a kind's named pieces). A file is read
byte for byte: a ``.txt`` template keeps its trailing space (Prometheus ends in ``"###Feedback: "``),
so nothing here strips or normalises text.
"""

from __future__ import annotations

import functools
import json
import re
import string
from collections.abc import Mapping
from pathlib import Path

from llmjudge.parsing import UNPARSEABLE, ParsedScore, parse_score

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompting" / "data"

_FORMATTER = string.Formatter()
_GLOSS = re.compile(r"(?<=\S)\s*\([^()]*\)\s*$")


@functools.cache
def load_text(name: str) -> str:
    """The template file ``llmjudge/prompting/data/<name>.txt``, exactly as stored."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise ValueError(f"unknown prompt template {name!r} (no file {path.name} in {PROMPTS_DIR})")
    return path.read_text(encoding="utf-8")


@functools.cache
def load_json(name: str) -> dict[str, object]:
    """The prompt pieces ``llmjudge/prompting/data/<name>.json``."""
    path = PROMPTS_DIR / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"unknown prompt file {name!r} (no file {path.name} in {PROMPTS_DIR})")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} must hold a JSON object")
    return data


def piece(name: str, key: str) -> str:
    """One named template string from a kind's JSON prompt file."""
    data = load_json(name)
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{name}.json has no text piece {key!r}")
    return value


def fill(template: str, **values: object) -> str:
    """``template.format(**values)`` that insists every placeholder is given and every value used.

    Item text may contain braces; they are safe because values are substituted, never re-parsed.
    A missing or unused value is a programming error in the caller, so it raises ValueError instead
    of silently printing ``None`` or dropping a section (prometheus-eval formats ``None`` into the
    reference-answer slot when no reference is given).
    """
    names = {field for _, field, _, _ in _FORMATTER.parse(template) if field is not None}
    missing = names - values.keys()
    unused = values.keys() - names
    if missing or unused:
        raise ValueError(f"template placeholders {sorted(names)}; missing {sorted(missing)}, unused {sorted(unused)}")
    for key, value in values.items():
        if value is None:
            raise ValueError(f"value for {{{key}}} is None")
    return template.format(**values)


def scale_text(scale: tuple[int, int]) -> str:
    lo, hi = scale
    if lo >= hi:
        raise ValueError(f"scale minimum {lo} must be below its maximum {hi}")
    return f"an integer between {lo} and {hi}"


def check_scale(scale: tuple[int, int]) -> tuple[int, int]:
    lo, hi = scale
    if int(lo) != lo or int(hi) != hi or lo >= hi:
        raise ValueError(f"scale must be two integers, minimum below maximum; got {scale!r}")
    return int(lo), int(hi)


def parse_after_marker(
    text: str, marker: re.Pattern[str], *, scale: tuple[int, int], rationale_prefix: re.Pattern[str] | None = None
) -> ParsedScore:
    """Score the text after the last ``marker`` (e.g. ``[Score]``, ``Answer:``) with ``parse_score``.

    The part before the marker is the rationale (its own leading label, e.g. ``[Review]`` or
    ``Reasoning:``, removed). Reading only what follows the last marker keeps numbers in the
    rationale ("the 3 brothers") from being taken as the score. A marker followed by no score is
    unparseable, never a number from the rationale; without any marker the whole answer goes to
    ``parse_score`` unchanged (models often drop the format).
    """
    lo, hi = scale
    if not text or not text.strip():
        return ParsedScore(None, UNPARSEABLE, "")
    full = text.strip()
    matches = list(marker.finditer(full))
    if not matches:
        return parse_score(full, scale_min=lo, scale_max=hi)
    last = matches[-1]
    rationale = full[: last.start()].strip()
    if rationale_prefix is not None:
        rationale = rationale_prefix.sub("", rationale, count=1).strip()
    tail = full[last.end() :].strip()
    if not tail:
        return ParsedScore(None, UNPARSEABLE, rationale)
    # The first line of the tail holds the answer; later lines are the model chatting on.
    first_line = tail.splitlines()[0].strip().strip("[]*_ ")
    # "5 (highest)" / "4 (out of 5)": a gloss after the score; parse_score would read "5 (highest)"
    # as an echo of the scale's labels, which after a marker it is not.
    first_line = _GLOSS.sub("", first_line)
    parsed = parse_score(first_line, scale_min=lo, scale_max=hi)
    return ParsedScore(parsed.score, parsed.status, rationale)


def as_mapping(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value
