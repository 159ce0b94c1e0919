"""Issue 25's fourth review: Welch on all individual ratings follows the minimum of items per side (M1), and every
CSV leaves a value the page withholds empty, naming why in its ``withheld`` column (M2)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report, welch_sentence
from evalhub.analysis.trust_notes import ceiling_summary_withheld, ceiling_withheld, withheld_text, withheld_values
from evalhub.imports.exports import TABLE_COLUMNS, table_rows
from evalhub.pages.dashboard import _scatter_legend
from tests.evalhub.analysis.test_withheld_numbers import _rows, _study
from tests.evalhub.factories import import_long

pytestmark = pytest.mark.usefixtures("fresh_cache")

HIGH = {"a1": [5, 4, 5], "a2": [4, 4, 3], "a3": [5, 5, 4]}
LOW = {"b1": [1, 2, 1], "b2": [2, 3, 2], "b3": [1, 1, 2]}
JUDGE_HIGH = {"a1": [5], "a2": [3], "a3": [4]}
JUDGE_LOW = {"b1": [2], "b2": [1], "b3": [1]}


def _three_items_a_side(researcher, tmp_path, slug: str, unit: str = "item means"):
    study = _study(researcher, slug)
    rows = (_rows("human", "a", HIGH) + _rows("human", "b", LOW) + _rows("judge", "a", JUDGE_HIGH)
            + _rows("judge", "b", JUDGE_LOW))
    import_long(study, rows, tmp_path)
    return study, study_analysis(study=study, options=AnalysisOptions(n_boot=200, welch_unit=unit))  # type: ignore[arg-type]


def dashboard_html(client, researcher, study, query: str = "") -> str:  # noqa: ANN001
    """The study's dashboard as its owner reads it (``query``: e.g. "?group=(all)")."""
    client.force_login(researcher)
    return client.get(f"/studies/{study.slug}/{query}").content.decode()


def _csv(result, table: str) -> list[dict[str, object]]:
    header, *rows = list(table_rows(result, table))
    assert header == TABLE_COLUMNS[table]
    return [dict(zip(header, r, strict=True)) for r in rows]


@pytest.mark.django_db
def test_welch_on_all_ratings_of_three_items_a_side_is_withheld_as_on_item_means(researcher, client, tmp_path):
    study, result = _three_items_a_side(researcher, tmp_path, "welch-ratings-three", unit="ratings")
    (row,) = [w for w in result.welch if w.pool == "human"]
    assert row.test.unit == "ratings" and row.test.n_a == 9 and row.test.n_b == 9
    assert row.test.p is not None and row.p_adjusted is not None and row.p_adjusted < 0.05  # would earn a star
    assert row.notes == {"test": "too few items (n = 3 and 3)"}
    sentence = welch_sentence(row)
    assert "no test is reported, too few items (n = 3 and 3)" in sentence
    assert "p = " not in sentence and "p < " not in sentence and "prefer" not in sentence
    report = text_report(result)
    assert "BH-adjusted p =" not in report and "BH-adjusted p <" not in report
    assert result.to_json()["welch"][0]["p"] is not None  # the JSON keeps the value, with the note
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/?welch=ratings").content.decode()
    assert "no test is reported, too few items (n = 3 and 3)" in page
    assert "over b (BH-adjusted" not in page  # no star, no starred tooltip
    assert "treated as independent though ratings of one item or one rater are not: an optimistic p" in page


@pytest.mark.django_db
def test_every_csv_leaves_a_withheld_value_empty_and_names_why(researcher, tmp_path):
    _, result = _three_items_a_side(researcher, tmp_path, "csv-withheld")
    expected = {
        "cells": ("alpha_ordinal", "too few items, n = 3"),
        "kendall": ("tau", "too few items, n = 3"),
        "welch": ("p_adjusted", "too few items, n = 3 and 3"),
        "kappa": ("kappa", "too few items, n = 3"),
        "ceiling": ("rater_score", "too few items, n = 3"),
    }
    for table, (column, reason) in expected.items():
        lines = _csv(result, table)
        withheld = [line for line in lines if line["withheld"]]
        assert withheld, table
        for line in withheld:
            assert line[column] == "", (table, line)
            assert f"{column}" in str(line["withheld"]) and reason in str(line["withheld"]), (table, line)
    # The JSON keeps them.
    data = result.to_json()
    assert all(c["alpha"]["ordinal"] is not None for c in data["cells"] if c["pool"] == "human")
    assert all(w["p_adjusted"] is not None for w in data["welch"])
    assert any(k["kappa"] is not None and k["notes"].get("kappa") for k in data["kappa"])


@pytest.mark.django_db
def test_the_welch_csv_gives_a_shown_test_in_its_columns(researcher, tmp_path):
    study = _study(researcher, "csv-welch-five")
    high = {f"a{i}": [5 - i % 2, 4, 5 - i % 3] for i in range(5)}
    low = {f"b{i}": [1 + i % 2, 2, 1 + i % 3] for i in range(5)}
    import_long(study, _rows("human", "a", high) + _rows("human", "b", low), tmp_path)
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200))
    (line,) = _csv(result, "welch")
    assert line["withheld"] == ""
    assert line["p_adjusted"] == result.welch[0].p_adjusted and line["t"] == result.welch[0].test.t


@pytest.mark.django_db
def test_an_interval_of_width_zero_is_withheld_with_its_reason(researcher, tmp_path):
    _, result = _three_items_a_side(researcher, tmp_path, "csv-zero-width")
    shown = next(k for k in result.kappa if k.kappa is not None)
    zero = dataclasses.replace(shown, ci95=(0.5, 0.5), notes={
        "ci95": "no variation: the bootstrap interval has width 0 (both bounds 0.500)"})
    assert withheld_values(zero) == {"ci95_low": "no variation", "ci95_high": "no variation"}
    assert withheld_text(withheld_values(zero)) == "ci95_low, ci95_high: no variation"


@pytest.mark.django_db
def test_kappa_tables_say_dash_where_undefined_and_withheld_texts_never_nest_parentheses(
        researcher, client, tmp_path):
    study, result = _three_items_a_side(researcher, tmp_path, "c4-kappa")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    rows = re.findall(r'<tr class="kappa-row".*?</tr>', page, flags=re.S)
    assert rows
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        assert all(cell.strip() for cell in cells), row  # p (BH) and Fleiss' tied: "–", never blank
    assert "too few items, n = 3" in page
    assert not re.search(r"\([^()]*\([^()]*\)\)", _scatter_legend("a", next(k for k in result.kendall)))
    report = text_report(result)
    block = report.split("== Cohen's kappa")[1].split("\n\n")[0].splitlines()
    assert block[-1].startswith("items: the items kappa is over")  # the columns' footnote
    kappa = block[3:-1]
    assert kappa and all(line.split()[-1] == "–" for line in kappa)  # p (BH) of Fleiss and majority rows
    fleiss = [line for line in kappa if " raters " in line]
    assert fleiss and all(line.split()[-2] == "–" for line in fleiss)  # Fleiss' tied
    assert not re.search(r"too few items \(n = [^()]*\)\)", report + page)  # "(τ withheld: too few items (n = 3))"


@pytest.mark.django_db
def test_the_json_keeps_withheld_values_and_names_them_in_a_withheld_object(researcher, client, tmp_path):
    """Fifth review, M1: a script reading the JSON tells a withheld value from a shown one without parsing notes;
    the fields named are the CSV's withheld columns (one rule), by their JSON names."""
    study, result = _three_items_a_side(researcher, tmp_path, "json-withheld")
    client.force_login(researcher)
    data = client.get(f"/studies/{study.slug}/analysis.json").json()
    assert len(data["welch"]) == len(result.welch)
    for row, json_row in zip(result.welch, data["welch"], strict=True):
        expected = withheld_values(row)
        assert json_row.get("withheld", {}) == expected  # Welch's columns are its JSON fields
        if expected:
            assert json_row["p"] == row.test.p and json_row["p"] is not None  # the value stays
    (cell,) = [c for c in data["cells"] if c["pool"] == "human" and c["group"] == "a"]
    assert cell["withheld"]["alpha.ordinal"] == "too few items, n = 3" and cell["alpha"]["ordinal"] is not None
    kappa = next(k for k in data["kappa"] if k["against"] == "majority" and k["group"] == "a")
    assert set(kappa["withheld"]) == {"kappa", "ci95"} and kappa["kappa"] is not None  # no p: not tested
    raters = [r for c in data["ceiling"] for r in c["raters"] if r["rater_score"] is not None]
    assert raters and all(r["withheld"]["rater_score"] == "too few items, n = 3" for r in raters)
    assert all("withheld" not in r for r in data["rater_means"])


@pytest.mark.django_db
def test_a_withheld_ceiling_block_marks_its_summary_fields_withheld(researcher, client, tmp_path):
    """Sixth review, M1: a withheld ceiling's block-level "judge better k of n" carries a ``withheld`` mark (values
    stay), the same reason as its raters' lines; a shown ceiling has none."""
    study, result = _three_items_a_side(researcher, tmp_path, "json-ceiling-block")
    client.force_login(researcher)
    data = client.get(f"/studies/{study.slug}/analysis.json").json()
    blocks = [(row, b) for row, b in zip(result.ceiling, data["ceiling"], strict=True) if row.raters]
    assert blocks
    for row, block in blocks:
        assert ceiling_withheld(row)  # 3 items a side: every ceiling is withheld
        assert {"judge_better", "n_compared"} <= set(block["withheld"])
        assert set(block["withheld"].values()) == {"too few items, n = 3"}
        assert ("summary" in block["withheld"]) == (block["summary"] is not None)
        assert block["judge_better"] == row.judge_better and block["n_compared"] == row.n_compared
    shown = dataclasses.replace(blocks[0][0], notes=())
    assert ceiling_summary_withheld(shown) == {}


@pytest.mark.django_db
def test_the_all_groups_view_says_why_table_12_is_empty_and_points_at_no_hidden_scatter(researcher, client, tmp_path):
    """Fifth review, U1 and U3: table 12 has no all-groups column. Sixth review (C): the all-groups view drew no
    scatter and said nothing; now it draws the pooled items' scatter, its legend naming all groups."""
    study, _ = _three_items_a_side(researcher, tmp_path, "all-groups-view")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'id="raters-empty"' not in page and 'id="charts-scatter"' in page
    assert "The scatter charts' legends give the same τ, p with its kind, and band." in page
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    assert 'id="charts-scatter"' in page and "The scatter charts' legends give the same τ, p with its kind, and band." in page
    assert "all groups ⚠ pooled (τ" in page and "group “a”" not in page[page.index('id="charts-scatter"'):]
    assert "Not given for all groups together: table 12 gives each rater's mean per group" in page
    assert '<table class="paper" id="raters">' not in page
    report = text_report(study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=("(all)",))))
    assert "Per-rater means (table 12): not given for all groups together" in report


@pytest.mark.django_db
def test_an_all_groups_kappa_p_says_it_is_adjusted_nowhere(researcher, client, tmp_path):
    """Fifth review, U2: "unfiltered only" pointed at an analysis with no all-groups rows."""
    study, _ = _three_items_a_side(researcher, tmp_path, "all-groups-p")
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=("(all)",)))
    rows = [k for k in result.kappa if k.against == "rater"]
    assert rows and all(k.group == "(all)" and k.p_adjusted is None for k in rows)
    assert all(k.notes["p_adjusted"].startswith("not adjusted: all groups together") for k in rows)
    filtered = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=("a",)))
    assert all(k.notes["p_adjusted"].startswith("given on the unfiltered") for k in filtered.kappa
               if k.against == "rater")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    assert ">unfiltered only<" not in page and 'title="p (BH) not adjusted: all groups together' in page


@pytest.mark.django_db
def test_the_ceiling_axis_says_a_dot_is_a_mean_over_items_of_the_per_item_score(researcher, client, tmp_path):
    """Fifth review, U5: stats.ceiling averages the per-item RMSE over the rater's items; the axis says so."""
    study, result = _three_items_a_side(researcher, tmp_path, "ceiling-axis")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()  # 6 items: a ceiling that is drawn
    assert ">mean over items of the per-item<" in page and ">negative RMSE against the other raters<" in page
    assert "Human ceiling (mean over items of the per-item negative RMSE against the other raters" in text_report(result)


@pytest.mark.django_db
def test_table_6_gives_each_cell_its_items_beside_its_pairs(researcher, client, tmp_path):
    """Fifth review, U4: table 6's cells gave "3 pairs" and no item n."""
    study, _ = _three_items_a_side(researcher, tmp_path, "pairwise-items")
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=("(all)",)))
    human = next(r for r in result.pairwise_kendall if r.pool == "human")
    assert (human.n_pairs, human.n_items) == (3, 6) and "mean_tau" not in human.notes
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    assert 'title="3 pairs, n = 6 items"' in page
    assert _csv(result, "pairwise_kendall")[0]["n_items"] == human.n_items


@pytest.mark.django_db
def test_a_withheld_ceiling_gives_no_value_and_the_human_pool_row_has_no_blank_cell(researcher, client, tmp_path):
    """Fifth review, C2 (a greyed dot's tooltip gave its value; since review 18 a withheld ceiling draws no dot at
    all) and C7 (blank cells in the rater pools' human row)."""
    study, _ = _three_items_a_side(researcher, tmp_path, "grey-dots")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'class="ceiling-withheld"' in page and not re.findall(r"<title>[^<]*vs the other raters", page)
    assert len(re.findall(r'<td data-label="[^"]+" title="human raters: no LLM run">–</td>', page)) == 4


@pytest.mark.django_db
def test_the_all_groups_kappa_footnote_says_in_text_why_p_bh_is_empty(researcher, client, tmp_path):
    """Sixth review, U3: the (all) view's κ footnote says, visibly, that all-groups rows have no adjusted p and why;
    the default (per-group) view, whose rows are adjusted, does not say it."""
    study, _ = _three_items_a_side(researcher, tmp_path, "all-groups-kappa-p")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'id="kappa-all-groups-p"' not in page
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    note = re.search(r'<span id="kappa-all-groups-p">(.*?)</span>', page)
    assert note and "All-groups rows have no adjusted p" in note.group(1)
    assert "in no Benjamini–Hochberg family" in note.group(1) and "unadjusted p is in the JSON and the κ CSV" in note.group(1)


@pytest.mark.django_db
def test_the_pairwise_tau_table_says_it_is_a_mean_over_pairs_and_shows_each_cells_n(researcher, client, tmp_path):
    """Sixth review, U4: table 6's heading names the mean over rater pairs; a shown cell says its pairs and n
    visibly (the (all) view pools 3 + 3 items, so its means are shown), not only in a tooltip."""
    study, _ = _three_items_a_side(researcher, tmp_path, "pairwise-n")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    heading = re.search(r'<h2 id="table-pairwise">(.*?)</h2>', page)
    assert heading and heading.group(1).startswith("Mean pairwise Kendall's τ among a pool's raters")
    assert "each cell the mean of τ over every pair of the pool's raters" in heading.group(1)
    table6 = page[page.index('id="table-pairwise"'):]
    table6 = table6[:table6.index("</table>")]
    cells = re.findall(r'<td class="[^"]*" title="(\d+) pairs?, n = (\d+) items?[^"]*">(.*?)</td>', table6)
    shown = [(pairs, n, cell) for pairs, n, cell in cells if not cell.startswith('<span class="undef">')]
    assert shown
    # Seventh review, U5: a withheld mean keeps its second line too (its pairs and n).
    page = client.get(f"/studies/{study.slug}/").content.decode()
    table6 = page[page.index('id="table-pairwise"'):]
    table6 = table6[:table6.index("</table>")]
    withheld = re.findall(r'<span class="undef">too few items, n = 3</span>(.*?)</td>', table6)
    assert withheld and all(re.fullmatch(r'<span class="second cell-n pairwise-n">(\d of )?\d pairs?, n = 3</span>',
                                         line) for line in withheld), withheld
    for pairs, n, cell in shown:
        assert re.fullmatch(rf'-?\d\.\d+<span class="second cell-n pairwise-n">{pairs} pairs?, n = {n}</span>', cell)


@pytest.mark.django_db
def test_the_all_groups_view_and_report_warn_once_that_pooling_mixes_the_groups_difference(researcher, client,
                                                                                            tmp_path):
    """Sixth review, M2: pooled α and τ include the between-group difference; the (all) view says so once, near
    the top, and so does the text report for the (all) group; the per-group view does not."""
    study, result = _three_items_a_side(researcher, tmp_path, "pooled-caveat")
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'id="pooled-groups-caveat"' not in page and "All groups pooled" not in text_report(result)
    page = client.get(f"/studies/{study.slug}/?group=(all)").content.decode()
    assert page.count('id="pooled-groups-caveat"') == 1
    assert page.index('id="pooled-groups-caveat"') < page.index('id="table-ratings"')
    caveat = re.search(r'<p id="pooled-groups-caveat">(.*?)</p>', page)
    assert caveat and "mixes the difference between the groups into it" in caveat.group(1)
    # Seventh review, M3: every pooled figure that compares items is named, not only α and τ; tenth review, M2:
    # those that average over items are named apart, as the groups' items added together (not mixed).
    text = caveat.group(1).replace("&#x27;", "'")
    mixed, added = text.split("Figures that count or average over items")
    for figure in ("α", "ICC", "Kendall's τ", "pairwise τ", "Cohen's and Fleiss' κ"):
        assert figure in mixed, figure
    for figure in ("% full agreement", "the confusion matrix's counts", "the human ceiling's scores"):
        assert figure in added and figure not in mixed, figure
    assert "read the per-group values" in caveat.group(1)
    pooled = study_analysis(study=study, options=AnalysisOptions(n_boot=200, groups=(ALL_GROUPS,)))  # type: ignore[arg-type]
    report = text_report(pooled)
    assert report.count("Caveat: All groups pooled:") == 1
    assert report.index("Caveat: All groups pooled:") < report.index("==")
