"""Time the alt-test power plan for a study of 100 raters (a script, not a test; issue 19 asks under 5 s).

Run: .venv/bin/python tests/bench/bench_alt_test_power.py
The plan at the default replicates (200): the power at the stated design plus the grid searches for the
items per rater and the raters needed for 80 % power, for accuracy (3 categories) and neg_rmse (a 5-point
scale), at designs where the search runs through most of its grid (the slowest case). Prints wall-clock seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evalhub.stats.alt_test_power import Design, RatingModel, plan  # noqa: E402

BUDGET_SECONDS = 5.0


def main() -> None:
    cases = [
        ("accuracy, 3 categories", Design(100, 30, 3), RatingModel("accuracy", 3, 0.8, 0.75)),
        ("neg_rmse, 5 points", Design(100, 30, 3), RatingModel("neg_rmse", 5, 1.0, 1.1)),
        ("accuracy, 100 raters x 300 items", Design(100, 300, 5), RatingModel("accuracy", 3, 0.8, 0.8)),
    ]
    worst = 0.0
    for name, design, model in cases:
        started = time.perf_counter()
        result = plan(design, model)
        seconds = time.perf_counter() - started
        worst = max(worst, seconds)
        print(f"{name}: {seconds:.2f} s, {len(result.searched)} design points x {result.stated.replicates} "
              f"replicates; power {result.stated.power:.2f}")
    print(f"slowest plan {worst:.2f} s (budget {BUDGET_SECONDS:.0f} s): {'ok' if worst < BUDGET_SECONDS else 'OVER'}")


if __name__ == "__main__":
    main()
