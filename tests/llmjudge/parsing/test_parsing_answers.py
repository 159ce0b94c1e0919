"""The parser against a table of judge answers written for issue 15 (``parsing_answers.jsonl``).

Each line is one answer in the style of a model family (``family``: Prometheus, Chiang & Lee
prose, MT-Bench, G-Eval, JSON, markdown, self-corrections, label and number words, counts,
refusals, pairwise prose) with what a careful human reads in it. Every field of the result is
asserted: the score or choice, the status, the reason of an unparseable answer (``reason``, added for
issue 24), the rationale (the whole answer stripped unless the line gives ``rationale``) and an empty
reasoning trace (none of these answers has one). ``tests/bench/compare_parsers.py`` runs prometheus-eval's
parser on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjudge.parsing import REASONS, ParsedChoice, ParsedScore, parse_pairwise, parse_score

TABLE = Path(__file__).with_name("parsing_answers.jsonl")


def load_table() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line.strip()]


ROWS = load_table()


def _params(kind: str) -> list[Any]:
    return [pytest.param(row, id=f"{n:03d}-{row['family']}") for n, row in enumerate(ROWS) if row["kind"] == kind]


def _rationale(row: dict[str, Any]) -> str:
    return row["rationale"] if "rationale" in row else row["text"].strip()


@pytest.mark.parametrize("row", _params("score"))
def test_score_answer_reads_as_a_careful_human_reads_it(row):
    result = parse_score(row["text"], **row["options"])

    expected = None if row["score"] is None else float(row["score"])
    assert result == ParsedScore(expected, row["status"], _rationale(row), reason=row.get("reason", ""))


@pytest.mark.parametrize("row", _params("pairwise"))
def test_pairwise_answer_reads_as_a_careful_human_reads_it(row):
    result = parse_pairwise(row["text"])

    assert result == ParsedChoice(row["choice"], row["status"], _rationale(row), reason=row.get("reason", ""))


def test_table_has_at_least_150_answers_across_the_families():
    families = {row["family"] for row in ROWS}

    assert len(ROWS) >= 150
    assert {"issue", "prometheus", "chiang-lee", "mt-bench", "g-eval", "json", "markdown", "refusal"} <= families


def test_table_rows_are_well_formed():
    for row in ROWS:
        assert row["kind"] in ("score", "pairwise")
        assert row["status"] in ("ok", "unparseable", "refused")
        answer = row["score"] if row["kind"] == "score" else row["choice"]
        assert (answer is None) == (row["status"] != "ok"), row
        # A reason explains an unparseable answer and nothing else.
        assert ("reason" in row) == (row["status"] == "unparseable"), row
        assert row.get("reason", "") in ("", *REASONS), row
        assert row["kind"] == "score" or not row["options"], row


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=300)
    | st.from_regex(r"[\w\s:./*()\[\]\-]{0,200}", fullmatch=True)
    | st.sampled_from(["Relevance: ", "fluent (", "Rating: ", "[RESULT] ", "so I'd lower it to ", "Positive"]).flatmap(
        lambda prefix: st.text(max_size=60).map(lambda rest: prefix + rest)
    ),
    aspect=st.sampled_from([None, "relevance", "coherence", "a(b", ""]),
    labels=st.sampled_from([None, {}, {"1": "Negative", "5": "Positive"}, {"5": "5 (highest)", "x": "odd", "3": "("}]),
)
def test_aspect_and_labels_never_raise_and_keep_the_score_on_the_scale(text, aspect, labels):
    result = parse_score(text, aspect=aspect, labels=labels)

    assert result.status in ("ok", "unparseable", "refused")
    assert (result.score is None) == (result.status != "ok")
    assert result.score is None or 1 <= result.score <= 5
