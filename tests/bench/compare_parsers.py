"""Our parser and prometheus-eval's on the same table of judge answers (a script, not a test).

Run:
    python3 -m venv /tmp/pe && /tmp/pe/bin/pip install --no-deps prometheus-eval==0.1.20
    .venv/bin/python tests/bench/compare_parsers.py [--pe-parser PATH/TO/prometheus_eval/parser.py]

The table is ``tests/llmjudge/parsing/parsing_answers.jsonl``. Only prometheus-eval's ``parser.py`` is
loaded (it needs nothing but ``re``); importing the package would pull in vLLM and litellm.

What counts as "read as the table expects":
- ours: the score (or choice) and the status both equal the table's;
- prometheus-eval: it has no refused status and returns None for anything it cannot read, so its
  None counts as agreeing with both ``unparseable`` and ``refused`` (lenient to it); otherwise its
  score or choice must equal the table's. It grades 1-5 absolute and A/B relative only, and is
  asked in the mode of the row.

Two counts are printed: over the answers in Prometheus's own output format (families
``prometheus`` and ``prometheus-relative``: ``Feedback: ... [RESULT] n`` / ``A``), and over the
whole table.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from llmjudge.parsing import parse_pairwise, parse_score  # noqa: E402

TABLE = ROOT / "tests" / "llmjudge" / "parsing_answers.jsonl"
PROMETHEUS_FAMILIES = {"prometheus", "prometheus-relative"}


def load_pe_parser(path: str | None) -> ModuleType:
    if path is None:
        found = sorted(glob.glob("/tmp/pe/lib/python3*/site-packages/prometheus_eval/parser.py"))
        if not found:
            sys.exit("prometheus-eval not found under /tmp/pe: install it (see the docstring) or pass --pe-parser")
        path = found[-1]
    spec = importlib.util.spec_from_file_location("pe_parser", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_of(row: dict[str, Any]) -> Any:
    return row["score"] if row["kind"] == "score" else row["choice"]


def ours_agrees(row: dict[str, Any]) -> bool:
    if row["kind"] == "score":
        result = parse_score(row["text"], **row["options"])
        return (result.score, result.status) == (expected_of(row), row["status"])
    choice = parse_pairwise(row["text"])
    return (choice.choice, choice.status) == (expected_of(row), row["status"])


def pe_agrees(row: dict[str, Any], parse_output: Callable[[str, str], tuple[Any, Any]]) -> bool:
    _, answer = parse_output(row["text"], "absolute" if row["kind"] == "score" else "relative")
    if answer is None:
        return row["status"] != "ok"
    return row["status"] == "ok" and answer == expected_of(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pe-parser", help="path to prometheus_eval/parser.py")
    args = parser.parse_args()
    pe = load_pe_parser(args.pe_parser)
    rows = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    subsets = {
        "Prometheus format ([RESULT])": [r for r in rows if r["family"] in PROMETHEUS_FAMILIES],
        "whole table": rows,
    }
    for name, subset in subsets.items():
        ours = sum(ours_agrees(r) for r in subset)
        theirs = sum(pe_agrees(r, pe.parse_output) for r in subset)
        print(f"{name}: {len(subset)} answers; llmjudge.parsing {ours}, prometheus-eval {theirs}")


if __name__ == "__main__":
    main()
