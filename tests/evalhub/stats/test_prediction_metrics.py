"""Per-rater metrics for personalized and persona judges, checked against hand computations."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats as sps

from evalhub.stats.prediction_metrics import Averaged, RaterMetrics, average_metrics, per_rater_metrics

REPO_ROOT = Path(__file__).resolve().parents[3]

TRUE = {
    "w1": {"a": 1, "b": 2, "c": 3, "d": 4},
    "w2": {"a": 5, "b": 4, "c": 3},
    "w3": {"a": 2, "b": 2},
    "w4": {"a": 3},
}
PRED = {
    "w1": {"a": 1, "b": 3, "c": 3, "d": 5},
    "w2": {"a": 3, "b": 4, "c": None},
    "w3": {"a": 2, "b": 3},
}


def test_per_rater_rows_match_hand_computations():
    rows = per_rater_metrics(TRUE, PRED)
    assert [r.rater for r in rows] == ["w1", "w2", "w3", "w4"]

    w1 = rows[0]
    assert (w1.n, w1.n_missing) == (4, 0)
    assert w1.kendall == pytest.approx(sps.kendalltau([1, 2, 3, 4], [1, 3, 3, 5]).statistic)
    assert w1.pearson == pytest.approx(sps.pearsonr([1, 2, 3, 4], [1, 3, 3, 5]).statistic)
    assert w1.spearman == pytest.approx(sps.spearmanr([1, 2, 3, 4], [1, 3, 3, 5]).statistic)
    assert w1.accuracy == 0.5  # a and c exact
    assert w1.mae == 0.5  # (0 + 1 + 0 + 1) / 4
    assert w1.reasons == {}

    w2 = rows[1]  # c unparseable: not scored, counted as missing
    assert (w2.n, w2.n_missing) == (2, 1)
    # true 5 > 4 but predicted 3 < 4: perfectly discordant
    assert w2.kendall == pytest.approx(-1.0) and w2.pearson == pytest.approx(-1.0) and w2.spearman == pytest.approx(-1.0)
    assert (w2.accuracy, w2.mae) == (0.5, 1.0)

    w3 = rows[2]  # the rater gave 2 and 2: correlations undefined
    assert (w3.n, w3.kendall, w3.pearson, w3.spearman, w3.accuracy, w3.mae) == (2, None, None, None, 0.5, 0.5)
    assert set(w3.reasons) == {"kendall", "pearson", "spearman"}
    assert "constant" in w3.reasons["kendall"]

    assert rows[3] == RaterMetrics(
        "w4",
        0,
        1,
        None,
        None,
        None,
        None,
        None,
        {
            "kendall": "fewer than 2 paired items (0)",
            "pearson": rows[3].reasons["pearson"],
            "spearman": rows[3].reasons["spearman"],
            "accuracy": "no item with both a true and a predicted score",
            "mae": "no item with both a true and a predicted score",
        },
    )
    assert rows[3].reasons["pearson"].startswith("fewer than 2")


def test_averages_are_over_raters_with_a_defined_value_and_pooled_over_items():
    summary = average_metrics(per_rater_metrics(TRUE, PRED))
    assert (summary.n_raters, summary.n_items, summary.n_missing) == (4, 8, 2)
    tau_w1 = sps.kendalltau([1, 2, 3, 4], [1, 3, 3, 5]).statistic
    assert summary.kendall.value == pytest.approx((tau_w1 - 1.0) / 2) and summary.kendall.n_raters == 2
    assert summary.accuracy == Averaged(0.5, 3)
    assert summary.mae.value == pytest.approx((0.5 + 1.0 + 0.5) / 3) and summary.mae.n_raters == 3
    assert summary.pooled_accuracy == pytest.approx(4 / 8)  # a,c of w1; b of w2; a of w3
    assert summary.pooled_mae == pytest.approx((2 + 2 + 1) / 8)


def test_tolerance_counts_near_misses_as_hits():
    rows = per_rater_metrics({"w": {"a": 3, "b": 4}}, {"w": {"a": 3.5, "b": 2}}, tolerance=0.5)
    assert rows[0].accuracy == 0.5
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        per_rater_metrics(TRUE, PRED, tolerance=-1)


def test_nan_predictions_are_missing_not_wrong():
    rows = per_rater_metrics({"w": {"a": 3, "b": 4}}, {"w": {"a": math.nan, "b": 4}})
    assert (rows[0].n, rows[0].n_missing, rows[0].accuracy, rows[0].mae) == (1, 1, 1.0, 0.0)


def test_predictions_outside_the_true_scores_are_errors():
    with pytest.raises(ValueError, match=r"predictions for raters without true scores: \['w9'\]"):
        per_rater_metrics(TRUE, {"w9": {"a": 1}})
    with pytest.raises(ValueError, match=r"predictions for rater 'w1' on items the rater did not rate: \['z'\]"):
        per_rater_metrics(TRUE, {"w1": {"z": 1}})


def test_empty_input_summary():
    summary = average_metrics([])
    assert summary.kendall == Averaged(None, 0, "no raters")
    assert (summary.n_raters, summary.n_items, summary.pooled_accuracy, summary.pooled_mae) == (0, 0, None, None)
    undefined = average_metrics(per_rater_metrics({"w": {"a": 1}}, {}))
    assert undefined.accuracy == Averaged(None, 0, "accuracy is undefined for every rater")


def test_module_and_judge_kinds_do_not_import_django():
    # evalhub/__init__.py starts the Celery app, so the package is stubbed with its path only.
    code = """
import sys, types
pkg = types.ModuleType("evalhub"); pkg.__path__ = [sys.argv[1] + "/evalhub"]; sys.modules["evalhub"] = pkg
sys.path.insert(0, sys.argv[1])
import evalhub.stats.prediction_metrics
import llmjudge.kinds.rubric.prompts, llmjudge.kinds.personalized.prompts, llmjudge.kinds.persona.prompts
import llmjudge.kinds.roleplay.prompts, llmjudge.kinds.roleplay.roles, llmjudge.kinds.roleplay.votes
import llmjudge.kinds.roleplay.clustering, llmjudge.kinds.roleplay.embedding, llmjudge.engine.conversation
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {"django", "celery", "torch", "sentence_transformers"})
assert not leaked, leaked
"""
    completed = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
