"""Read a judge's free-text answer as one of a categorical study's labels (or an honest "could not").

A pure function, no Django, like ``llmjudge.parsing``, and with the same result type. How
``parse_label`` decides, in order:

1. Empty or whitespace-only text -> ``unparseable``.
2. An explicit answer format: a JSON object with a key label/answer/category/choice/verdict, a
   Prometheus ``[RESULT] Positive``, a FastChat ``[[Positive]]``, or a line "Label: Positive" (also
   Answer, Category, Choice, Verdict, Winner, Classification, Final answer). The last such answer
   counts (a model restating its answer at the end). Its value must be a label or the label's number
   (1 = the first label), or name exactly one label ("Answer: it is positive"); anything else is
   ``unparseable``, never a guess from the prose around it.
3. The whole answer is a label or its number, once markdown emphasis, quotes and a final period are
   removed ("**Negative**", "'unknown'.", "2").
4. Otherwise the labels named in the prose, as whole words and without regard to case; a label
   inside a longer label ("No" inside "No response") is not counted. Exactly one label named ->
   that label; none or several ("Positive, not Negative") -> ``unparseable``. Numbers in prose are
   never read as labels ("one of the best").

The score is the label's code, 1..len(labels), as a categorical study stores it. The rationale is the
whole answer, stripped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from llmjudge.parsing import OK, UNPARSEABLE, ParsedScore

_JSON_KEYS = ("label", "answer", "category", "choice", "verdict", "classification")
_KEYED_LINE = re.compile(
    r"(?im)^[ \t>*_#-]*(?:final\s+answer|label|answer|category|choice|verdict|winner|classification)"
    r"[ \t*_]*[:=][ \t*_]*(?P<value>[^\n]*)$"
)
_RESULT = re.compile(r"\[RESULT\][ \t:]*(?P<value>[^\n\[]*)", re.IGNORECASE)
_DOUBLE_BRACKETS = re.compile(r"\[\[(?P<value>[^\[\]\n]+)\]\]")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_DECORATION = " \t\r\n*_`\"'“”‘’.!;,()"
# A label is a whole word: no letter, digit, underscore or hyphen right before or after it.
_BEFORE = r"(?<![\w-])"
_AFTER = r"(?![\w-])"


def _label_of(token: str, labels: Sequence[str]) -> int | None:
    """The code (1..n) of the label `token` names, by text (case-insensitive) or by number."""
    value = token.strip(_DECORATION)
    if not value:
        return None
    exact = [code for code, label in enumerate(labels, start=1) if label == value]
    if exact:
        return exact[0]
    folded = [code for code, label in enumerate(labels, start=1) if label.casefold() == value.casefold()]
    if len(folded) == 1:
        return folded[0]
    if value.isdigit() and 1 <= int(value) <= len(labels):
        return int(value)
    return None


def _explicit(text: str) -> str | None:
    """The value of the answer's last explicit answer format, None when it has none."""
    found: list[tuple[int, str]] = []
    for match in _JSON_OBJECT.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            for key, value in obj.items():
                if str(key).casefold() in _JSON_KEYS and isinstance(value, str | int) and not isinstance(value, bool):
                    found.append((match.start(), str(value)))
                    break
    for pattern in (_RESULT, _DOUBLE_BRACKETS, _KEYED_LINE):
        found.extend((m.start(), m.group("value")) for m in pattern.finditer(text))
    return max(found)[1] if found else None


def _named_in_prose(text: str, labels: Sequence[str]) -> set[int]:
    """The codes of the labels the text names as whole words; longer labels are matched first and
    blanked out, so that a label inside a longer one is not counted twice."""
    remaining = text
    named: set[int] = set()
    for code, label in sorted(enumerate(labels, start=1), key=lambda pair: -len(pair[1])):
        pattern = re.compile(_BEFORE + re.escape(label) + _AFTER, re.IGNORECASE)
        if pattern.search(remaining):
            named.add(code)
            remaining = pattern.sub(lambda m: "\0" * len(m.group(0)), remaining)
    return named


def parse_label(text: str, *, labels: Sequence[str]) -> ParsedScore:
    """The answer as the code (1..len(labels)) of one of ``labels``; see the module docstring."""
    rationale = text.strip()
    if not rationale:
        return ParsedScore(None, UNPARSEABLE, "")
    explicit = _explicit(text)
    if explicit is not None:
        code = _label_of(explicit, labels)
        if code is None:  # "Answer: the review is positive." names one label inside the format: that one
            named = _named_in_prose(explicit, labels)
            code = named.pop() if len(named) == 1 else None
        if code is None:
            return ParsedScore(None, UNPARSEABLE, f"{rationale}\n[{explicit.strip()[:60]}: not one of the labels]")
        return ParsedScore(float(code), OK, rationale)
    code = _label_of(rationale, labels)
    if code is not None:
        return ParsedScore(float(code), OK, rationale)
    named = _named_in_prose(text, labels)
    if len(named) == 1:
        return ParsedScore(float(named.pop()), OK, rationale)
    return ParsedScore(None, UNPARSEABLE, rationale)
