"""The parser's counts on its held-out tables (a script, not a test): for each table, how many answers it reads as
the table reads them (score or choice, and status) and how many it reads as a silent wrong score (ok, with a value
the table does not read). docs/judges.md, "The tables", records the figures.

Run:  .venv/bin/python tests/bench/heldout_counts.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llmjudge.parsing.pairwise import parse_pairwise  # noqa: E402
from llmjudge.parsing.scores import parse_score  # noqa: E402

TABLES = Path(__file__).resolve().parents[1] / "llmjudge" / "parsing"


def counts(name: str) -> tuple[int, int, int]:
    """(answers, read as the table reads, silent wrong) for one table."""
    rows = [json.loads(line) for line in (TABLES / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    same = silent = 0
    for row in rows:
        if "options" not in row:  # the blind review table keeps its options at the top level
            row = {**row, "options": {"scale_min": row["scale_min"], "scale_max": row["scale_max"],
                                      "aspect": row["aspect"]} if row["kind"] == "score"
                   else {key: row[key] for key in ("assistant_names",) if key in row},
                   "choice": row.get("score")}
        if row["kind"] == "score":
            parsed = parse_score(row["text"], **row["options"])
            got, want = parsed.score, row["score"]
        else:
            choice = parse_pairwise(row["text"], **row["options"])
            got, want, parsed = choice.choice, row["choice"], choice
        if (got, parsed.status) == (want, row["status"]):
            same += 1
        elif parsed.status == "ok":
            silent += 1
    return len(rows), same, silent


if __name__ == "__main__":
    for table in ("judge_answers_heldout", "judge_answers_final", "judge_answers_blind_review", "judge_answers_blind2",
                  "judge_answers_blind3", "judge_answers_blind4", "judge_answers_2026"):
        n, same, silent = counts(table)
        print(f"{table}: {n} answers, {same} read as the table reads, {silent} silent wrong")
