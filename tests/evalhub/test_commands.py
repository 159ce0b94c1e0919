"""`analyze` and `export`: formats, streaming CSV, formula-injection defence, clear errors."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from evalhub.imports.exports import ALL_TABLE_COLUMNS, RATING_COLUMNS, TABLE_COLUMNS, csv_lines, neutralise
from tests.evalhub.factories import import_long, live_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated(story_study, tmp_path):
    rows = [(f"{g}-{i}", g, q, "human", f"r{r}", 1 + (i + r + len(q)) % 5)
            for g in ("human", "gpt2") for i in range(5) for q in ("relevance", "likability") for r in range(3)]
    rows += [(f"{g}-{i}", g, "relevance", "=HYPERLINK(\"x\")", str(s), 1 + (i * s) % 5)
             for g in ("human", "gpt2") for i in range(5) for s in range(2)]
    import_long(story_study, rows, tmp_path)
    return story_study


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_analyze_json_is_strict_json_with_the_documented_top_level_keys(rated):
    result = json.loads(run("analyze", "story", "--format", "json", "--n-boot", "50"))
    assert {"study", "pools", "cells", "kendall", "welch", "pairwise_kendall"} <= set(result)
    assert result["study"]["slug"] == "story"
    assert result["settings"]["ci_n_boot"] == 50


def test_analyze_table_lays_out_pools_as_rows_and_states_welch_in_words(rated):
    text = run("analyze", "story", "--n-boot", "20", "--question", "relevance")
    assert "== relevance: mean (std)" in text
    assert "Human raters" in text and "on relevance" in text
    assert "likability" not in text


def test_analyze_csv_has_one_row_per_table_row_with_a_table_column(rated):
    rows = list(csv.DictReader(io.StringIO(run("analyze", "story", "--format", "csv", "--n-boot", "20"))))
    assert tuple(rows[0]) == ALL_TABLE_COLUMNS
    # majority and position_bias: pairwise studies only (position_bias: runs with a swap share)
    assert {r["table"] for r in rows} == set(TABLE_COLUMNS) - {"majority", "position_bias"}


def test_analyze_refuses_an_unknown_study(db):
    with pytest.raises(CommandError, match="no study 'nope'"):
        run("analyze", "nope")


def test_export_ratings_is_long_form_with_one_row_per_rating_and_pools_named_like_the_analysis(rated):
    live_run(rated, "twice", [("human-0", "relevance", 0, None, "refused")])
    live_run(rated, "twice", [("human-0", "relevance", 0, 4.0, "ok")])
    text = run("export", "story", "--what", "ratings")
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == RATING_COLUMNS
    assert len(rows) - 1 == 60 + 20 + 2
    pools = {r[4] for r in rows[1:]}
    runs = list(rated.judge_runs.filter(judge__name="twice").order_by("id").values_list("id", flat=True))
    assert pools == {"human", "'=HYPERLINK(\"x\")", f"twice#{runs[0]}", f"twice#{runs[1]}"}
    refused = next(r for r in rows if r[4] == f"twice#{runs[0]}")
    assert refused[6:8] == ["", "refused"]


def test_export_writes_a_file_when_asked_and_one_table_with_its_own_columns(rated, tmp_path):
    out = tmp_path / "kendall.csv"
    run("export", "story", "--what", "tables", "--table", "kendall", "--out", str(out), "--n-boot", "20")
    rows = list(csv.DictReader(out.open(newline="", encoding="utf-8")))
    assert tuple(rows[0]) == TABLE_COLUMNS["kendall"]
    assert len(rows) == 4 * 2  # every question x (gpt2, human) x the one LLM pool
    with pytest.raises(CommandError, match="no such directory"):
        run("export", "story", "--what", "tables", "--out", str(tmp_path / "missing" / "x.csv"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
     ("\rx", "'\rx"), ("fine", "fine"), (-0.5, -0.5), (3.0, 3.0), ("", "")],
)
def test_text_that_a_spreadsheet_would_run_as_a_formula_is_neutralised_and_numbers_are_not(value, expected):
    assert neutralise(value) == expected


def test_neutralised_values_survive_a_csv_round_trip():
    text = "".join(csv_lines([("a", "b"), ("=cmd|' /C calc'!A0", -1.5)]))
    assert list(csv.reader(io.StringIO(text)))[1] == ["'=cmd|' /C calc'!A0", "-1.5"]
