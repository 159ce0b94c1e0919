"""Time the agreement statistics on a 1,000,000-rating matrix (a script, not a test).

Run: .venv/bin/python tests/bench/bench_stats.py
Budget: the whole analysis of a study with a million ratings must take < 3 s. The ratio to
a baseline measured in the same run (one np.nansum pass over the matrix) makes figures
comparable across machines.
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

import numpy as np

# Reached through a bare namespace package: evalhub/__init__.py starts a Celery app, which this script
# doesn't need.
sys.modules["evalhub"] = _package = types.ModuleType("evalhub")
_package.__path__ = [str(Path(__file__).resolve().parents[2] / "evalhub")]
from evalhub import stats  # noqa: E402

N_ITEMS, N_RATERS = 200_000, 5
HALF_POINTS = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]


def build_matrix(seed: int = 0) -> np.ndarray:
    """1-5 ratings around a per-item truth, 10 % half points, 10 % missing."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=(N_ITEMS, 1))
    matrix = np.clip(truth + rng.integers(-1, 2, size=(N_ITEMS, N_RATERS)), 1, 5).astype(float)
    half = rng.random(matrix.shape) < 0.1
    matrix[half] = np.clip(matrix[half] - 0.5, 1, 5)
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    return matrix


def best_of(repeats: int, function) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def analysis(matrix: np.ndarray) -> dict[str, object]:
    return {
        "alpha": stats.alpha_all_levels(matrix, value_domain=HALF_POINTS),
        "ci": stats.alpha_bootstrap_ci(matrix, level="ordinal", value_domain=HALF_POINTS, n_boot=1000),
        "icc1": stats.icc1(matrix),
        "icc1k": stats.icc1k(matrix),
        "full_agreement": stats.full_agreement_pct(matrix),
    }


def main() -> None:
    matrix = build_matrix()
    n_ratings = int((~np.isnan(matrix)).sum())
    baseline, _ = best_of(20, lambda: np.nansum(matrix))
    steps = {
        "alpha_all_levels": lambda: stats.alpha_all_levels(matrix, value_domain=HALF_POINTS),
        "alpha_bootstrap_ci (ordinal, 1000)": lambda: stats.alpha_bootstrap_ci(
            matrix, level="ordinal", value_domain=HALF_POINTS, n_boot=1000
        ),
        "icc1 + icc1k": lambda: (stats.icc1(matrix), stats.icc1k(matrix)),
        "full_agreement_pct": lambda: stats.full_agreement_pct(matrix),
    }
    print(f"matrix: {N_ITEMS} items x {N_RATERS} raters, {n_ratings} ratings (of {matrix.size} cells)")
    print(f"baseline np.nansum: {baseline * 1000:.2f} ms")
    for name, step in steps.items():
        seconds, _ = best_of(3, step)
        print(f"{name:38s} {seconds * 1000:8.1f} ms  ({seconds / baseline:6.0f} x baseline)")
    total, results = best_of(3, lambda: analysis(matrix))
    print(f"{'total analysis':38s} {total * 1000:8.1f} ms  ({total / baseline:6.0f} x baseline)")
    for name, value in results.items():
        print(f"  {name}: {value}")
    print("OK: under the 3 s budget" if total < 3 else "OVER the 3 s budget")


if __name__ == "__main__":
    main()
