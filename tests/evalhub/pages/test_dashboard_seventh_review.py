"""The seventh review of the small study's dashboard (issue 25): a bootstrap interval over 6 items that moved with
the seed (M1), the pooled view's ceiling judging the raters by a pooled alpha (M2), the plan's correlations on 3
items without their n (M4), ICC and alpha's interval only in a tooltip (U3), the text report's ceiling without the
intervals it points at (U4), table 6's withheld cells without their pairs (U5, in test_withheld_exports) and the
report's missing Welch section (U6)."""
from __future__ import annotations

import re
from html import unescape

import numpy as np
import pytest

from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from evalhub.analysis.planning.human_subset import budget_lines, human_budget_plan
from evalhub.analysis.text_report import text_report
from evalhub.analysis.trust_notes import FEW_FOR_INTERVAL, MIN_INTERVAL_ITEMS, few_for_interval, withheld_values
from evalhub.imports.exports import table_rows
from tests.evalhub.analysis.test_withheld_exports import _three_items_a_side, dashboard_html

pytestmark = pytest.mark.usefixtures("fresh_cache")


def _pooled(study, seed: int = 0):  # noqa: ANN001, ANN202
    return study_analysis(study=study, options=AnalysisOptions(n_boot=200, seed=seed, groups=(ALL_GROUPS,)))  # type: ignore[arg-type]


def test_the_interval_rule_runs_from_five_to_nine_items():
    assert [n for n in range(1, 15) if few_for_interval(n)] == list(range(5, MIN_INTERVAL_ITEMS))
    assert few_for_interval(6).startswith(f"{FEW_FOR_INTERVAL} (n = 6):")


@pytest.mark.django_db
def test_on_six_items_alpha_and_kappa_keep_their_values_and_withhold_their_intervals(researcher, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "six-items")
    pooled = _pooled(study)
    human = next(c for c in pooled.cells if c.pool == "human")
    assert human.alpha["ordinal"] is not None and "alpha" not in human.notes  # 6 pairable items: shown
    assert human.notes["alpha_ci95"].startswith(f"{FEW_FOR_INTERVAL} (n = 6)")
    assert human.alpha_ci95 is not None  # the JSON keeps it
    assert set(withheld_values(human)) >= {"alpha_ci95_low", "alpha_ci95_high"}
    kappas = [k for k in pooled.kappa if k.kappa is not None]
    assert kappas and all(k.notes["ci95"].startswith(f"{FEW_FOR_INTERVAL} (n = 6)") for k in kappas)
    header, *rows = list(table_rows(pooled, "kappa"))
    low = header.index("ci95_low")
    assert rows and all(row[low] in ("", None) for row in rows)
    # The seed moves the withheld interval, not the shown value.
    other = next(c for c in _pooled(study, seed=3).cells if c.pool == "human")
    assert other.alpha == human.alpha


@pytest.mark.django_db
def test_the_page_shows_no_interval_on_six_items_and_says_why(researcher, client, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "six-items-page")
    page = unescape(dashboard_html(client, researcher, study, "?group=(all)"))
    cells = re.findall(r'<span class="second cell-ci">(.*?)</span>\s*</td>', page, flags=re.S)
    assert cells and all(f'95% CI <span class="undef">not shown: {FEW_FOR_INTERVAL}, n = 6</span>' in c for c in cells)
    assert all(re.search(r"ICC\(1\) -?\d\.\d\d", c) for c in cells)  # ICC(1) in the cell, not only a tooltip
    charts = page[page.index('id="charts-alpha"'):page.index('id="alpha-no-ci"')]
    assert ">no CI</text>" in charts and "<line" in charts  # the dot without a bar, named
    assert re.search(r"no CI” beside a dot: its interval is withheld \(few items for a bootstrap interval: below "
                     r"10 items its ends move with the bootstrap's seed[;)]", page)
    # Per group (3 items) alpha itself is withheld, and no fourth line repeats it.
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert 'class="second cell-ci"' not in page


@pytest.mark.django_db
def test_the_pooled_ceiling_says_its_alpha_pools_the_groups(researcher, tmp_path):
    study, result = _three_items_a_side(researcher, tmp_path, "pooled-ceiling")
    pooled = _pooled(study)
    # Eighth review, M1: the pooled alpha (about 0.8 here) is not used; within each group (3 items) it is unknown,
    # and the note says so rather than staying silent as a pooled alpha above 0.667 would.
    assert pooled.ceiling and all(any(n.startswith("the raters' alpha over all groups includes the difference "
                                                   "between the groups, so it is not used here; within the groups "
                                                   "it is unknown (too few items or undefined: “a” n = 3, “b” n = 3)")
                                      for n in c.notes) for c in pooled.ceiling)
    assert not any("alpha over all groups" in n for c in result.ceiling for n in c.notes)
    assert not any("agree little" in n for c in pooled.ceiling for n in c.notes)


@pytest.mark.django_db
def test_the_text_report_gives_the_ceiling_intervals_and_why_it_has_no_welch_section(researcher, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "report-ceiling")
    report = text_report(_pooled(study))
    assert "rater vs others  95% CI" in report
    assert re.search(r"\n\w+\s+6\s+-?\d\.\d{3}\s+\[-?\d\.\d{3}, -?\d\.\d{3}\]\s+-?\d\.\d{3}\s+\[", report)
    assert "== Welch's t-test between groups: no contrasts: this view pools the groups" in report


@pytest.mark.django_db
def test_the_budget_plan_gives_each_correlations_items_and_calls_a_small_pilot_rough(researcher, tmp_path):
    study, _ = _three_items_a_side(researcher, tmp_path, "budget-pilot")
    lines = budget_lines(human_budget_plan(study=study, width=1.0))
    text = "\n".join(lines)
    # Eleventh review, M1: on 3 pilot items a group the correlation is not planned with; a stated one is, roughly.
    assert ("q: “a” − “b”: no plan (the pilot's judge-human correlation rests on too few items (group “a” 3, group “b” "
            "3; 5 needed): state a correlation") in text, text
    stated = "\n".join(budget_lines(human_budget_plan(study=study, width=1.0, rho=0.5)))
    assert "(judge-human correlation: stated, 0.50)" in stated
    assert "the pilot's spreads rest on fewer than 5 items a group, so this plan is rough" in stated


@pytest.mark.django_db
def test_the_confusion_csv_gives_each_category_as_its_label_and_its_number(researcher, tmp_path):
    # Seventh review, C4: "1 (lowest)" alone could not be compared with a score by a script.
    _, result = _three_items_a_side(researcher, tmp_path, "confusion-values")
    header, *rows = list(table_rows(result, "confusion"))
    lines = [dict(zip(header, row, strict=True)) for row in rows]
    assert lines and all(isinstance(line["human_value"], int) and isinstance(line["pool_value"], int)
                         for line in lines)
    first = next(line for line in lines if line["human_value"] == 1 and line["pool_value"] == 1)
    assert str(first["human_category"]).startswith("1") and str(first["pool_category"]).startswith("1")
    assert {line["human_value"] for line in lines} == set(range(1, 6))


def test_within_groups_note_judges_each_group_as_the_ceiling_judges_one():
    # Unit check of the three outcomes on hand-made cells: too few items, low agreement, enough agreement.
    from types import SimpleNamespace

    from evalhub.analysis.agreement_rows import within_groups_note
    from evalhub.stats import LOW_HUMAN_ALPHA

    class _Cell:
        def __init__(self, matrix):  # noqa: ANN001
            self._m = np.asarray(matrix, dtype=float)
            self.item = np.arange(self._m.shape[0])

        def compact_matrix(self):  # noqa: ANN202
            return self._m

    agree = [[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4], [5, 5, 5], [1, 1, 2]]
    noise = [[1, 5, 3], [5, 1, 2], [2, 4, 5], [4, 2, 1], [3, 1, 4], [5, 3, 1]]
    data = SimpleNamespace(groups=["x", "y"], ci_level="ordinal", domain=[1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])
    note = within_groups_note(data, {("q", "x", "human"): _Cell(agree), ("q", "y", "human"): _Cell(noise)}, "q")
    assert "within the groups the raters agree little (alpha “y” " in note and f"< {LOW_HUMAN_ALPHA})" in note
    note = within_groups_note(data, {("q", "x", "human"): _Cell(agree), ("q", "y", "human"): _Cell(agree)}, "q")
    assert note.endswith(f"within each group it is at least {LOW_HUMAN_ALPHA}")
    note = within_groups_note(data, {("q", "x", "human"): _Cell(agree[:3]), ("q", "y", "human"): _Cell(agree)}, "q")
    assert "unknown (too few items or undefined: “x” n = 3)" in note
