"""Print the alt-test's winning rate and advantage probability for every LLM of the nine AltTest datasets.

Run: .venv/bin/python tests/bench/alt_test_table.py [DATA_DIR]
DATA_DIR defaults to ../shared/data/AltTest/data (the authors' files, never copied into the repository).
The framework-free path: tests.support.alt_test_data reads the files, evalhub.stats.alt_test runs the test with
the authors' settings (scoring and epsilon per dataset, q = 0.05). Prints a markdown table.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from evalhub.stats.alt_test import alt_test  # noqa: E402
from tests.support.alt_test_data import AUTHORS_SETTINGS, read_alt_test_dataset  # noqa: E402


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "data" / "AltTest" / "data"
    print("| dataset | scoring | ε | humans tested | instances | LLM | ω (winning rate) | ρ (advantage) | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for name, (scoring, epsilon) in AUTHORS_SETTINGS.items():
        dataset = read_alt_test_dataset(root / name)
        for llm_name, labels in dataset.llms.items():
            r = alt_test(dataset.humans, labels, scoring=scoring, epsilon=epsilon)
            omega = "–" if r.winning_rate is None else f"{r.winning_rate:.2f}"
            rho = "–" if r.advantage_probability is None else f"{r.advantage_probability:.2f}"
            verdict = {True: "passes", False: "fails", None: "no verdict"}[r.passed]
            print(
                f"| {name} | {scoring} | {epsilon} | {len(r.humans)} | {r.n_instances} | {llm_name} "
                f"| {omega} | {rho} | {verdict} |"
            )
            for note in r.notes:
                print(f"|  |  |  |  |  | {llm_name} | note: {note} |  |  |")
    print(f"\n{time.perf_counter() - started:.2f} s for reading and testing all nine datasets", file=sys.stderr)


if __name__ == "__main__":
    main()
