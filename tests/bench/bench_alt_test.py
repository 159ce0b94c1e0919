"""Time the framework-free alt-test on the shape of bench_analyze.py's study (a script, not a test).

Run: .venv/bin/python tests/bench/bench_alt_test.py
50,000 items x 4 questions, 3 human raters on everything (600,000 ratings) and an LLM with 2 samples
(400,000): one row per question plus the pooled "(all)" row, as `analyze` will ask for them, with
integer ids (what a selector gets from the database). Prints the best of 3 wall-clock times.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evalhub.stats.alt_test import alt_test_long  # noqa: E402

N_ITEMS, QUESTIONS, HUMANS, SAMPLES = 50_000, 4, 3, 2


def main() -> None:
    rng = np.random.default_rng(0)
    n_inst = N_ITEMS * QUESTIONS  # instance = item * QUESTIONS + question
    truth = rng.integers(1, 6, n_inst)
    inst = np.repeat(np.arange(n_inst), HUMANS)
    raters = np.tile(np.arange(HUMANS) + 101, n_inst)
    labels = np.clip(truth[inst] + rng.integers(-1, 2, inst.size), 1, 5).astype(float)
    llm_inst = np.repeat(np.arange(n_inst), SAMPLES)
    llm_labels = np.clip(truth[llm_inst] + rng.integers(-1, 2, llm_inst.size), 1, 5).astype(float)
    print(f"{inst.size:,} human + {llm_inst.size:,} LLM ratings, {QUESTIONS} questions + the pooled row")

    for scoring in ("neg_rmse", "accuracy"):

        def rows(scoring: str = scoring) -> None:
            for q in range(QUESTIONS):
                h, m = inst % QUESTIONS == q, llm_inst % QUESTIONS == q
                alt_test_long(raters=raters[h], instances=inst[h], labels=labels[h], llm_instances=llm_inst[m],
                              llm_labels=llm_labels[m], scoring=scoring)  # fmt: skip
            alt_test_long(raters=raters, instances=inst, labels=labels, llm_instances=llm_inst,
                          llm_labels=llm_labels, scoring=scoring)  # fmt: skip

        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            rows()
            best = min(best, time.perf_counter() - started)
        print(f"{scoring}: {best:.2f} s for {QUESTIONS + 1} rows")


if __name__ == "__main__":
    main()
