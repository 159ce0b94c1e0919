"""The ratings import: one long-format file may hold human raters and LLM pools, so it writes both.

It lives in evalhub, the layer that sees both apps: the human rows go through
``annotations.importing.human_ratings_write``, each LLM pool through
``llmjudge.imported_runs.llm_pool_ratings_write``, in one transaction. File reading and the row checks
are annotations' (the same as the items import), so the messages are the same for every import.
"""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from annotations.importing import (
    BATCH,
    HUMAN_POOL,
    RATING_COLUMNS,
    ImportFileError,
    ImportResult,
    check_columns,
    check_group,
    check_length,
    human_ratings_write,
    read_rows,
    score_on_scale,
    shown,
)
from annotations.models import Item, Rater, Study
from llmjudge.imported_runs import llm_pool_ratings_write
from llmjudge.models import Judge

SAMPLE_MAX = 2**31 - 1  # LLMRating.sample is an integer column on PostgreSQL


def ratings_import(*, study: Study, path: Path) -> ImportResult:
    """Import ratings in long format (item, group, question, pool, rater, score[, rationale]).

    Pool "human" holds human raters (rater = a persistent rater id); any other pool is an LLM pool
    (rater = the sample index, an integer) stored as an imported judge run named after the pool.
    Unknown items are created with the row's group (and empty fields).
    """
    questions = {q.key: q for q in study.questions.all()}
    items = {i.external_id: i for i in study.items.all()}
    new_items: dict[str, str] = {}  # external id -> group
    keys: set[tuple[str, str, str, str]] = set()
    human: list[tuple[str, str, str, float, str]] = []  # item, question, rater, score, rationale
    llm: dict[str, list[tuple[str, str, int, float, str]]] = {}
    for line, row in read_rows(path):
        check_columns(row, line, list(RATING_COLUMNS), {"rationale", "comment"})
        item_id, group = row["item"].strip(), row["group"].strip()
        question, pool, rater = row["question"].strip(), row["pool"].strip(), row["rater"].strip()
        if not item_id:
            raise ImportFileError("empty item", line)
        check_length(item_id, "item", Item._meta.get_field("external_id").max_length, line)
        check_group(study, group, line)
        known_group = items[item_id].group if item_id in items else new_items.get(item_id)
        if known_group is not None and known_group != group:
            raise ImportFileError(f"item {item_id!r} is in group {known_group!r}, not {group!r}", line)
        if item_id not in items:
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
            check_length(rater, "rater", Rater._meta.get_field("external_id").max_length, line)
        else:
            check_length(pool, "pool", Judge._meta.get_field("name").max_length, line)
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
        key = (item_id, question, pool, rater)
        if key in keys:
            raise ImportFileError(f"duplicate rating: item {item_id!r}, question {question!r}, "
                                  f"pool {pool!r}, rater {rater!r}", line)
        keys.add(key)
        if pool == HUMAN_POOL:
            human.append((item_id, question, rater, score, note))
        else:
            llm.setdefault(pool, []).append((item_id, question, int(rater), score, note))
    if not keys:
        raise ImportFileError("the file has a header but no rows")
    with transaction.atomic():
        position = study.items.count()
        created = Item.objects.bulk_create(
            [Item(study=study, external_id=e, group=g, fields={}, position=position + n)
             for n, (e, g) in enumerate(new_items.items())],
            batch_size=BATCH,
        )
        items.update({i.external_id: i for i in created})
        n_human = human_ratings_write(study=study, rows=human, items=items, questions=questions)
        n_llm = sum(
            llm_pool_ratings_write(study=study, pool=pool, rows=rows, items=items, questions=questions)
            for pool, rows in llm.items()
        )
    return ImportResult(created_items=len(created), created_ratings=n_human + n_llm,
                        pools=tuple(([HUMAN_POOL] if human else []) + sorted(llm)))
