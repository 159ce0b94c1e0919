"""The alt-test's power simulation against a brute-force one written here: plain loops, ``alt_test`` per replicate."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections.abc import Hashable, Sequence
from pathlib import Path

import pytest

from evalhub.stats.alt_test import alt_test
from evalhub.stats.alt_test_power import (
    ITEMS_GRID,
    Design,
    RatingModel,
    plan,
    simulate_power,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def brute_force_power(design: Design, model: RatingModel, *, epsilon: float, replicates: int,
                      seed: int) -> tuple[float, float]:
    """The same generative model (see the module's docstring), drawn with Python's random, one rating at a time."""
    rng = random.Random(seed)
    n_items = design.raters * design.items_per_rater // design.raters_per_item

    def report(truth: int, quality: float) -> float:
        if model.scoring == "accuracy":
            if rng.random() < quality:
                return float(truth)
            return float(rng.choice([c for c in range(model.levels) if c != truth]))
        return float(min(max(round(truth + rng.gauss(0.0, quality)), 0), model.levels - 1))

    passed = 0
    for _ in range(replicates):
        truth = [rng.randrange(model.levels) for _ in range(n_items)]
        llm: dict[Hashable, float | Sequence[float]] = {i: report(truth[i], model.judge) for i in range(n_items)}
        humans: dict[str, dict[Hashable, float]] = {}
        for r in range(design.raters):
            humans[f"r{r}"] = {}
            for t in range(design.items_per_rater):
                i = (r * design.items_per_rater + t) % n_items
                humans[f"r{r}"][i] = report(truth[i], model.human)
        result = alt_test(humans, llm, scoring=model.scoring, epsilon=epsilon)
        passed += bool(result.passed)
    p = passed / replicates
    return p, math.sqrt(p * (1 - p) / replicates)


@pytest.mark.parametrize(
    ("design", "model", "epsilon"),
    [
        (Design(5, 40, 3), RatingModel("accuracy", 3, 0.75, 0.8), 0.15),
        (Design(6, 35, 2), RatingModel("accuracy", 2, 0.8, 0.75), 0.2),
        (Design(5, 40, 3), RatingModel("neg_rmse", 5, 1.0, 0.8), 0.1),
    ],
)
def test_simulated_power_agrees_with_a_brute_force_simulation_within_monte_carlo_error(
        design: Design, model: RatingModel, epsilon: float) -> None:
    fast = simulate_power(design, model, epsilon=epsilon, replicates=2000, seed=1)
    slow, slow_se = brute_force_power(design, model, epsilon=epsilon, replicates=400, seed=2)
    # The cases are chosen away from 0 and 1, where agreement would be trivial.
    assert 0.1 < fast.power < 0.9, fast
    assert abs(fast.power - slow) < 4 * math.sqrt(fast.se**2 + slow_se**2), (fast, slow, slow_se)


def test_a_perfect_judge_among_noisy_raters_passes_and_a_random_one_fails() -> None:
    design = Design(5, 60, 3)
    perfect = simulate_power(design, RatingModel("accuracy", 3, 0.7, 1.0), replicates=200)
    random_judge = simulate_power(design, RatingModel("accuracy", 3, 0.7, 1 / 3), replicates=200)
    assert perfect.power == 1.0 and perfect.se == 0.0
    assert random_judge.power == 0.0


def test_power_grows_with_the_items_per_rater() -> None:
    model = RatingModel("accuracy", 3, 0.75, 0.8)
    powers = [simulate_power(Design(5, k, 3), model, replicates=1000).power for k in (30, 60, 120)]
    assert powers[0] < powers[1] < powers[2]


def test_the_simulation_is_seeded() -> None:
    design, model = Design(5, 40, 3), RatingModel("accuracy", 3, 0.75, 0.8)
    assert simulate_power(design, model, seed=3) == simulate_power(design, model, seed=3)
    assert simulate_power(design, model, seed=3, replicates=2000) != simulate_power(design, model, seed=4,
                                                                                     replicates=2000)


def test_a_design_the_test_cannot_judge_has_no_power() -> None:
    model = RatingModel("accuracy", 3, 0.7, 1.0)
    assert simulate_power(Design(5, 29, 3), model).power == 0.0  # under 30 items per rater
    assert simulate_power(Design(2, 60, 2), model).power == 0.0  # under 3 raters
    result = plan(Design(2, 60, 2), model, replicates=50)
    assert any("no verdict" in note for note in result.notes)


def test_the_plan_stops_at_the_first_grid_point_reaching_80_percent() -> None:
    model = RatingModel("accuracy", 3, 0.75, 0.8)
    result = plan(Design(5, 30, 3), model, replicates=300, seed=5)
    assert result.items_needed is not None
    k = result.items_needed.design.items_per_rater
    assert result.items_needed.power >= 0.8
    searched_items = [p.design.items_per_rater for p in result.searched if p.design.raters == 5]
    # Every smaller grid point was searched and fell short; no larger one was searched.
    assert searched_items == [g for g in ITEMS_GRID if g <= k]
    assert all(p.power < 0.8 for p in result.searched if p.design.raters == 5 and p.design.items_per_rater < k)


def test_a_rating_budget_gives_large_designs_fewer_replicates_and_small_ones_all() -> None:
    model = RatingModel("accuracy", 3, 0.8, 0.8)
    result = plan(Design(100, 300, 3), model, replicates=100, rating_budget=1_500_000)
    assert result.stated.replicates == 50  # 1,500,000 // 30,000 ratings
    small = [p for p in result.searched if p.design.raters * p.design.items_per_rater <= 15_000]
    assert small and all(p.replicates == 100 for p in small)
    tiny_budget = plan(Design(100, 300, 3), model, replicates=100, rating_budget=1)
    assert tiny_budget.stated.replicates == 20  # never under 20


def test_no_grid_point_reaching_the_target_is_said() -> None:
    result = plan(Design(5, 40, 3), RatingModel("accuracy", 3, 0.7, 0.4), replicates=50)
    assert result.items_needed is None and result.raters_needed is None
    assert any("no number of ratings per rater" in note for note in result.notes)
    assert any("no number of raters" in note for note in result.notes)


@pytest.mark.parametrize(
    ("design", "model", "kwargs", "message"),
    [
        (Design(5, 40, 6), RatingModel("accuracy", 3, 0.8, 0.8), {}, "raters per item must be between 2"),
        (Design(5, 40, 1), RatingModel("accuracy", 3, 0.8, 0.8), {}, "raters per item must be between 2"),
        (Design(5, 0, 2), RatingModel("accuracy", 3, 0.8, 0.8), {}, "items per rater must be at least 1"),
        (Design(10_000, 201, 3), RatingModel("accuracy", 3, 0.8, 0.8), {}, "2,010,000 ratings; the simulation takes"),
        (Design(5, 40, 3), RatingModel("accuracy", 3, 1.2, 0.8), {}, "the human accuracy must be between 0 and 1"),
        (Design(5, 40, 3), RatingModel("neg_rmse", 5, 1.0, -1.0), {}, "the judge noise"),
        (Design(5, 40, 3), RatingModel("accuracy", 1, 0.8, 0.8), {}, "at least 2 values"),
        (Design(5, 40, 3), RatingModel("accuracy", 3, 0.8, 0.8), {"epsilon": 1.0}, "epsilon must be strictly"),
        (Design(5, 40, 3), RatingModel("accuracy", 3, 0.8, 0.8), {"replicates": 0}, "replicates must be between"),
    ],
)
def test_bad_values_are_refused_with_a_reason(design: Design, model: RatingModel, kwargs: dict[str, float],
                                             message: str) -> None:
    with pytest.raises(ValueError, match=message):
        simulate_power(design, model, **kwargs)  # type: ignore[arg-type]


def test_the_power_module_does_not_import_django() -> None:
    code = """
import sys, types
sys.modules["evalhub"] = package = types.ModuleType("evalhub")
package.__path__ = [sys.argv[1]]
import evalhub.stats.alt_test_power
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {"django", "celery"}
                or (m.startswith("evalhub.") and not m.startswith("evalhub.stats")))
assert not leaked, leaked
"""
    completed = subprocess.run([sys.executable, "-c", code, str(REPO_ROOT / "evalhub")], capture_output=True,
                               text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
