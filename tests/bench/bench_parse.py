"""Time the answer parser on 1 MB adversarial answers (a script, not a test).

Run: .venv/bin/python tests/bench/bench_parse.py
Budget (issue 24): parsing a 1 MB adversarial answer takes < 50 ms. Each answer is parsed as a score and
as a pairwise choice, best of 3; the baselines, measured in the same run on the same text, are one
``text.lower()`` and one plain ``re.search`` for a string that is not there, so the ratio to them makes figures
comparable across machines. The answers are built to hit what costs the parser most: long runs of one
character, of one verdict form, of braces, of number words, a megabyte of reasoning trace.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from llmjudge.parsing import parse_pairwise, parse_score  # noqa: E402

SIZE = 1_000_000
BUDGET_MS = 50.0


def _fill(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * ((SIZE - len(head) - len(tail)) // len(unit)) + tail


ANSWERS: dict[str, str] = {
    "spaces after a label": _fill(" ", "Score:", "x"),
    "prose without a verdict": _fill("lorem ipsum dolor sit amet, "),
    "rating verbs, no number": _fill("I'd give it a "),
    "digits": _fill("3 4 "),
    "open braces": _fill("{"),
    "unclosed JSON keys": _fill('{"score": '),
    "labels and alternatives": _fill("Score: 3 or "),
    "[RESULT] markers": _fill("[RESULT] "),
    "pairwise verdicts": _fill("Response A is better. Response B is better. "),
    "number words": _fill("four out of five "),
    "ranges": _fill("3-"),
    "star glyphs": _fill("★☆"),
    "Chinese labels": _fill("评分："),
    "refusals": _fill("I'm sorry, but I can't rate this. "),
    "reasoning trace": _fill("maybe a 3, ", "<think>", "</think>\nScore: 4"),
    "line breaks": _fill("\n"),
}


def best_ms(function: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    parse_score("Score: 4")  # the first call compiles the patterns cached per scale
    parse_pairwise("A")
    print(f"{'answer (1 MB)':28} {'lower()':>8} {'search':>8} {'score':>8} {'pairwise':>9} {'x lower':>8}")
    worst = 0.0
    for name, text in ANSWERS.items():
        lower = best_ms(text.lower)
        search = best_ms(lambda text=text: re.search("not in the text", text))
        score = best_ms(lambda text=text: parse_score(text))
        pairwise = best_ms(lambda text=text: parse_pairwise(text))
        worst = max(worst, score, pairwise)
        ratio = max(score, pairwise) / lower if lower else float("inf")
        print(f"{name:28} {lower:8.2f} {search:8.2f} {score:8.2f} {pairwise:9.2f} {ratio:8.1f}")
    verdict = "within" if worst < BUDGET_MS else "over"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"slowest parse: {worst:.1f} ms ({verdict} the {BUDGET_MS:.0f} ms budget); load average {load}")


if __name__ == "__main__":
    main()
