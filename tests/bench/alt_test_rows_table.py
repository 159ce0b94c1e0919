"""Read `analyze --format json` on stdin; print the alt-test verdict of every LLM pool as markdown rows.

Used by tests/bench/alt_test_studies.sh: the rows of group `imported` and, when the study has several
questions, of question `(all)` (every (item, question) pair its own instance, as the authors pool them).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    name, result = sys.argv[1], json.load(sys.stdin)
    labels = {p["name"]: p.get("label", p["name"]) for p in result["pools"]}
    multi = len({r["question"] for r in result["alt_test"]}) > 1
    for r in result["alt_test"]:
        if r["group"] != "imported" or (multi and r["question"] != "(all)"):
            continue
        verdict = "no verdict" if r["passed"] is None else ("passes" if r["passed"] else "cannot yet")
        tested = len(r["humans"])
        beat = sum(h["rejected"] for h in r["humans"])
        omega = "–" if r["winning_rate"] is None else f"{r['winning_rate']:.2f} ({beat}/{tested})"
        rho = "–" if r["advantage_probability"] is None else f"{r['advantage_probability']:.3f}"
        print(f"| {name} | {r['scoring']} | {r['epsilon']} | {labels[r['pool']]} | {r['n_instances']} | "
              f"{tested} | {omega} | {rho} | {verdict} |")


if __name__ == "__main__":
    main()
