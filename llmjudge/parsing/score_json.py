"""A judge's JSON answer read as a score: which key holds the verdict, and the rationale beside it.

In order: the aspect asked (``"fluency"``, ``"fluency_score"``, a ``{"criterion": "fluency", "score": 4}`` item, a
sub-object ``{"scores": {"fluency": 4}}`` or a per-aspect object ``{"fluency": {"score": 4, "reason": ...}}``), then
a final key (``overall``, ``final_score``, ``total``), then a score key (``score``, ``rating``, ``grade``, ``label``
and the languages' labels: ``bewertung`` ...). An answer that is only JSON and holds sub-scores but none of these is
read like "Fluency: 4 / Coherence: 2": one value is the verdict, two different values are two verdicts. A key
written twice with two values is two verdicts too. ``null`` or ``"N/A"`` is no verdict, or a refusal when the
explanation refuses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from llmjudge.parsing.forms import Verdict, verdict_of
from llmjudge.parsing.jsonish import FoundJson, find_json
from llmjudge.parsing.lexicon import DEN, FOLDED, LEX, NUM, Lazy, aspect_names, fold, words_to_digits
from llmjudge.parsing.normalize import glyphs

RATIONALE_KEYS = ("explanation", "rationale", "reason", "reasoning", "feedback", "justification", "comment")
_FINAL_KEYS = ("overall", "overall_score", "overall_rating", "final_score", "final_rating", "final", "total")
_SCORE_KEYS = ("score", "rating", "grade", "label", "result", "points")
_CRITERION_KEYS = ("criterion", "criteria", "aspect", "name", "dimension", "metric")
# Numbers a judge reports beside its verdict that are not ratings.
_NOT_RATINGS = ("confidence", "certainty", "probability", "scale", "max", "min", "max_score", "min_score", "length")
_NUMBER_ONLY = Lazy(r"\s*" + NUM + DEN + r"\s*\Z", FOLDED)
_LABEL_WORDS = Lazy(rf"{LEX.labels}\Z", FOLDED)
_NAMED_KEY = re.compile(r"[^\W\d_][\w ]*\Z")


@dataclass(frozen=True)
class JsonScore:
    verdict: Verdict | None  # None: no number where the verdict stands
    rationale: str
    ambiguous: bool = False


def _entries(value: dict[str, object] | list[object]) -> dict[str, object]:
    """Key -> value over the object, its sub-objects ("scores": {...}) and a list of criterion items."""
    entries: dict[str, object] = {}
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict):
            continue
        name = next((item[k] for k in _CRITERION_KEYS if isinstance(item.get(k), str)), None)
        if isinstance(name, str):
            score = next((item[k] for k in _SCORE_KEYS if k in item), None)
            entries.setdefault(name.lower(), score)
            continue
        for key, sub in item.items():
            inner_score = next((k for k in _SCORE_KEYS if k in sub), None) if isinstance(sub, dict) else None
            if isinstance(sub, dict) and inner_score is not None:
                # "faithfulness": {"score": 3, "reason": ...}: the aspect's own score, not a "score" of the answer.
                entries.setdefault(key, sub[inner_score])
            elif isinstance(sub, dict):
                entries.setdefault(key, sub)
                for inner, inner_value in sub.items():
                    entries.setdefault(inner, inner_value)
            else:
                entries.setdefault(key, sub)
    return entries


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _aspect_key(entries: dict[str, object], aspect: str | None) -> str | None:
    if not aspect:
        return None
    names = [n.lower() for n in aspect_names(aspect)]
    return next((k for k in entries for n in names if k == n or k.startswith(n + "_") or k.startswith(n + " ")), None)


def _score_key(entries: dict[str, object], aspect: str | None) -> str | None:
    found = _aspect_key(entries, aspect)
    if found is not None:
        return found
    for keys in (_FINAL_KEYS, _SCORE_KEYS):
        found = next((k for k in keys if k in entries), None)
        if found is not None:
            return found
    return next((k for k in entries if _LABEL_WORDS.match(k)), None)


def _sub_scores(entries: dict[str, object]) -> dict[str, object]:
    """The numbers under names ("fluency": 4): a criterion has a name made of letters."""
    return {k: v for k, v in entries.items() if _is_number(v) and k not in _NOT_RATINGS and _NAMED_KEY.match(k)}


def find_score_json(text: str, aspect: str | None) -> FoundJson | None:
    """The JSON answer in ``text`` (as written, so that its explanation keeps its case), if it has one."""

    def wanted(value: dict[str, object] | list[object], whole: bool) -> bool:
        entries = _entries(value)
        return _score_key(entries, aspect) is not None or (whole and bool(_sub_scores(entries)))

    return find_json(text, wanted)


def _verdict(raw: object) -> Verdict | None:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return Verdict(float(raw), None, 0, 0, "json")
    if isinstance(raw, str):
        match = _NUMBER_ONLY.match(words_to_digits(fold(glyphs(raw))))
        if match:
            return verdict_of(match, "json")
    return None


def read_score_json(found: FoundJson, aspect: str | None, answer: str) -> JsonScore:
    entries = _entries(found.value)
    top = found.value if isinstance(found.value, dict) else {}
    explanation = next((top[k] for k in RATIONALE_KEYS if isinstance(top.get(k), str)), None)
    rationale = str(explanation).strip() if explanation is not None else answer
    key = _score_key(entries, aspect)
    if key is None:
        values = {json.dumps(v) for v in _sub_scores(entries).values()}
        if len(values) != 1:
            return JsonScore(None, rationale, ambiguous=True)
        key = next(iter(_sub_scores(entries)))
    return JsonScore(_verdict(entries[key]), rationale, ambiguous=key in found.duplicates)
