"""The ratings import: one long-format file may hold human raters and LLM pools, so it writes both.

It lives in evalhub, the layer that sees both apps: the human rows go through
``annotations.importing.services.human_ratings_batch_write``, each LLM pool into its imported run
(``llmjudge.runs.imported``), batch by batch in one transaction. File reading and the row checks
are annotations' (the same as the items import), so the messages are the same for every import.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.db import transaction

from annotations.importing.duplicates import KeySink
from annotations.importing.file_rows import Progress
from annotations.importing.services import (
    HUMAN_POOL,
    RATING_COLUMNS,
    ImportFileError,
    ImportProgress,
    ImportResult,
    batches,
    check_columns,
    check_group,
    check_length,
    checked_reading,
    checking,
    human_ratings_batch_write,
    read_rows,
    score_on_scale,
    shown,
)
from annotations.models import Item, Question, Rater, Study
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.runs.imported import imported_run_get_or_create

SAMPLE_MAX = 2**31 - 1  # LLMRating.sample is an integer column on PostgreSQL
Row = tuple[str, str, str, str, str, float, str]  # item, group, question, pool, rater, score, rationale


def _rating_rows(study: Study, path: Path, sink: KeySink | None,
                 progress: Progress | None = None) -> Iterator[tuple[int, Row]]:
    """The file's ratings, each checked (all but the in-file duplicate, which ``sink`` sees).

    What it keeps is bounded by the study's items and the file's new items, never by its rows.
    """
    questions = [q.key for q in study.questions.all()]
    known = dict(study.items.values_list("external_id", "group"))
    new_items: dict[str, str] = {}  # external id -> group
    item_max = Item._meta.get_field("external_id").max_length
    rater_max = Rater._meta.get_field("external_id").max_length
    pool_max = Judge._meta.get_field("name").max_length
    for line, row in read_rows(path, progress):
        check_columns(row, line, list(RATING_COLUMNS), {"rationale", "comment"})
        item_id, group = row["item"].strip(), row["group"].strip()
        question, pool, rater = row["question"].strip(), row["pool"].strip(), row["rater"].strip()
        if not item_id:
            raise ImportFileError("empty item", line)
        check_length(item_id, "item", item_max, line)
        check_group(study, group, line)
        known_group = known[item_id] if item_id in known else new_items.get(item_id)
        if known_group is not None and known_group != group:
            raise ImportFileError(f"item {item_id!r} is in group {known_group!r}, not {group!r}", line)
        if item_id not in known:
            new_items.setdefault(item_id, group)
        if question not in questions:
            raise ImportFileError(f"unknown question {shown(question)}; the study asks {', '.join(questions)}", line)
        if not pool:
            raise ImportFileError("empty pool", line)
        if not rater:
            raise ImportFileError("empty rater", line)
        score = score_on_scale(row["score"].strip(), study, line)
        note = row.get("rationale", "") or row.get("comment", "")
        if pool == HUMAN_POOL:
            check_length(rater, "rater", rater_max, line)
        else:
            check_length(pool, "pool", pool_max, line)
            try:
                sample = int(rater)
            except ValueError:
                raise ImportFileError(f"rater {shown(rater)} of LLM pool {pool!r} must be a sample index (integer)",
                                      line) from None
            if sample < 0:
                raise ImportFileError(f"sample index {sample} must not be negative", line)
            if sample > SAMPLE_MAX:
                raise ImportFileError(f"sample index {sample} is above the largest, {SAMPLE_MAX}", line)
            rater = str(sample)  # "0" and "00" are the same sample
        if sink is not None:
            sink(line, (item_id, question, pool, rater))
        yield line, (item_id, group, question, pool, rater, score, note)


def _duplicate(key: tuple[str, ...]) -> str:
    item_id, question, pool, rater = key
    return f"duplicate rating: item {item_id!r}, question {question!r}, pool {pool!r}, rater {rater!r}"


def ratings_import(*, study: Study, path: Path, progress: ImportProgress | None = None) -> ImportResult:
    """Import ratings in long format (item, group, question, pool, rater, score[, rationale]).

    Pool "human" holds human raters (rater = a persistent rater id); any other pool is an LLM pool
    (rater = the sample index, an integer) stored as an imported judge run named after the pool.
    Unknown items are created with the row's group (and empty fields). The file is read twice
    (annotations.importing.services): checked, then written batch by batch in one transaction.
    """
    if not checked_reading(lambda sink: _rating_rows(study, path, sink, checking(progress)), _duplicate):
        raise ImportFileError("the file has a header but no rows")
    if progress is not None:
        progress("writing", 0)
    with transaction.atomic():
        result = _ratings_write(study=study, path=path)
        if progress is not None:
            progress("written", result.created_ratings)  # inside the transaction, as the other imports
    return result


def _ratings_write(*, study: Study, path: Path) -> ImportResult:
    questions = {q.key: q for q in study.questions.all()}
    item_ids = dict(study.items.values_list("external_id", "pk"))
    raters = {r.external_id: r for r in study.raters.exclude(external_id="")}
    runs: dict[str, JudgeRun] = {}
    position = study.items.count()
    created_items = n_human = n_llm = 0
    for batch in batches(_rating_rows(study, path, None)):
        new: dict[str, str] = {}
        for item_id, group, *_ in batch:
            if item_id not in item_ids:
                new.setdefault(item_id, group)
        created = Item.objects.bulk_create(
            [Item(study=study, external_id=e, group=g, fields={}, position=position + n)
             for n, (e, g) in enumerate(new.items())]
        )
        position += len(created)
        created_items += len(created)
        item_ids.update({i.external_id: i.pk for i in created})
        human = [(i, q, r, s, note) for i, _, q, pool, r, s, note in batch if pool == HUMAN_POOL]
        if human:
            n_human += human_ratings_batch_write(study=study, rows=human, item_ids=item_ids, questions=questions,
                                                 raters=raters)
        pools: dict[str, list[tuple[str, str, int, float, str]]] = {}
        for i, _, q, pool, r, s, note in batch:
            if pool != HUMAN_POOL:
                pools.setdefault(pool, []).append((i, q, int(r), s, note))
        for pool, rows in pools.items():
            if pool not in runs:
                runs[pool] = imported_run_get_or_create(study=study, pool=pool)
            n_llm += _pool_batch_write(run=runs[pool], pool=pool, rows=rows, item_ids=item_ids, questions=questions)
    for run in runs.values():
        total = run.ratings.count()
        JudgeRun.objects.filter(pk=run.pk).update(calls_total=total, calls_done=total)
    return ImportResult(created_items=created_items, created_ratings=n_human + n_llm,
                        pools=tuple(([HUMAN_POOL] if n_human else []) + sorted(runs)))


def _pool_batch_write(*, run: JudgeRun, pool: str, rows: list[tuple[str, str, int, float, str]],
                      item_ids: dict[str, int], questions: dict[str, Question]) -> int:
    """One batch of an LLM pool (llmjudge.runs.imported.llm_pool_ratings_write, for a streamed import):
    the clash query is limited to the batch's items, so it does not grow with the earlier batches."""
    existing = set(LLMRating.objects.filter(run=run, item_id__in={item_ids[i] for i, *_ in rows})
                   .values_list("item__external_id", "question__key", "sample"))
    for item_id, question, sample, _, _ in rows:
        if (item_id, question, sample) in existing:
            raise ImportFileError(f"pool {pool!r} already has sample {sample} for item {item_id!r} on {question!r}; "
                                  "nothing was imported")
    LLMRating.objects.bulk_create(
        [LLMRating(run=run, item_id=item_ids[item_id], question=questions[question], sample=sample, score=score,
                   status=LLMRating.Status.OK, rationale=note, raw="", model=pool)
         for item_id, question, sample, score, note in rows]
    )
    return len(rows)
