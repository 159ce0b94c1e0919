"""A CSV ``notes`` cell splits as docs/analysis.md says: on " | " into notes, a keyed note on its first ": " (review
15: a reason holding "; " made "key: reason; key: reason" ambiguous)."""
from __future__ import annotations

import pytest

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.imports.exports import TABLE_COLUMNS, table_rows

KEYED = ("cells", "kendall", "welch", "pairwise_kendall", "majority", "kappa")


@pytest.fixture
def demo_story(db):
    from evalhub.demo.loader import demo_judge_load, demo_load
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_start

    study = next(s for s in demo_load() if s.slug == "demo-story")
    judge_run_execute_inline(run=judge_run_start(study=study, judge=demo_judge_load(owner=study.owner),
                                                 enqueue=False))
    return study


def test_every_keyed_notes_cell_splits_back_into_the_jsons_notes(demo_story):
    result = study_analysis(study=demo_story, options=AnalysisOptions(n_boot=50))
    with_semicolon = 0
    for table in KEYED:
        header, *rows = list(table_rows(result, table))
        json_rows = [row for row in getattr(result, table)]
        for line, json_row in zip((dict(zip(header, r, strict=True)) for r in rows), json_rows, strict=True):
            text = str(line["notes"] or "")
            parts = dict(part.split(": ", 1) for part in text.split(" | ")) if text else {}
            assert parts == dict(json_row.notes), (table, text)
            with_semicolon += any("; " in reason for reason in parts.values())
    assert with_semicolon  # the demo has reasons holding "; ": the case the old separator broke


def test_unkeyed_notes_are_the_rows_sentences(demo_story):
    result = study_analysis(study=demo_story, options=AnalysisOptions(n_boot=50))
    header, *rows = list(table_rows(result, "ceiling"))
    assert header == TABLE_COLUMNS["ceiling"]
    lines = [dict(zip(header, r, strict=True)) for r in rows]
    blocks = {(row.question, row.group, row.pool): row for row in result.ceiling}
    for line in lines:
        sentences = str(line["notes"] or "").split(" | ")
        assert set(sentences) <= set(blocks[(line["question"], line["group"], line["pool"])].notes)
