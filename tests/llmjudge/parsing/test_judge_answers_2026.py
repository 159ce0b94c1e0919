"""The parser against the blind tables of issue 24: ``judge_answers_2026.jsonl`` (today's judges, 25 styles) and
``prometheus_eval_cases.jsonl`` (prometheus-eval's own parser cases, read as a careful human reads them).

Every field of every line is asserted: the score or choice, the status, the reason of an unparseable answer,
the reasoning trace split off and the rationale. The tables were written without reading the parser (see
``README.md`` beside them); their conventions are the contract. Property tests check that no text makes
the parser raise and that a refusal, in any of the languages, never gets a score whatever numbers it holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjudge.parsing import (
    OK,
    REASONS,
    REFUSED,
    UNPARSEABLE,
    ParsedChoice,
    ParsedScore,
    parse_pairwise,
    parse_score,
    split_reasoning,
)

HERE = Path(__file__).resolve().parent


def _load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (HERE / name).read_text(encoding="utf-8").splitlines() if line.strip()]


ANSWERS = _load("judge_answers_2026.jsonl")
PROMETHEUS = _load("prometheus_eval_cases.jsonl")


def _params(rows: list[dict[str, Any]], kind: str) -> list[Any]:
    return [pytest.param(row, id=f"{n:03d}-{row['style']}") for n, row in enumerate(rows) if row["kind"] == kind]


def _expected_score(row: dict[str, Any]) -> ParsedScore:
    score = None if row["score"] is None else float(row["score"])
    return ParsedScore(score, row["status"], row["rationale"], reason=row["reason"], reasoning=row["reasoning"])


def _expected_choice(row: dict[str, Any]) -> ParsedChoice:
    return ParsedChoice(
        row["choice"], row["status"], row["rationale"], reason=row["reason"], reasoning=row["reasoning"]
    )


@pytest.mark.parametrize("row", _params(ANSWERS, "score") + _params(PROMETHEUS, "score"))
def test_score_answer_reads_as_a_careful_human_reads_it(row: dict[str, Any]) -> None:
    assert parse_score(row["text"], **row["options"]) == _expected_score(row)


@pytest.mark.parametrize("row", _params(ANSWERS, "pairwise") + _params(PROMETHEUS, "pairwise"))
def test_pairwise_answer_reads_as_a_careful_human_reads_it(row: dict[str, Any]) -> None:
    assert parse_pairwise(row["text"], **row["options"]) == _expected_choice(row)


def test_the_tables_cover_every_reason_the_parser_gives_but_a_parser_error() -> None:
    used = {row["reason"] for row in ANSWERS + PROMETHEUS} - {""}

    assert used == set(REASONS) - {"parser error"}


@pytest.mark.parametrize(
    ("text", "reasoning", "answer", "cut_off"),
    [
        ("<think>\nHmm, a 3.\n</think>\n\nScore: 4", "Hmm, a 3.", "Score: 4", False),
        ("A 3 or a 4.\n</think>\n\\boxed{4}", "A 3 or a 4.", "\\boxed{4}", False),
        ("<think>\nStill weighing a 2", "Still weighing a 2", "", True),
        (
            "<|channel|>analysis<|message|>4.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
            "4.",
            "4",
            False,
        ),
        ("<|channel|>analysis<|message|>Maybe 2", "Maybe 2", "", True),
        ("analysisLooks like a 2.assistantfinal**2**", "Looks like a 2.", "**2**", False),
        ("Analysis: the response is clear. Score: 4", "", "Analysis: the response is clear. Score: 4", False),
        ("Thinking...\nA 5.\n...done thinking.\n\n5", "A 5.", "5", False),
        ("Thinking...\nA 5, or", "A 5, or", "", True),
        ("  Score: 3  ", "", "Score: 3", False),
    ],
)
def test_split_reasoning_separates_the_trace_from_the_answer(
    text: str, reasoning: str, answer: str, cut_off: bool
) -> None:
    assert split_reasoning(text) == (reasoning, answer, cut_off)


# Refusals of the table's languages, each with numbers that must not become a score.
REFUSALS = [
    "I'm sorry, but I can't rate this. Per section {n} of my guidelines, even {n} out of 5 would be wrong.",
    "I must decline to score this response; it has {n} problems.",
    "Lo siento, no puedo evaluar este contenido (sección {n}).",
    "Não consigo atribuir uma nota: faltam {n} parágrafos.",
    "Je ne peux pas évaluer ce texte : article {n}.",
    "Es tut mir leid, aber ich kann diesen Inhalt nicht bewerten ({n} von 5).",
    "Mi dispiace, ma non posso valutare questo contenuto (sezione {n}).",
    "Извините, но я не могу оценить этот текст (пункт {n}).",
    "抱歉，我无法对此内容进行评分，即使是给{n}分也不行。",
    "申し訳ありませんが、この内容の評価はできません（第{n}条）。",
    "죄송하지만 이 내용은 평가할 수 없습니다. 규정 {n}조.",
]


@settings(max_examples=150, deadline=None)
@given(
    template=st.sampled_from(REFUSALS),
    number=st.integers(min_value=0, max_value=10) | st.sampled_from([1.5, 4.2, 2019]),
    curly=st.booleans(),
    scale=st.sampled_from([(1, 5), (1, 10), (0, 1)]),
)
def test_a_refusal_never_gets_a_score_whatever_numbers_it_holds(
    template: str, number: float, curly: bool, scale: tuple[int, int]
) -> None:
    text = template.format(n=number)
    if curly:
        text = text.replace("'", "\u2019")

    result = parse_score(text, scale_min=scale[0], scale_max=scale[1])

    assert (result.score, result.status, result.reason) == (None, REFUSED, "")


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=400)
    | st.from_regex(r"[\[\]{}<>|\"'\w\s:./*\-★☆½⭐]{0,200}", fullmatch=True)
    | st.sampled_from(
        [
            "<think>",
            "</think>",
            "<|channel|>analysis<|message|>",
            "Thinking...\n",
            "[RESULT] ",
            "评分：",
            "\\boxed{",
            "[[",
            '{"score": ',
            "Score: 3. Wait — Score: ",
            "Fluency: 4\nCoherence: ",
        ]
    ).flatmap(lambda prefix: st.text(max_size=80).map(lambda rest: prefix + rest)),
    scale=st.sampled_from([(1, 5), (1, 7), (0, 10), (1, 3), (0, 1)]),
    aspect=st.sampled_from([None, "fluency", ("coherence", "Do the sentences fit together?"), "a(b"]),
    truncated=st.booleans(),
)
def test_no_answer_makes_the_score_parser_raise_and_the_result_is_consistent(
    text: str, scale: tuple[int, int], aspect: Any, truncated: bool
) -> None:
    result = parse_score(text, scale_min=scale[0], scale_max=scale[1], aspect=aspect, truncated=truncated)

    assert result.status in (OK, UNPARSEABLE, REFUSED)
    assert (result.score is not None) == (result.status == OK)
    assert (result.reason != "") == (result.status == UNPARSEABLE)
    assert result.reason in ("", *REASONS)
    assert result.score is None or scale[0] <= result.score <= scale[1]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=300)
    | st.sampled_from(["[[A", "[[B>", "\\boxed{", "Response B, no wait, ", "<think>", "Ответ ", "回答"]).flatmap(
        lambda prefix: st.text(max_size=60).map(lambda rest: prefix + rest)
    ),
    assistant_names=st.booleans(),
    truncated=st.booleans(),
)
def test_no_answer_makes_the_pairwise_parser_raise(text: str, assistant_names: bool, truncated: bool) -> None:
    result = parse_pairwise(text, assistant_names=assistant_names, truncated=truncated)

    assert result.choice in ("A", "B", "tie", None)
    assert (result.choice is None) == (result.status != OK)
    assert (result.reason != "") == (result.status == UNPARSEABLE)
