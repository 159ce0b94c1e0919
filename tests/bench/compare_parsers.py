"""Our parser and prometheus-eval's on the same tables of judge answers (a script, not a test).

Run:
    python3 -m venv var/pe && var/pe/bin/pip install --no-deps prometheus-eval==0.1.20
    .venv/bin/python tests/bench/compare_parsers.py [--pe-parser PATH/TO/prometheus_eval/parser.py] [--markdown]

The tables are in ``tests/llmjudge/parsing/``: ``parsing_answers.jsonl`` (issue 15, by ``family``),
``judge_answers_2026.jsonl`` (issue 24, by ``style``) and ``prometheus_eval_cases.jsonl`` (prometheus-eval's own
parser cases). Only prometheus-eval's ``parser.py`` is loaded (it needs nothing but ``re``); importing the
package would pull in vLLM and litellm.

What counts as "read as the table expects":
- ours: the score (or choice) and the status both equal the table's (column "ours"); "all fields" also
  asks the reason, the reasoning trace and the rationale (the 2026 tables give them);
- prometheus-eval: it has no refused status and returns None for anything it cannot read, so its None
  counts as agreeing with both ``unparseable`` and ``refused`` (lenient to it); otherwise its score or
  choice must equal the table's. It grades 1-5 absolute and A/B relative only, and is asked in the mode
  of the row, on the whole text (it has no reasoning split).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from llmjudge.parsing import parse_pairwise, parse_score  # noqa: E402

TABLES = ROOT / "tests" / "llmjudge" / "parsing"
TABLE_FILES = ("parsing_answers.jsonl", "judge_answers_2026.jsonl", "prometheus_eval_cases.jsonl")
PE_GLOBS = (
    "var/pe/lib/python3*/site-packages/prometheus_eval/parser.py",
    "/tmp/pe/lib/python3*/site-packages/prometheus_eval/parser.py",
)


def load_pe_parser(path: str | None) -> ModuleType:
    if path is None:
        found = sorted(
            p for pattern in PE_GLOBS for p in glob.glob(str(ROOT / pattern) if pattern[0] != "/" else pattern)
        )
        if not found:
            sys.exit(
                "prometheus-eval not found under var/pe or /tmp/pe: install it (see the docstring) or pass --pe-parser"
            )
        path = found[-1]
    spec = importlib.util.spec_from_file_location("pe_parser", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_of(row: dict[str, Any]) -> Any:
    return row["score"] if row["kind"] == "score" else row["choice"]


def ours(row: dict[str, Any]) -> tuple[bool, bool]:
    """(score or choice and status as the table's, every field as the table's)."""
    if row["kind"] == "score":
        result: Any = parse_score(row["text"], **row["options"])
        got = result.score
    else:
        result = parse_pairwise(row["text"], **row["options"])
        got = result.choice
    verdict = (got, result.status) == (expected_of(row), row["status"])
    rationale = row.get("rationale", row["text"].strip())
    fields = (result.reason, result.reasoning, result.rationale) == (
        row.get("reason", ""),
        row.get("reasoning", ""),
        rationale,
    )
    return verdict, verdict and fields


def pe_agrees(row: dict[str, Any], parse_output: Callable[[str, str], tuple[Any, Any]]) -> bool:
    _, answer = parse_output(row["text"], "absolute" if row["kind"] == "score" else "relative")
    if answer is None:
        return row["status"] != "ok"
    return row["status"] == "ok" and answer == expected_of(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pe-parser", help="path to prometheus_eval/parser.py")
    parser.add_argument("--markdown", action="store_true", help="print the per-style counts as a markdown table")
    args = parser.parse_args()
    pe = load_pe_parser(args.pe_parser)
    for name in TABLE_FILES:
        rows = [json.loads(line) for line in (TABLES / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        totals: Counter[str] = Counter()
        counts: dict[str, Counter[str]] = {}
        for row in rows:
            style = row.get("style") or row.get("family") or "?"
            verdict, fields = ours(row)
            tally = counts.setdefault(style, Counter())
            for key, hit in (("n", True), ("ours", verdict), ("all", fields), ("pe", pe_agrees(row, pe.parse_output))):
                tally[key] += hit
                totals[key] += hit
        print(
            f"\n{name}: {totals['n']} answers; llmjudge.parsing {totals['ours']} (all fields {totals['all']}), "
            f"prometheus-eval {totals['pe']}"
        )
        if args.markdown:
            print("| style | answers | EvalHub | EvalHub, all fields | prometheus-eval |\n|---|---|---|---|---|")
        for style, tally in counts.items():
            if args.markdown:
                print(f"| {style} | {tally['n']} | {tally['ours']} | {tally['all']} | {tally['pe']} |")
            else:
                print(
                    f"  {style:28} {tally['n']:4d}  ours {tally['ours']:4d}  all fields {tally['all']:4d}  pe {tally['pe']:4d}"
                )


if __name__ == "__main__":
    main()
