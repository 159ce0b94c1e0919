"""Notes in the exports and on the page: a CSV ``notes`` cell splits as docs/analysis.md says, on " | " into notes and
a keyed note on its first ": " (review 15: a reason holding "; " made "key: reason; key: reason" ambiguous); the JSON
and the CSV name the same withheld fields; the Notes follow the study's question order."""
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


@pytest.mark.parametrize("groups", [None, ("(all)",)])
def test_the_json_and_the_csv_name_the_same_withheld_fields(demo_story, groups):
    # Review 20, M: the JSON named "p" and "p_adjusted" withheld on majority and Fleiss kappa rows, which have none.
    from evalhub.analysis.result_json import ROW_TABLES, analysis_json, json_field

    result = study_analysis(study=demo_story, options=AnalysisOptions(n_boot=50, groups=groups))
    data = analysis_json(result)
    compared = 0
    for table in ROW_TABLES:
        header, *rows = list(table_rows(result, table))
        for line, json_row in zip((dict(zip(header, r, strict=True)) for r in rows), data[table], strict=True):
            named = {json_field(column.strip()) for part in str(line["withheld"] or "").split(" | ") if part
                     for column in part.split(": ", 1)[0].split(",")}
            assert named == set(json_row.get("withheld", {})), (table, line["withheld"], json_row.get("withheld"))
            compared += bool(named)
    assert compared  # the demo withholds values in both views


def test_the_notes_follow_the_studys_question_order(demo_story):
    # Review 19: the Notes (page and text report, trust_notes.note_lines) were alphabetical, "cohesiveness" first.
    from evalhub.analysis.trust_notes import note_lines

    result = study_analysis(study=demo_story, options=AnalysisOptions(n_boot=50))
    firsts = [line.split(" / ", 1)[0] for line in note_lines(result)]
    seen = list(dict.fromkeys(firsts))
    assert seen == [q for q in result.study.questions if q in seen] and len(seen) > 1
