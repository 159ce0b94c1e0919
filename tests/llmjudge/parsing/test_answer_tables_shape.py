"""The shape of the blind answer tables (judge_answers_2026.jsonl, judge_answers_heldout.jsonl,
judge_answers_final.jsonl, prometheus_eval_cases.jsonl).

Only the tables' own consistency is checked here; what the parser reads is tested elsewhere against them.
The parser is deliberately not imported: the tables were written without looking at it (STYLE.md rule 16).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "judge_answers_2026.jsonl"
HELDOUT = HERE / "judge_answers_heldout.jsonl"
# The final held-out table: no parser revision is fitted to it, it only measures.
FINAL = HERE / "judge_answers_final.jsonl"
PROMETHEUS = HERE / "prometheus_eval_cases.jsonl"

STATUSES = {"ok", "refused", "unparseable"}
REASONS = {"empty", "no verdict", "two verdicts", "out of scale", "cut off while reasoning", "cut off"}
CHOICES = {"A", "B", "tie"}
COMMON_KEYS = {"kind", "style", "text", "options", "status", "reason", "reasoning", "rationale"}
SCORE_OPTIONS = {"scale_min", "scale_max", "aspect", "truncated"}
PAIRWISE_OPTIONS = {"assistant_names", "truncated"}

STYLES = [
    "reasoning-deepseek", "reasoning-qwen", "reasoning-gptoss", "reasoning-ollama", "final-markers", "chatty",
    "headings-tables", "g-eval", "aspects", "fractions", "glyphs",
    "lang-zh", "lang-ja", "lang-ko", "lang-es", "lang-pt", "lang-fr", "lang-de", "lang-it", "lang-ru",
    "refusals", "truncated-empty-echo", "stray-numbers", "json", "pairwise",
]
# The held-out table adds house styles, long answers and languages beyond the nine of the first table.
HELDOUT_STYLES = [*STYLES, "llama-claude-mistral", "long-answers", "mixed-language"]
MIN_PAIRWISE = 40
# Long answers are there to catch a parser that only looks near the start or the end, or that is slow on size.
LONG_STYLE, MIN_LONG, LONG_BYTES = "long-answers", 5, (8_000, 20_000)
# Every scale the studies use appears at least once, so a parser fitted to 1-5 alone fails the table.
SCALES = {(1, 5), (1, 10), (0, 10), (1, 7), (1, 3), (0, 1)}
PROMETHEUS_STYLES = {"prometheus-eval absolute": "score", "prometheus-eval relative": "pairwise"}


@dataclass(frozen=True)
class Table:
    path: Path
    styles: list[str]
    min_per_style: int
    min_answers: int


TABLES = {
    "2026": Table(ANSWERS, STYLES, min_per_style=15, min_answers=420),
    "heldout": Table(HELDOUT, HELDOUT_STYLES, min_per_style=10, min_answers=300),
    "final": Table(FINAL, HELDOUT_STYLES, min_per_style=8, min_answers=250),
}


def _load(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{path.name}:{number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}:{number} is not an object"
        rows.append(row)
    return rows


def _where(row: dict[str, Any]) -> str:
    return f"{row.get('style')}: {row.get('text', '')[:60]!r}"


def _check_options(row: dict[str, Any]) -> None:
    options = row["options"]
    assert isinstance(options, dict), _where(row)
    if "truncated" in options:
        assert options["truncated"] is True, _where(row)
    if row["kind"] == "pairwise":
        assert set(options) <= PAIRWISE_OPTIONS, _where(row)
        if "assistant_names" in options:
            assert options["assistant_names"] is True, _where(row)
        return
    assert set(options) <= SCORE_OPTIONS, _where(row)
    low, high = options["scale_min"], options["scale_max"]
    assert type(low) is int and type(high) is int and low < high, _where(row)
    if "aspect" in options:
        aspect = options["aspect"]
        if isinstance(aspect, list):
            assert len(aspect) == 2 and all(isinstance(part, str) and part for part in aspect), _where(row)
        else:
            assert isinstance(aspect, str) and aspect, _where(row)


def _check_verdict(row: dict[str, Any]) -> None:
    status, reason = row["status"], row["reason"]
    assert status in STATUSES, _where(row)
    # A reason explains an unparseable answer and nothing else.
    assert (reason != "") == (status == "unparseable"), _where(row)
    if reason:
        assert reason in REASONS, _where(row)
    if row["kind"] == "pairwise":
        assert (row["choice"] is not None) == (status == "ok"), _where(row)
        if row["choice"] is not None:
            assert row["choice"] in CHOICES, _where(row)
        return
    score = row["score"]
    assert (score is not None) == (status == "ok"), _where(row)
    if score is not None:
        assert type(score) in (int, float) and not isinstance(score, bool), _where(row)
        assert (score * 2) == int(score * 2), f"only half points: {_where(row)}"
        assert row["options"]["scale_min"] <= score <= row["options"]["scale_max"], _where(row)


def _check_split(row: dict[str, Any]) -> None:
    text, reasoning, rationale = row["text"], row["reasoning"], row["rationale"]
    assert all(isinstance(value, str) for value in (text, reasoning, rationale)), _where(row)
    assert reasoning == reasoning.strip() and rationale == rationale.strip(), _where(row)
    # Both are cut out of the answer (a JSON explanation is its unescaped value, kept free of escapes here).
    assert reasoning in text and rationale in text, _where(row)
    if row["reason"] == "cut off while reasoning":
        assert reasoning and not rationale, _where(row)
    if row["reason"] == "cut off":
        assert row["options"].get("truncated") is True, _where(row)
    if row["reason"] == "empty":
        assert not rationale, _where(row)


def _check_row(row: dict[str, Any], extra: set[str]) -> None:
    verdict_key = {"score": "score", "pairwise": "choice"}[row["kind"]]
    assert set(row) - extra == COMMON_KEYS | {verdict_key}, _where(row)
    assert isinstance(row["style"], str) and isinstance(row["text"], str), _where(row)
    _check_options(row)
    _check_verdict(row)
    _check_split(row)


@pytest.fixture(scope="module", params=sorted(TABLES))
def table(request: pytest.FixtureRequest) -> tuple[Table, list[dict[str, Any]]]:
    spec = TABLES[request.param]
    return spec, _load(spec.path)


@pytest.fixture(scope="module")
def prometheus() -> list[dict[str, Any]]:
    return _load(PROMETHEUS)


def test_every_answer_has_the_fields_and_consistent_values(table: tuple[Table, list[dict[str, Any]]]) -> None:
    for row in table[1]:
        _check_row(row, extra=set())


def test_every_style_has_its_minimum_number_of_answers(table: tuple[Table, list[dict[str, Any]]]) -> None:
    spec, answers = table
    counts = Counter(row["style"] for row in answers)
    assert set(counts) == set(spec.styles)
    short = {style: counts[style] for style in spec.styles if counts[style] < spec.min_per_style}
    assert not short
    assert counts["pairwise"] >= MIN_PAIRWISE
    assert len(answers) >= spec.min_answers


def test_pairwise_answers_are_exactly_the_pairwise_style(table: tuple[Table, list[dict[str, Any]]]) -> None:
    for row in table[1]:
        assert (row["kind"] == "pairwise") == (row["style"] == "pairwise"), _where(row)


def test_the_score_answers_use_every_study_scale(table: tuple[Table, list[dict[str, Any]]]) -> None:
    used = {(row["options"]["scale_min"], row["options"]["scale_max"]) for row in table[1] if row["kind"] == "score"}
    assert SCALES <= used


def test_no_answer_is_listed_twice_with_the_same_options(table: tuple[Table, list[dict[str, Any]]]) -> None:
    keys = Counter((row["kind"], row["text"], json.dumps(row["options"], sort_keys=True)) for row in table[1])
    assert [key for key, count in keys.items() if count > 1] == []


def test_every_status_and_reason_occurs(table: tuple[Table, list[dict[str, Any]]]) -> None:
    answers = table[1]
    assert {row["status"] for row in answers} == STATUSES
    assert {row["reason"] for row in answers} - {""} == REASONS


@pytest.mark.parametrize("path", [HELDOUT, FINAL], ids=lambda path: path.stem)
def test_the_heldout_tables_have_their_long_answers(path: Path) -> None:
    sizes = [len(row["text"].encode("utf-8")) for row in _load(path) if row["style"] == LONG_STYLE]
    low, high = LONG_BYTES
    assert sum(low <= size <= high for size in sizes) >= MIN_LONG, sizes


def test_the_heldout_table_shares_no_answer_with_the_table_the_parser_was_fitted_to() -> None:
    # A held-out answer seen before measures nothing: every text must be new, not merely its options.
    fitted = {row["text"] for row in _load(ANSWERS)}
    assert [_where(row) for row in _load(HELDOUT) if row["text"] in fitted] == []


def test_the_final_table_shares_no_answer_with_the_tables_the_parser_revisions_were_fitted_to() -> None:
    # Both earlier tables have been fitted to by now, so a final answer must be new to each of them.
    fitted = {row["text"] for path in (ANSWERS, HELDOUT) for row in _load(path)}
    assert [_where(row) for row in _load(FINAL) if row["text"] in fitted] == []


def test_prometheus_cases_have_the_fields_and_consistent_values(prometheus: list[dict[str, Any]]) -> None:
    for row in prometheus:
        _check_row(row, extra={"their_expected", "note"})
        assert PROMETHEUS_STYLES[row["style"]] == row["kind"], _where(row)
        if row["kind"] == "score":
            assert row["options"] == {"scale_min": 1, "scale_max": 5}, _where(row)


def test_prometheus_cases_carry_a_note_exactly_where_the_readings_differ(
    prometheus: list[dict[str, Any]],
) -> None:
    for row in prometheus:
        ours = row["score"] if row["kind"] == "score" else row["choice"]
        differs = ours != row["their_expected"]
        assert differs == ("note" in row), _where(row)
        if "note" in row:
            assert isinstance(row["note"], str) and row["note"].strip(), _where(row)


def test_prometheus_cases_cover_both_grading_modes(prometheus: list[dict[str, Any]]) -> None:
    assert set(Counter(row["style"] for row in prometheus)) == set(PROMETHEUS_STYLES)
