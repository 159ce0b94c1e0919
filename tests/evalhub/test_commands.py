"""`analyze` and `export`: formats, streaming CSV, formula-injection defence, clear errors."""
from __future__ import annotations

import csv
import io
import json
import re

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


def test_plan_human_budget_plans_each_contrast_from_the_studys_pilot(researcher, tmp_path):
    import numpy as np

    from evalhub.stats.ppi.mean import draw_human_subset
    from evalhub.stats.ppi.plan import pilot_moments, plan_human_budget
    from tests.conftest import shared_path
    from tests.support.alt_test_data import read_alt_test_dataset
    from tests.support.ppi_study import JUDGE, summeval_study

    summeval_study(slug="summeval-20", owner=researcher, tmp_path=tmp_path)
    out = run("plan_human_budget", "summeval-20", "--width", "0.8")
    # The same plan straight from the dataset's files: the pilot is the 20 % kept per system.
    data = read_alt_test_dataset(shared_path("data", "AltTest", "data", "summeval"))
    moments = []
    for system in ("M11", "M23"):
        ids = sorted(i for i in data.llms[JUDGE] if i.endswith(f"__{system}__coherence"))
        kept = draw_human_subset(len(ids), share=0.2, seed=0)[0]
        y = np.array([np.mean([r[ids[k]] for r in data.humans.values() if ids[k] in r]) for k in kept])
        f = np.array([data.llms[JUDGE][ids[k]] for k in kept])
        moments.append(pilot_moments(y=y, f=f, n_unlabelled=len(ids) - kept.size))
    want = plan_human_budget(group_a=moments[0], group_b=moments[1], width=0.8)
    assert want.with_judge is not None and want.without_judge is not None and want.items_saved is not None
    assert f"with the judge: {want.with_judge.n_a} + {want.with_judge.n_b} human-rated items (of 100 + 100)" in out
    assert f"people alone:   {want.without_judge.n_a} + {want.without_judge.n_b} human-rated items" in out
    assert f"the judge saves {want.items_saved} human-rated items" in out
    n = [int(draw_human_subset(100, share=0.2, seed=0)[0].size)] * 2
    assert f"M11 {moments[0].rho:.2f} on {n[0]} items, M23 {moments[1].rho:.2f} on {n[1]} items" in out
    # docs/analysis.md's example
    out = run("plan_human_budget", "summeval-20", "--width", "0.6")
    assert "(judge-human correlation over the pilot's items: M11 0.41 on 20 items, M23 0.35 on 20 items)" in out
    assert "rest on fewer than" not in out  # 20 pilot items a group: no rough-pilot note
    assert "with the judge: 44 + 44 human-rated items (of 100 + 100), expected width 0.597" in out
    assert "people alone:   48 + 48 human-rated items (of 100 + 100), expected width 0.596" in out
    assert "the judge saves 8 human-rated items" in out
    # The widths are the large-sample ones, said on the target line; 44 and 48 items a group need no t note.
    assert out.startswith("target: a 95 % interval 0.6 wide for each difference; judge: gpt-4o; widths are "
                          "large-sample ones (normal quantile 1.96, as the PPI intervals use)\n")
    assert "t interval" not in out


def test_plan_human_budget_on_few_items_says_a_t_interval_would_be_wider_and_names_a_constant_group(
        story_study, tmp_path):
    # The demo's shape (eighth review): 3 items a group, three raters. On grammaticality the "human" group's item
    # means are all 13/3 (4, 4, 5 on each item); on relevance everything varies.
    def human(g: str, q: str, i: int, r: int) -> int:
        return (4, 4, 5)[r] if (g, q) == ("human", "grammaticality") else 1 + (i + r * (i + 1) + len(g)) % 5
    rows = [(f"{g}-{i}", g, q, "human", f"r{r}", human(g, q, i, r))
            for g in ("human", "gpt2") for i in range(3) for q in ("grammaticality", "relevance") for r in range(3)]
    rows += [(f"{g}-{i}", g, q, "gpt", "0", 1 + (2 * i + len(q)) % 5)
             for g in ("human", "gpt2") for i in range(3) for q in ("grammaticality", "relevance")]
    import_long(story_study, rows, tmp_path)
    out = run("plan_human_budget", "story", "--width", "0.5")
    assert "grammaticality: “human” − “gpt2”: no plan (group “human”: the pilot's human item means do not vary, " \
        "all 4.33)" in out
    assert "group a" not in out and "human scores do not vary" not in out
    # The pilot's correlation on 3 items a group is not planned with (eleventh review, M1): it must be stated.
    assert ("relevance: “human” − “gpt2”: no plan (the pilot's judge-human correlation rests on too few items (group "
            "“human” 3, group “gpt2” 3; 5 needed): state a correlation") in out
    out = run("plan_human_budget", "story", "--width", "0.5", "--rho", "0.3")
    assert "  note: the pilot's spreads rest on fewer than 5 items a group, so this plan is rough" in out
    # Nothing reaches 0.5 on 3 + 3 items: the notes' widths rest on 3 + 3 items, where t_{0.975, 4} / 1.96 = 1.42.
    assert "  note: without the judge, every item rated by people gives an expected width of" in out
    assert ("  note: with fewer than 30 human-rated items in a group, a t interval would be wider than these "
            "large-sample widths: at least 1.42 times at 3 + 3 items (t_{0.975, 4} / 1.96); df = n_a + n_b - 2") in out
    # Reached on 2 + 2 items with the judge and 3 + 3 alone: each printed width gets its factor.
    out = run("plan_human_budget", "story", "--width", "1.2", "--rho", "0.9")
    assert "  with the judge: 2 + 2 human-rated items (of 3 + 3)" in out
    assert "at least 2.20 times at 2 + 2 items (t_{0.975, 2} / 1.96), 1.42 times at 3 + 3 items" in out


@pytest.mark.parametrize("args, message", [
    (["--width", "0"], "width must be a positive number"), (["--width", "1", "--rho", "2"], "rho must be between"),
    (["--width", "1", "--pool", "nobody"], "no LLM pool 'nobody'"),
])
def test_plan_human_budget_refuses_bad_input_clearly(rated, args, message):
    with pytest.raises(CommandError, match=message):
        run("plan_human_budget", "story", *args)


def test_plan_human_budget_needs_a_judge(story_study):
    with pytest.raises(CommandError, match="no LLM pool"):
        run("plan_human_budget", "story", "--width", "1")


@pytest.mark.parametrize("command", ["analyze", "export"])
def test_the_help_names_the_pooled_group_what_the_bootstrap_sets_and_the_defaults(command):
    """Review (textlabels): "(all)" was not mentioned, --n-boot said alpha only though it sets kappa's interval too,
    --seed had no help; the filter options are shared, so `export` says the same."""
    from importlib import import_module

    parser = import_module(f"evalhub.management.commands.{command}").Command().create_parser("manage.py", command)
    text = re.sub(r"\s+", " ", parser.format_help())
    assert '"(all)" is the pseudo-group that pools every group' in text
    assert "Bootstrap replicates for the 95% CIs of alpha, Cohen's kappa and Fleiss' kappa (default: 1000)." in text
    assert "--seed SEED Seed of those bootstraps (default: 0;" in text
    if command == "analyze":
        assert "table: plain-text tables (default); json: every value with its notes; csv: every table's rows." in text
        for part in ("Cohen's and Fleiss' kappa", "confusion matrices", "the human ceiling",
                     "the alternative annotator test", "prediction-powered inference (PPI)"):
            assert part in text
