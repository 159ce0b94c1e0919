"""The shared helpers: strict template filling and the marker-based score cut."""

from __future__ import annotations

import re

import pytest

from llmjudge.kinds.common.templates import PROMPTS_DIR, fill, load_json, load_text, parse_after_marker
from llmjudge.parsing import OK, UNPARSEABLE, ParsedScore


def test_fill_substitutes_values_without_reparsing_their_braces():
    assert fill("A {x} B", x="{y}") == "A {y} B"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, r"missing \['x'\], unused \[\]"),
        ({"x": 1, "z": 2}, r"missing \[\], unused \['z'\]"),
        ({"x": None}, r"value for \{x\} is None"),
    ],
)
def test_fill_refuses_missing_unused_and_none_values(values, message):
    with pytest.raises(ValueError, match=message):
        fill("A {x}", **values)


def test_unknown_prompt_files_are_named():
    with pytest.raises(ValueError, match="unknown prompt template 'nope'"):
        load_text("nope")
    with pytest.raises(ValueError, match="unknown prompt file 'nope'"):
        load_json("nope")


def test_every_json_prompt_file_names_its_source():
    for path in PROMPTS_DIR.glob("*.json"):
        assert isinstance(load_json(path.stem).get("source"), str), path.name


MARK = re.compile(r"\[score\]", re.IGNORECASE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Good. [Score] 4", ParsedScore(4.0, OK, "Good.")),
        ("Good. [Score] 4 (out of 5)", ParsedScore(4.0, OK, "Good.")),
        ("Good. [Score] 5 (highest)\nThanks!", ParsedScore(5.0, OK, "Good.")),
        ("[Score] 2 then [Score] 3", ParsedScore(3.0, OK, "[Score] 2 then")),
        ("Good, 3 ideas. [Score] none", ParsedScore(None, UNPARSEABLE, "Good, 3 ideas.")),
        ("   ", ParsedScore(None, UNPARSEABLE, "")),
    ],
)
def test_parse_after_marker(text, expected):
    assert parse_after_marker(text, MARK, scale=(1, 5)) == expected
