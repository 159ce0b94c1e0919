"""The study specification as a JSON Schema (OpenAPI 3.0 dialect), for the API's published schema.

It says what ``study_spec_check`` enforces field by field (types, required keys, lengths, bounds,
the names allowed), and nothing it does not: every schema-invalid spec is refused by the check.
What a schema cannot say across fields stays with the check alone: placeholders must name item
fields, scale min below max, question keys unique, pairwise and categorical rules.
"""
from __future__ import annotations

from typing import Any

from annotations.models import Study
from annotations.studies import (
    CATEGORY_LABEL_MAX_CHARS,
    KEY_MAX_CHARS,
    RATERS_PER_ITEM_MAX,
    SCALE_BOUND,
    TEXT_MAX_CHARS,
    TITLE_MAX_CHARS,
)

# No NUL anywhere (the check refuses it: PostgreSQL cannot store it).
_NO_NUL = "^[^\\x00]*$"


def _text(max_chars: int, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_chars, "pattern": _NO_NUL, **extra}


def _names(*, min_items: int = 0, **extra: Any) -> dict[str, Any]:
    name = _text(KEY_MAX_CHARS, minLength=1, **extra)
    return {"type": "array", "items": name, "uniqueItems": True, "minItems": min_items}


_STRINGS_OBJECT = {"type": "object", "additionalProperties": {"type": "string", "pattern": _NO_NUL}}
_BOUNDED_INT = {"type": "integer", "minimum": -SCALE_BOUND, "maximum": SCALE_BOUND}

STUDY_SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "A study specification, shaped like an entry of annotations/protocols/*.json. Beyond this schema the "
        "server checks: llm_template's {placeholders} name item fields (or question, context); no string "
        "anywhere holds NUL; scale min is below max; question keys are unique; a question's context names "
        "item fields and reveals names one; pairwise and categorical scales."
    ),
    "required": ["title", "item_fields", "llm_template", "scale", "questions"],
    "properties": {
        "title": _text(TITLE_MAX_CHARS, minLength=1, pattern="^[^\\x00]*\\S[^\\x00]*$"),
        "kind": {"type": "string", "enum": [Study.Kind.LIKERT, Study.Kind.PAIRWISE, Study.Kind.CATEGORICAL]},
        "item_fields": {**_names(min_items=1),
                        "items": {**_names()["items"], "not": {"enum": ["question", "context"]}}},
        "llm_template": _text(TEXT_MAX_CHARS, pattern="^[^\\x00]*\\{question\\}[^\\x00]*$"),
        "human_instruction": _text(TEXT_MAX_CHARS),
        "scale": {
            "oneOf": [
                {"type": "object", "title": "a numeric scale", "required": ["min", "max"],
                 "properties": {"min": _BOUNDED_INT, "max": _BOUNDED_INT, "labels": _STRINGS_OBJECT}},
                {"type": "object", "title": "categories (kind categorical)", "required": ["labels"],
                 "properties": {"labels": {"type": "array", "minItems": 2, "items": {
                     "type": "string", "minLength": 1, "maxLength": CATEGORY_LABEL_MAX_CHARS,
                     "pattern": "^\\S(?:[^\\x00]*\\S)?$"}}}},
            ],
        },
        "questions": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object", "required": ["key", "text"],
                "properties": {
                    "key": {"type": "string", "minLength": 1, "maxLength": KEY_MAX_CHARS,
                            "pattern": "^[-a-zA-Z0-9_]+$"},
                    "text": {"type": "string", "minLength": 1, "pattern": _NO_NUL},
                    "context": {"type": "string", "pattern": _NO_NUL},
                    "reveals": {"type": "string", "pattern": _NO_NUL},
                    "rubric": {"type": "object"},
                },
            },
        },
        "groups": _names(),
        "diff_fields": _names(),
        "contrasts": {"type": "array", "items": {
            "type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "string", "minLength": 1,
                                                                       "pattern": _NO_NUL}}},
        "field_labels": _STRINGS_OBJECT,
        # An object holds notes on the paper's ordering (the protocol file's entries) and is not used.
        "ordering": {"anyOf": [{"type": "string", "enum": list(Study.Ordering.values)}, {"type": "object"}]},
        "raters_per_item": {"type": "integer", "minimum": 1, "maximum": RATERS_PER_ITEM_MAX},
        # Which items people rate (issue 27); annotations.studies.human_subset_checked says the rest.
        "human_subset": {"type": "object", "properties": {
            "share": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1},  # OpenAPI 3.0
            "count": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
            "declared_random": {"type": "boolean", "enum": [True]},
        }, "additionalProperties": False},
        "pair_fields": {"type": "array", "maxItems": 2, "items": {"type": "string", "pattern": _NO_NUL}},
    },
}
