"""CSV exports: every rating in long form, and the analysis tables. Column names are documented in docs/analysis.md.

Both are generators of CSV lines so a view can stream them (StreamingHttpResponse) and the command can
write them to a file: a million-rating export never holds more than one database chunk in memory.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Sequence

from annotations.models import HumanRating, ProlificSubmission, Rater, Study, rater_label
from evalhub.analysis import ALL_GROUPS, HUMAN, pool_names
from evalhub.analysis.result import (
    AltTestRow,
    AnalysisResult,
    CeilingRater,
    CeilingRow,
    CellRow,
    ConfusionRow,
    Interval,
    KappaRow,
    KendallRow,
    MajorityRow,
    Notes,
    PairwiseKendallRow,
    PositionRow,
    RaterMeanRow,
    WelchRow,
    to_json,
)
from evalhub.analysis.trust_notes import (
    POOLED_ROW,
    ceiling_rater_cut,
    ceiling_rater_notes,
    ceiling_rater_withheld,
    pooled_groups_caveat,
    withheld_text,
    withheld_values,
)
from llmjudge.models import LLMRating
from llmjudge.selectors import server_words_hidden

# ``read_by_person`` last, so the columns before it keep their places: who read an LLM answer the parser could not
# read and when ("alice 2026-11-25T19:30:00+00:00"); empty for every other rating.
RATING_COLUMNS = ("study", "item", "group", "question", "pool", "rater", "score", "status", "rationale", "created",
                  "read_by_person")
CHUNK = 5000

# Column lists per analysis table; the combined export has `table` first and the union of these. `pool` is
# the pool's key (unique: "judge#run" when a judge ran twice), `pool_label` what it compares ("gpt-4 · T=0.7"),
# last so that the columns before it keep their places.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "cells": ("question", "group", "pool", "n_items", "n_ratings", "n_raters", "mean", "std", "alpha_nominal",
              "alpha_ordinal", "alpha_interval", "alpha_ratio", "alpha_ci95_low", "alpha_ci95_high",
              "full_agreement_pct", "icc1", "icc1k", "notes", "pool_label", "icc_n_items", "alpha_ci_n_boot",
              "alpha_ci_n_valid", "withheld"),
    "kendall": ("question", "group", "pool", "tau", "p", "p_method", "n", "band", "notes", "pool_label", "withheld"),
    "welch": ("question", "pool", "group_a", "group_b", "mean_a", "mean_b", "t", "df", "p", "mean_diff", "cohens_d",
              "n_a", "n_b", "unit", "notes", "p_adjusted", "pool_label", "p_family", "withheld"),
    "pairwise_kendall": ("question", "group", "pool", "mean_tau", "n_pairs", "n_items", "notes", "pool_label",
                         "withheld"),
    "rater_means": ("question", "group", "pool", "rater", "mean", "n", "pool_label"),
    # Pairwise studies only: each judge pool's majority choice against the human majority choice.
    "majority": ("question", "group", "pool", "agreement_pct", "n_items", "n_agree", "human_no_majority",
                 "pool_no_majority", "notes", "pool_label"),
    # Issue 19: kappa rows as in the JSON; the confusion matrix one row per (human label, pool label) cell;
    # the ceiling one row per rater.
    "kappa": ("question", "group", "pool", "against", "rater", "weights", "kappa", "ci95_low", "ci95_high",
              "n_items", "n_tied", "n_unpaired", "p", "p_adjusted", "notes", "pool_label", "withheld"),
    "confusion": ("question", "group", "pool", "human_category", "pool_category", "human_value", "pool_value",
                  "count", "n_items", "n_tied", "n_unpaired", "pool_label"),
    "ceiling": ("question", "group", "pool", "scoring", "rater", "n_items", "rater_score", "rater_ci95_low",
                "rater_ci95_high", "judge_score", "judge_ci95_low", "judge_ci95_high", "judge_better", "summary",
                "notes", "pool_label", "ci95_cut", "withheld"),
    # The alternative annotator test: one line per (row, human tested); a row with no human tested has one
    # line with the human columns empty. The row's own columns repeat on each of its lines.
    "alt_test": ("question", "group", "pool", "scoring", "epsilon", "q_fdr", "n_instances", "winning_rate",
                 "advantage_probability", "passed", "rater", "rater_n", "rater_p", "rater_rejected",
                 "rater_advantage", "notes", "pool_label"),
    # Position bias of pairwise judges run with a swap share (evalhub/analysis/position_rows.py).
    "position_bias": ("question", "pool", "n_pairs", "n_flips", "flip_rate", "flip_ci95_low", "flip_ci95_high",
                      "n_decisive", "n_first", "first_position_share", "first_position_ci95_low",
                      "first_position_ci95_high", "prefers_first", "prefers_second", "notes", "pool_label"),
}
# ``pooled`` last in every table that can hold an all-groups row (twelfth review, M: a script reading the "(all)"
# export got α 0.74 with no word that it pools the groups): trust_notes.POOLED_ROW there, else empty.
POOLED_TABLES = ("cells", "kendall", "pairwise_kendall", "majority", "kappa", "confusion", "ceiling", "alt_test")
TABLE_COLUMNS = {name: (*columns, "pooled") if name in POOLED_TABLES else columns
                 for name, columns in TABLE_COLUMNS.items()}
# ``withheld`` (the columns a page withholds, and why: those are left empty) and ``pooled`` last, so the others keep
# their places.
ALL_TABLE_COLUMNS: tuple[str, ...] = ("table", *dict.fromkeys(c for cols in TABLE_COLUMNS.values() for c in cols
                                                              if c not in ("withheld", "pooled")),
                                      "withheld", "pooled")

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: object) -> object:
    """Defuse spreadsheet formula injection (OWASP): text starting with = + - @ tab or CR gets a leading quote.

    Only text is touched: numbers we write ourselves (a negative alpha) must stay numbers.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


class _Line:
    """A write-only file for csv.writer that hands back what was written (Django's streaming CSV pattern)."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[Iterable[object]]) -> Iterator[str]:
    writer = csv.writer(_Line())
    for row in rows:
        yield writer.writerow([neutralise(v) for v in row])


def rating_rows(studies: Iterable[Study]) -> Iterator[tuple[object, ...]]:
    """Header, then one row per rating of each study: human ratings first, then each judge run's."""
    yield RATING_COLUMNS
    for study in studies:
        yield from _human_rating_rows(study)
        yield from _llm_rating_rows(study)


DEMOGRAPHIC_COLUMNS = ("study", "rater", "source", "external_id", "external_study_id", "external_session_id",
                       "prolific_submission_id", "prolific_status", "consented_at", "created")


def demographic_rows(study: Study) -> Iterator[tuple[object, ...]]:
    """Header, then one row per rater of the study (imported ones too): the external ids a panel gave them
    (Prolific's PROLIFIC_PID, STUDY_ID, SESSION_ID), their Prolific submission's status when there is one,
    then one column per demographics answer (the union of the raters' keys, sorted). Never the rater's link token."""
    keys = sorted({key for answers in study.raters.values_list("demographics", flat=True) if isinstance(answers, dict)
                   for key in answers})
    yield (*DEMOGRAPHIC_COLUMNS, *keys)
    submissions = {rater_id: (sid, status) for rater_id, sid, status in ProlificSubmission.objects.filter(
        link__study=study, rater__isnull=False).order_by("id").values_list("rater_id", "submission_id", "status")}
    raters = Rater.objects.filter(study=study).order_by("id").values_list(
        "id", "source", "external_id", "external_study_id", "external_session_id", "consented_at", "created_at",
        "demographics")
    for rater_id, source, external, platform_study, session, consented, created, answers in raters.iterator(CHUNK):
        sid, status = submissions.get(rater_id, ("", ""))
        answers = answers if isinstance(answers, dict) else {}
        yield (study.slug, external or f"rater-{rater_id}", source, external, platform_study, session, sid, status,
               consented.isoformat() if consented else "", created.isoformat(), *(answers.get(k, "") for k in keys))


def _human_rating_rows(study: Study) -> Iterator[tuple[object, ...]]:
    human = (
        HumanRating.objects.filter(item__study=study)
        .order_by("id")
        .values_list("item__external_id", "item__group", "question__key", "rater__external_id", "rater__number",
                     "rater_id", "score", "comment", "created_at")
    )
    for item, group, question, rater, number, rater_id, score, comment, created in human.iterator(chunk_size=CHUNK):
        yield (study.slug, item, group, question, HUMAN, rater_label(external_id=rater, number=number, pk=rater_id),
               score, "ok", comment, created.isoformat(), "")


def _llm_rating_rows(study: Study) -> Iterator[tuple[object, ...]]:
    names = pool_names(study)
    llm = (
        LLMRating.objects.filter(run__study=study)
        .order_by("id")
        .values_list("item__external_id", "item__group", "question__key", "run_id", "sample", "score", "status",
                     "rationale", "created_at", "read_at", "read_by__username")
    )
    for item, group, question, run_id, sample, score, status, rationale, created, read_at, reader in llm.iterator(
            chunk_size=CHUNK):
        # An error's rationale may quote the judge's server (its error body): for the judge's owner, on the
        # run page, never in a file that travels (issue 23, finding 9).
        note = server_words_hidden(rationale) if status == "error" else rationale
        yield (study.slug, item, group, question, names[run_id], f"sample-{sample}",
               "" if score is None else score, status, note, created.isoformat(),
               f"{reader or '(deleted account)'} {read_at.isoformat()}" if read_at else "")


Row = (CellRow | KendallRow | WelchRow | PairwiseKendallRow | RaterMeanRow | MajorityRow | KappaRow | ConfusionRow
       | CeilingRow | AltTestRow | PositionRow)
Record = dict[str, object]  # CSV column -> value (None: an empty cell)

# Each table's rows in the result, by the table's name in TABLE_COLUMNS.
_SECTIONS: dict[str, Callable[[AnalysisResult], Sequence[Row]]] = {
    "cells": lambda r: r.cells,
    "kendall": lambda r: r.kendall,
    "welch": lambda r: r.welch,
    "pairwise_kendall": lambda r: r.pairwise_kendall,
    "rater_means": lambda r: r.rater_means,
    "majority": lambda r: r.majority,
    "kappa": lambda r: r.kappa,
    "confusion": lambda r: r.confusion,
    "ceiling": lambda r: r.ceiling,
    "alt_test": lambda r: r.alt_test,
    "position_bias": lambda r: r.position_bias,
}


def _json_keys(row: Row | CeilingRater) -> Record:
    """A row as its JSON object: the CSV columns that repeat a JSON key (docs/analysis.md)."""
    record = to_json(row)
    assert isinstance(record, dict)
    return dict(record)


# A CSV ``notes`` cell joins its notes with " | ", as ``withheld`` joins its parts: a reason may itself hold "; "
# ("too few items (n = 3 and 3); no variation within ..."; review 15).
NOTES_JOIN = " | "


def _notes_text(notes: Notes | Sequence[str]) -> str:
    if isinstance(notes, dict):
        return NOTES_JOIN.join(f"{k}: {v}" for k, v in notes.items())
    return NOTES_JOIN.join(notes)


def _low_high(interval: Interval | None) -> tuple[float | None, float | None]:
    return interval or (None, None)


def _records(row: Row) -> Iterator[Record]:
    """The CSV rows of one result row: one, except a confusion matrix (one per cell), a ceiling (one per rater)
    and an alt-test row (one per human tested)."""
    flat = _json_keys(row)
    if isinstance(row, ConfusionRow):
        # Each category as the page labels it and as the number stored (a script compares numbers with scores;
        # seventh review, C4: "1 (lowest)" only).
        for labels, value, counts in zip(row.labels, row.categories, row.counts, strict=True):
            for label, pool_value, count in zip(row.labels, row.categories, counts, strict=True):
                yield {**flat, "human_category": labels, "pool_category": label, "human_value": _score(value),
                       "pool_value": _score(pool_value), "count": count}
        return
    if isinstance(row, CeilingRow):
        for rater in row.raters:
            notes = [*ceiling_rater_notes(row, rater), *([rater.reason] if rater.reason else [])]
            record = {**flat, **_json_keys(rater), "notes": NOTES_JOIN.join(notes)}
            record["rater_ci95_low"], record["rater_ci95_high"] = _low_high(rater.rater_ci95)
            record["judge_ci95_low"], record["judge_ci95_high"] = _low_high(rater.judge_ci95)
            record["ci95_cut"] = ceiling_rater_cut(row, rater)
            yield _without(record, ceiling_rater_withheld(row, rater))
        return
    if isinstance(row, AltTestRow):
        flat["notes"] = _notes_text(row.test.notes)
    elif not isinstance(row, RaterMeanRow):
        flat["notes"] = _notes_text(row.notes)
    if isinstance(row, CellRow):
        flat.update({f"alpha_{level}": value for level, value in row.alpha.items()})
        flat["alpha_ci95_low"], flat["alpha_ci95_high"] = _low_high(row.alpha_ci95)
    elif isinstance(row, KappaRow):
        flat["ci95_low"], flat["ci95_high"] = _low_high(row.ci95)
        if row.against != "majority":  # ties concern the human majority: none here, not "0" (twelfth review, U)
            flat["n_tied"] = None
    elif isinstance(row, AltTestRow) and row.test.humans:
        for human in row.test.humans:
            yield {**flat, "rater": human.rater, "rater_n": human.n, "rater_p": human.p,
                   "rater_rejected": human.rejected, "rater_advantage": human.advantage}
        return
    yield _without(flat, withheld_values(row))


def _without(record: Record, withheld: dict[str, str]) -> Record:
    """The record with the values the page withholds left empty, and why in its ``withheld`` column (fourth
    review, M2); the JSON keeps them. A column already empty (an undefined value) is not named."""
    emptied = {column: reason for column, reason in withheld.items() if record.get(column) is not None}
    return {**record, **dict.fromkeys(emptied), "withheld": withheld_text(emptied)}


# Why a table of an all-groups-only view has no rows: said beside the empty file (the command's standard error), as
# the page says it in place of the table (thirteenth review, U: a header-only welch.csv with no reason).
POOLED_EMPTY = {
    "welch": "this view pools the groups, and Welch's t-test compares one group with another: export with a "
             "group (each contrast with it) or without --group (every contrast)",
    "rater_means": "per-rater means are given per group (table 12), not for all groups pooled: export without "
                   "--group, or with a group",
}


def empty_tables_note(result: AnalysisResult, table: str | None) -> str:
    """Why ``table`` (None: every table) has no rows in this result, for the tables that are empty by design in a view
    of all groups pooled alone, or "" when there is nothing to say."""
    if not pooled_groups_caveat(result) or any(c.group != ALL_GROUPS for c in result.cells):
        return ""
    return "; ".join(f"{name} has no rows: {why}" for name, why in POOLED_EMPTY.items() if table in (None, name))


def table_rows(result: AnalysisResult, table: str | None = None) -> Iterator[tuple[object, ...]]:
    """Header, then the rows of one analysis table, or of all (with a leading `table` column). None -> empty cell."""
    if table is not None and table not in TABLE_COLUMNS:
        raise ValueError(f"unknown table {table!r}; choose from {', '.join(TABLE_COLUMNS)}")
    columns = TABLE_COLUMNS[table] if table else ALL_TABLE_COLUMNS
    labels = result.pool_labels()
    pooled = POOLED_ROW if pooled_groups_caveat(result) else None
    yield columns
    for name in [table] if table else list(TABLE_COLUMNS):
        for row in _SECTIONS[name](result):
            for part in _records(row):
                flat = {"table": name, **part, "pool_label": labels.get(row.pool, row.pool),
                        "pooled": pooled if getattr(row, "group", None) == ALL_GROUPS else None}
                yield tuple("" if flat.get(c) is None else flat[c] for c in columns)


def _score(value: float) -> float | int:
    """A category as the ratings CSV writes a score: 3, not 3.0 (a scale's points are whole numbers)."""
    return int(value) if float(value).is_integer() else value
