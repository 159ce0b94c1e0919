"""Importing items and existing ratings from CSV or JSONL files.

Both imports are all-or-nothing: every row is validated before anything is written, and the writes
happen in one transaction, so a file with one bad row changes nothing. Errors name the line
(line 1 of a CSV is its header) and the reason.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotations.models import HumanRating, Item, Question, Rater, Study

BATCH = 5000
RATING_COLUMNS = ("item", "group", "question", "pool", "rater", "score")
HUMAN_POOL = "human"


class ImportFileError(ValueError):
    def __init__(self, reason: str, line: int | None = None) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


@dataclass(frozen=True)
class ImportResult:
    created_items: int
    created_ratings: int = 0
    pools: tuple[str, ...] = ()


def _decode(data: bytes) -> str:
    if not data.strip():
        raise ImportFileError("the file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFileError(f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8", line) from None


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise ImportFileError(f"no such file: {path}")
    size = path.stat().st_size
    if size > settings.IMPORT_MAX_BYTES:
        raise ImportFileError(f"the file is {size} bytes, above the limit of {settings.IMPORT_MAX_BYTES} bytes")
    return path.read_bytes()


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) from a CSV (with header) or JSONL file, values as strings."""
    text = _decode(_read_bytes(path))
    if path.suffix.lower() in (".jsonl", ".ndjson") or text.lstrip().startswith("{"):
        yield from _jsonl_rows(text)
    else:
        yield from _csv_rows(text)


def _jsonl_rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"invalid JSON ({exc.msg} at column {exc.colno})", line_no) from None
        if not isinstance(obj, dict):
            raise ImportFileError("each line must be a JSON object", line_no)
        row = {}
        for key, value in obj.items():
            if isinstance(value, (dict, list)):
                raise ImportFileError(f"field {key!r} must be a string or number, not {type(value).__name__}", line_no)
            row[str(key)] = "" if value is None else str(value)
        yield line_no, row


def _csv_rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    try:
        header = next(reader)
    except StopIteration:
        raise ImportFileError("the file is empty") from None
    header = [h.strip() for h in header]
    if len(set(header)) != len(header):
        raise ImportFileError(f"duplicate column names in the header: {header}", 1)
    try:
        for values in reader:
            line_no = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise ImportFileError(f"expected {len(header)} values, found {len(values)}", line_no)
            yield line_no, dict(zip(header, values, strict=True))
    except csv.Error as exc:
        raise ImportFileError(f"malformed CSV: {exc}", reader.line_num) from None


def _check_columns(row: dict[str, str], line: int, required: list[str], optional: set[str]) -> None:
    missing = [c for c in required if c not in row]
    if missing:
        raise ImportFileError(f"missing column(s) {', '.join(missing)}", line)
    extra = sorted(set(row) - set(required) - optional)
    if extra:
        raise ImportFileError(f"unknown column(s) {', '.join(extra)}; expected {', '.join(required)}", line)


def _check_group(study: Study, group: str, line: int) -> None:
    if not group:
        raise ImportFileError("empty group", line)
    if study.groups and group not in study.groups:
        raise ImportFileError(f"unknown group {group!r}; the study's groups are {', '.join(study.groups)}", line)


def items_import(*, study: Study, path: Path) -> ImportResult:
    """Create the study's items from a file with columns id, group and each of the study's item fields."""
    required = ["id", "group", *study.item_fields]
    existing = set(study.items.values_list("external_id", flat=True))
    seen: set[str] = set()
    new_items: list[Item] = []
    position = study.items.count()
    for line, row in _rows(path):
        _check_columns(row, line, required, set())
        item_id = row["id"].strip()
        if not item_id:
            raise ImportFileError("empty id", line)
        if len(item_id) > 200:
            raise ImportFileError("id longer than 200 characters", line)
        if item_id in seen:
            raise ImportFileError(f"duplicate id {item_id!r} in the file", line)
        if item_id in existing:
            raise ImportFileError(f"item {item_id!r} already exists in study {study.slug}", line)
        seen.add(item_id)
        group = row["group"].strip()
        _check_group(study, group, line)
        for name in study.item_fields:
            if not row[name].strip():
                raise ImportFileError(f"empty field {name!r}", line)
        new_items.append(
            Item(
                study=study,
                external_id=item_id,
                group=group,
                fields={name: row[name] for name in study.item_fields},
                position=position,
            )
        )
        position += 1
    if not new_items:
        raise ImportFileError("the file has a header but no rows")
    with transaction.atomic():
        Item.objects.bulk_create(new_items, batch_size=BATCH)
    return ImportResult(created_items=len(new_items))


def _parse_score(raw: str, study: Study, line: int) -> float:
    try:
        score = float(raw)
    except ValueError:
        raise ImportFileError(f"score {raw!r} is not a number", line) from None
    if not math.isfinite(score):
        raise ImportFileError(f"score {raw!r} is not a finite number", line)
    if not study.scale_min <= score <= study.scale_max:
        raise ImportFileError(f"score {raw!r} is outside the scale {study.scale_min}-{study.scale_max}", line)
    return score


def ratings_import(*, study: Study, path: Path) -> ImportResult:
    """Import ratings in long format (item, group, question, pool, rater, score[, rationale]).

    Pool "human" holds human raters (rater = a persistent rater id); any other pool is an LLM pool
    (rater = the sample index, an integer) stored as an imported judge run named after the pool.
    Unknown items are created with the row's group (and empty fields).
    """
    from llmjudge.imports import llm_pool_ratings_write  # llmjudge depends on annotations, not the reverse

    questions = {q.key: q for q in study.questions.all()}
    items = {i.external_id: i for i in study.items.all()}
    new_items: dict[str, str] = {}  # external id -> group
    keys: set[tuple[str, str, str, str]] = set()
    human: list[tuple[str, str, str, float, str]] = []  # item, question, rater, score, rationale
    llm: dict[str, list[tuple[str, str, int, float, str]]] = {}
    for line, row in _rows(path):
        _check_columns(row, line, list(RATING_COLUMNS), {"rationale", "comment"})
        item_id, group = row["item"].strip(), row["group"].strip()
        question, pool, rater = row["question"].strip(), row["pool"].strip(), row["rater"].strip()
        if not item_id:
            raise ImportFileError("empty item", line)
        _check_group(study, group, line)
        known_group = items[item_id].group if item_id in items else new_items.get(item_id)
        if known_group is not None and known_group != group:
            raise ImportFileError(f"item {item_id!r} is in group {known_group!r}, not {group!r}", line)
        if item_id not in items:
            new_items.setdefault(item_id, group)
        if question not in questions:
            raise ImportFileError(f"unknown question {question!r}; the study asks {', '.join(questions)}", line)
        if not pool:
            raise ImportFileError("empty pool", line)
        if not rater:
            raise ImportFileError("empty rater", line)
        score = _parse_score(row["score"].strip(), study, line)
        key = (item_id, question, pool, rater)
        if key in keys:
            raise ImportFileError(f"duplicate rating: item {item_id!r}, question {question!r}, "
                                  f"pool {pool!r}, rater {rater!r}", line)
        keys.add(key)
        note = row.get("rationale", "") or row.get("comment", "")
        if pool == HUMAN_POOL:
            human.append((item_id, question, rater, score, note))
        else:
            try:
                sample = int(rater)
            except ValueError:
                raise ImportFileError(f"rater {rater!r} of LLM pool {pool!r} must be a sample index (integer)",
                                      line) from None
            if sample < 0:
                raise ImportFileError(f"sample index {sample} must not be negative", line)
            llm.setdefault(pool, []).append((item_id, question, sample, score, note))
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
        n_human = _human_ratings_write(study=study, rows=human, items=items, questions=questions)
        n_llm = sum(
            llm_pool_ratings_write(study=study, pool=pool, rows=rows, items=items, questions=questions)
            for pool, rows in llm.items()
        )
    return ImportResult(created_items=len(created), created_ratings=n_human + n_llm,
                        pools=tuple(([HUMAN_POOL] if human else []) + sorted(llm)))


def _human_ratings_write(
    *, study: Study, rows: list[tuple[str, str, str, float, str]], items: dict[str, Item],
    questions: dict[str, Question],
) -> int:
    if not rows:
        return 0
    raters = {r.external_id: r for r in study.raters.exclude(external_id="")}
    missing = sorted({rater for _, _, rater, _, _ in rows} - set(raters))
    for rater in Rater.objects.bulk_create(
        [Rater(study=study, external_id=e, source=Rater.Source.IMPORTED) for e in missing], batch_size=BATCH
    ):
        raters[rater.external_id] = rater
    clash = HumanRating.objects.filter(
        rater__study=study, rater__external_id__in={r for _, _, r, _, _ in rows},
    ).values_list("item__external_id", "question__key", "rater__external_id")
    existing = set(clash)
    for item_id, question, rater, _, _ in rows:
        if (item_id, question, rater) in existing:
            raise ImportFileError(
                f"rater {rater!r} already rated item {item_id!r} on {question!r} in this study; nothing was imported"
            )
    HumanRating.objects.bulk_create(
        [HumanRating(rater=raters[rater], item=items[item_id], question=questions[question], score=score,
                     comment=note)
         for item_id, question, rater, score, note in rows],
        batch_size=BATCH,
    )
    return len(rows)
