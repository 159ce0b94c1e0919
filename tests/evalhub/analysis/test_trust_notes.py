"""Every number says how far it can be trusted (issue 25): a signed tau band, "not significant" above p = 0.05,
"too few items (n = 2)" and "no variation" beside kappa, Fleiss' kappa and alpha, ratio alpha with zeros.

Each case is built from data made to trigger its note; the expected readings were written from the
definitions (tau of reversed ranks is -1; kappa on 2 items is below the documented minimum of 5; a bootstrap
over items that all agree perfectly gives alpha 1 in every defined replicate) before running the code.
"""
from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest

from annotations.studies import study_create
from evalhub import stats
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.trust_notes import MIN_ITEMS, cut_interval, withheld_values, zero_width
from tests.evalhub.factories import import_long

pytestmark = pytest.mark.usefixtures("fresh_cache")

# Hayes & Krippendorff (2007), table 1: 40 news articles x 5 observers, tone 0-3, "." = not coded.
HAYES_2007 = """
1 1 2 . 2|1 1 0 1 .|2 3 3 3 .|. 0 0 . 0|0 0 0 . 0|0 0 0 . 0|1 0 2 . 1|1 . 2 0 .|2 2 2 . 2|2 1 1 1 .
. 1 0 0 .|0 0 0 0 .|1 2 2 2 .|3 3 2 2 3|1 1 1 . 1|1 1 1 . 1|2 1 2 . 2|1 2 3 3 .|1 1 0 1 .|0 0 0 . 0
0 0 1 1 .|0 0 . 0 0|2 3 3 3 .|0 0 0 0 .|1 2 . 2 2|0 1 1 1 .|0 0 0 1 0|1 2 1 2 .|1 1 2 2 .|1 1 2 . 2
1 1 0 . 0|2 1 2 1 .|2 2 . 2 2|3 2 2 2 .|2 2 2 . 2|2 2 3 . 2|2 2 2 . 2|2 2 . 1 2|2 2 2 2 .|1 1 1 . 1
"""

FEW_6 = ("few items for a bootstrap interval (n = 6): below 10 items the resamples are so few that the "
         "interval's ends move with the bootstrap's seed; ")


def _hayes() -> np.ndarray:
    units = HAYES_2007.replace("\n", "|").strip("|").split("|")
    return np.array([[math.nan if v == "." else float(v) for v in unit.split()] for unit in units])


def _study(researcher, slug: str, *, scale_min: int = 1, scale_max: int = 5):
    spec = {"title": slug, "llm_template": "Rate:\n{text}\n{question}", "item_fields": ["text"],
            "scale": {"min": scale_min, "max": scale_max}, "questions": [{"key": "q", "text": "q?"}]}
    return study_create(slug=slug, spec=spec, owner=researcher)


def _rows(pool: str, scores: dict[str, list[int]]) -> list[tuple[str, str, str, str, str, int]]:
    """Long rows of one pool: human raters r0, r1, ...; an LLM pool's samples 0, 1, ..."""
    prefix = "r" if pool == "human" else ""
    return [(item, "g", "q", pool, f"{prefix}{k}", s) for item, row in scores.items() for k, s in enumerate(row)]


def _analyse(study, rows, tmp_path):
    import_long(study, rows, tmp_path)
    return study_analysis(study=study, options=AnalysisOptions(n_boot=200))


def _dashboard(client, researcher, study) -> str:
    client.force_login(researcher)
    response = client.get(f"/studies/{study.slug}/")
    assert response.status_code == 200
    return response.content.decode()


# ---------------------------------------------------------------------------
# Kendall's tau: sign and significance


@pytest.mark.django_db
def test_a_judge_ranking_the_items_opposite_to_the_people_reads_strong_negative(researcher, client, tmp_path):
    study = _study(researcher, "reversed")
    humans = {"i1": [1, 1], "i2": [1, 2], "i3": [2, 2], "i4": [3, 3], "i5": [4, 4], "i6": [5, 5]}
    judge = {"i1": [5, 5], "i2": [4, 5], "i3": [4, 4], "i4": [3, 3], "i5": [2, 2], "i6": [1, 1]}
    result = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path)

    (row,) = result.kendall
    assert row.tau == pytest.approx(-1.0)
    assert row.p == pytest.approx(2 / math.factorial(6))  # scipy's exact p: 2 of the 6! orders are as extreme
    assert row.band == "strong negative"
    page = _dashboard(client, researcher, study)
    assert 'class="band band-strong-negative">strong negative<' in page
    assert "band-strong\"" not in page  # never the green badge


@pytest.mark.django_db
def test_a_tau_whose_p_is_above_005_claims_no_strength(researcher, client, tmp_path):
    study = _study(researcher, "three-items")
    humans = {"i1": [1, 1], "i2": [2, 2], "i3": [3, 3]}
    judge = {"i1": [1, 1], "i2": [3, 3], "i3": [2, 2]}
    result = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path)

    (row,) = result.kendall
    assert row.tau == pytest.approx(1 / 3)  # would have been "strong" by size alone
    assert row.p == pytest.approx(1.0)
    assert row.band == "not significant"
    assert result.to_json()["kendall"][0]["band"] == "not significant"
    # On 3 items the page withholds tau as it does alpha (issue 25, second review U6); the JSON keeps it.
    assert row.notes == {"tau": "too few items (n = 3)"}
    assert 'class="undef tau-note">too few items, n = 3<' in _dashboard(client, researcher, study)

    # From 5 items on the page shows tau, and its band: 0.6 on 5 items is strong by size, p = 0.233 (exact).
    study = _study(researcher, "five-items")
    humans = {f"i{k}": [k, k] for k in range(1, 6)}
    judge = {"i1": [1, 1], "i2": [3, 3], "i3": [2, 2], "i4": [5, 5], "i5": [4, 4]}
    (row,) = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path).kendall
    assert (row.tau, row.band, row.notes) == (pytest.approx(0.6), "not significant", {})
    assert row.p == pytest.approx(0.2333, abs=1e-4)
    assert ">not significant<" in _dashboard(client, researcher, study)


# ---------------------------------------------------------------------------
# Kappa, Fleiss' kappa and alpha on too few items, and a degenerate bootstrap


@pytest.mark.django_db
def test_kappa_on_two_items_keeps_its_value_and_says_too_few_items(researcher, client, tmp_path):
    study = _study(researcher, "two-items")
    humans = {"i1": [1, 1, 2], "i2": [4, 4, 4]}
    judge = {"i1": [1, 1], "i2": [3, 3]}
    result = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path)

    majority = next(k for k in result.kappa if k.against == "majority" and k.weights == "unweighted")
    assert majority.n_items == 2 and majority.kappa is not None  # the value stays in the result and its JSON
    assert majority.notes == {"kappa": "too few items (n = 2)"}
    raters = [k for k in result.kappa if k.against == "rater"]
    assert raters and all(k.notes.get("kappa") == "too few items (n = 2)" for k in raters)
    (cell,) = [c for c in result.cells if c.pool == "human"]
    assert cell.alpha["ordinal"] is not None and cell.notes["alpha"] == "too few items (n = 2)"
    row = next(r for r in result.to_json()["kappa"] if r["against"] == "majority")
    assert row["kappa"] == majority.kappa and row["notes"] == {"kappa": "too few items (n = 2)"}

    page = _dashboard(client, researcher, study)
    # + Fleiss, + table 6 (2 pools); the ceiling's withheld summary gives the whole note
    assert page.count('<span class="undef">too few items, n = 2</span>') == len(raters) + 3 + 1 + 2
    assert 'the human ceiling is withheld: <span class="undef">too few items (n = 2)</span>' in page
    assert 'α <span class="undef alpha-note">too few items, n = 2</span>' in page


@pytest.mark.django_db
def test_fleiss_kappa_on_one_item_says_too_few_items(researcher, tmp_path):
    study = _study(researcher, "one-item")
    result = _analyse(study, _rows("human", {"i1": [1, 1, 2]}), tmp_path)

    (fleiss,) = [k for k in result.kappa if k.against == "raters"]
    assert fleiss.kappa == pytest.approx(-0.5)  # the "-0.500 [-0.500, -0.500]"
    assert fleiss.notes == {"kappa": "too few items (n = 1)"}
    assert MIN_ITEMS == 5  # docs/analysis.md states this minimum


@pytest.mark.django_db
def test_a_zero_width_bootstrap_interval_says_no_variation(researcher, client, tmp_path):
    study = _study(researcher, "agree")
    # Every item agrees perfectly: each replicate's alpha and kappa is 1 (or undefined and dropped).
    scores = {"i1": [1, 1], "i2": [1, 1], "i3": [2, 2], "i4": [3, 3], "i5": [4, 4], "i6": [5, 5]}
    result = _analyse(study, _rows("human", scores) + _rows("judge", scores), tmp_path)

    human = next(c for c in result.cells if c.pool == "human")
    assert human.alpha_ci95 == (1.0, 1.0) and "alpha" not in human.notes  # 6 items: enough
    # Both reasons, few items first (which the page shows; eleventh review); width 0 after it.
    assert human.notes["alpha_ci95"] == FEW_6 + "no variation: the bootstrap interval has width 0 (both bounds 1.000)"
    majority = next(k for k in result.kappa if k.against == "majority" and k.weights == "unweighted")
    assert majority.ci95 == (1.0, 1.0)
    assert majority.notes == {"ci95": FEW_6 + "no variation: the bootstrap interval has width 0 (both bounds 1.000)"}
    page = _dashboard(client, researcher, study)
    assert ('<td data-label="95% CI" class="kappa-ci"><span class="undef">no CI: few items for a bootstrap interval, n = 6'
            '</span></td>') in page
    assert "[1.000, 1.000]" not in page


# ---------------------------------------------------------------------------
# Ratio alpha with zeros follows the reference


def test_ratio_alpha_with_zeros_equals_the_krippendorff_package_on_hayes_and_krippendorff_2007():
    data = _hayes()
    assert data.shape == (40, 5)
    ratio = stats.krippendorff_alpha(data, level="ratio", value_domain=[0, 1, 2, 3])
    assert ratio.value == pytest.approx(krippendorff.alpha(data.T, level_of_measurement="ratio"), abs=1e-12)
    assert round(ratio.value, 3) == 0.662
    # The published ordinal and interval values of the same table, as a check that the data are right.
    assert round(stats.krippendorff_alpha(data, level="ordinal").value, 4) == 0.7598
    assert round(stats.krippendorff_alpha(data, level="interval").value, 4) == 0.7574


@pytest.mark.django_db
def test_the_analysis_reports_ratio_alpha_on_a_scale_from_zero(researcher, tmp_path):
    study = _study(researcher, "hayes", scale_min=0, scale_max=3)
    data = _hayes()
    rows = [(f"a{u}", "g", "q", "human", f"obs{o}", int(v)) for u, unit in enumerate(data) for o, v in enumerate(unit)
            if not math.isnan(v)]
    result = _analyse(study, rows, tmp_path)

    (cell,) = result.cells
    assert cell.alpha["ratio"] == pytest.approx(krippendorff.alpha(data.T, level_of_measurement="ratio"), abs=1e-12)
    assert "alpha.ratio" not in cell.notes and "alpha" not in cell.notes


# ---------------------------------------------------------------------------
# The ceiling's t interval cut at the score's limit


def test_cut_interval_names_the_side_cut_and_nothing_else():
    assert stats.score_range("accuracy") == (0.0, 1.0)
    assert cut_interval((0.8, 1.0), (0.0, 1.0)).startswith("the t interval is cut above at 1.000")
    assert cut_interval((0.0, 0.3), (0.0, 1.0)).startswith("the t interval is cut below at 0.000")
    assert cut_interval((0.2, 0.9), (0.0, 1.0)) is None  # inside the range
    assert cut_interval((1.0, 1.0), (0.0, 1.0)) is None  # width 0: the "no variation" note's case
    assert cut_interval(None, (0.0, 1.0)) is None


@pytest.mark.django_db
def test_a_ceiling_interval_cut_at_zero_says_so_on_ten_items(researcher, tmp_path):
    """Three raters agree on 9 of 10 items; r0 gives 4 where the others give 3. Each rater's negative RMSE is 0
    on 9 items and below 0 on one, so its mean is just under 0, the limit, and its t interval (t_{0.975, 9} = 2.26
    standard errors) passes 0: it is cut there, and the note says so (10 items: no "too few items" note)."""
    study = _study(researcher, "ceiling-cut")
    humans = {f"i{k}": [4 if k == 0 else 3, 3, 3] for k in range(10)}
    judge = {f"i{k}": [3] for k in range(10)}
    result = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path)
    ceiling = next(c for c in result.ceiling if c.pool == "judge")
    assert ceiling.scoring == "neg_rmse" and len(ceiling.raters) == 3
    cut = [n for n in ceiling.notes if "rater's score: the t interval is cut above at 0.000" in n]
    assert len(cut) == 3, ceiling.notes
    assert all(r.rater_ci95 is not None and r.rater_ci95[1] == 0.0 for r in ceiling.raters)
    assert not any(n.startswith("too few items") for n in ceiling.notes)


def test_the_ceiling_summary_is_a_point_comparison_only_where_the_intervals_overlap():
    from evalhub import stats
    from evalhub.analysis.agreement_rows import _ceiling_summary
    from evalhub.analysis.result import CeilingRater

    ceiling = stats.HumanCeiling("neg_rmse", (), 1, 1, "the judge agrees with your raters better than 1 of 1 of "
                                 "them do", ())
    apart = CeilingRater("r1", 9, -1.2, (-1.5, -0.9), -0.3, (-0.5, -0.1), True, None)
    overlapping = CeilingRater("r1", 9, -1.194, (-2.03, -0.36), -0.569, (-1.85, 0.0), True, None)
    assert _ceiling_summary(ceiling, [apart], 9) == ceiling.summary
    assert _ceiling_summary(ceiling, [overlapping], 9) == f"{ceiling.summary} (a point comparison: see the intervals)"
    # Below the minimum item count the summary is withheld (the row's notes say why).
    assert _ceiling_summary(ceiling, [apart], 3) is None


@pytest.mark.django_db
def test_a_bootstrap_interval_of_float_noise_width_says_no_variation(researcher, client, tmp_path):
    """Fifth review, M2: linear kappa is 0 in every resample when every human-majority score is at least every
    judge label, but float noise gave [0.0, 2.22e-16], which an exact test took for a real interval."""
    study = _study(researcher, "noise")
    humans = {"i1": [3, 3, 4], "i2": [4, 4, 3], "i3": [3, 3, 3], "i4": [4, 4, 4], "i5": [3, 3, 2]}
    judge = {"i1": [2, 2], "i2": [3, 3], "i3": [2, 2], "i4": [3, 3], "i5": [2, 2]}
    result = _analyse(study, _rows("human", humans) + _rows("judge", judge), tmp_path)

    majority = next(k for k in result.kappa if k.against == "majority" and k.weights == "linear")
    assert majority.kappa == 0.0
    assert majority.ci95 is not None and 0.0 < majority.ci95[1] - majority.ci95[0] < 1e-12  # the float noise
    assert "no variation: the bootstrap interval has width 0 (both bounds 0.000)" in majority.notes["ci95"]
    few = "few items for a bootstrap interval, n = 5"  # the first of its two reasons (eleventh review)
    assert withheld_values(majority) == {"ci95_low": few, "ci95_high": few}
    page = _dashboard(client, researcher, study)
    assert "[0.000, 0.000]" not in page
    assert zero_width((0.0, 2.220446049250313e-16)) and zero_width((1e6, 1e6 + 1e-4))
    assert not zero_width((0.0, 1e-6)) and not zero_width(None)
