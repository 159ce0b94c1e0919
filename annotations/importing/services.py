"""Importing items, human ratings and demographics from CSV or JSONL files.

Reading the files lives in annotations.importing.file_rows (a stream of rows, in bounded memory); checking rows
lives here, with the writers of this app's rows. The ratings import (``import_ratings``), whose files also
hold LLM pools, is ``evalhub.imports.ratings``: it writes into both apps, so it lives in the layer that sees
both, and uses the readers and checks below.

Every import is all-or-nothing, in two readings of the file: the first checks every row (and reports
progress), keeping only what is bounded (8 bytes per row for the duplicate check, annotations.importing.duplicates);
the second writes in batches of BATCH rows inside one transaction, so a file with one bad row, or a write
refused by the database, changes nothing. Errors name the line (line 1 of a CSV is its header) and the reason.
"""
from __future__ import annotations

import math
import re
import string
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.template.defaultfilters import pluralize

from annotations.importing.duplicates import KeyLog, KeySink
from annotations.importing.file_rows import ImportFileError, Progress, read_rows, shown
from annotations.importing.file_rows import names_shown as _names
from annotations.models import HumanRating, Item, Question, Rater, Study
from annotations.services import rater_numbers_take

__all__ = ["ImportFileError", "read_rows", "shown"]  # re-exported: the importers' one place

BATCH = 5000
RATING_COLUMNS = ("item", "group", "question", "pool", "rater", "score")
HUMAN_POOL = "human"
BATCH_CHARS = 8 * 1024 * 1024  # a batch of long stories is cut here: its memory, not the file's, is what a write costs
# Items are written 1,000 at a time: an unsaved Item costs about 2 KB besides its text, so 5,000 of them
# would weigh more than a few MB of file.
ITEM_BATCH = 1000
T = TypeVar("T")
# What an import reports as it goes: ("checking", bytes read so far) during the first reading, then
# ("writing", 0) once before the second (its transaction hides anything it would report), and ("written", n)
# as the last statement inside that transaction (evalhub/imports/jobs.py marks its job done there).
ImportProgress = Callable[[str, int], None]


@dataclass(frozen=True)
class ImportResult:
    created_items: int
    created_ratings: int = 0
    pools: tuple[str, ...] = ()
    updated_raters: int = 0  # demographics: raters whose demographics were set or replaced
    unchanged_raters: int = 0  # demographics: raters whose file row equals what they already have

    def ratings_summary(self, slug: str) -> str:
        """What a ratings import reports: "imported 2 ratings in pool human (1 new item) into stories"."""
        ratings, items, pools = self.created_ratings, self.created_items, self.pools
        return (f"imported {ratings} rating{pluralize(ratings)} in pool{pluralize(len(pools))} {', '.join(pools)} "
                f"({items} new item{pluralize(items)}) into {slug}")


@contextmanager
def uploaded_file(upload: UploadedFile) -> Iterator[Path]:
    """An uploaded file written to a temporary path that keeps its suffix (.csv/.jsonl decide the format).

    Chunk by chunk: an upload Django spooled to disk is never read whole into memory.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload{Path(upload.name or '').suffix}"
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        yield path


def checking(progress: ImportProgress | None) -> Progress | None:
    """read_rows' byte counter for the first reading, as an ImportProgress "checking" report."""
    if progress is None:
        return None
    report = progress
    return lambda done: report("checking", done)


def raise_first_duplicate(keys: KeyLog, rescan: Callable[[KeySink], None],
                          message: Callable[[tuple[str, ...]], str], error: ImportFileError | None = None) -> None:
    """Raise the duplicate-key error of the first repeated key, if it comes before ``error`` (or at all)."""
    try:
        found = keys.first_duplicate(rescan, upto=error.line if error is not None else None)
    except ImportFileError:
        return  # the second reading met the first one's error before any duplicate: that error stands
    if found is not None:
        raise ImportFileError(message(found[1]), found[0]) from None


def checked_reading(rows: Callable[[KeySink], Iterator[object]], message: Callable[[tuple[str, ...]], str],
                    ) -> int:
    """The first reading: every row checked, keys logged; the first error in file order is raised.

    ``rows(sink)`` yields the file's checked rows and calls ``sink(line, key)`` at the point of each row
    where the in-memory check used to test for a repeated key. Returns the number of rows.
    """
    keys = KeyLog()
    count = 0

    def rescan(sink: KeySink) -> None:
        for _ in rows(sink):
            pass

    try:
        for _ in rows(lambda _line, key: keys.add(key)):
            count += 1
    except ImportFileError as exc:
        raise_first_duplicate(keys, rescan, message, exc)
        raise
    raise_first_duplicate(keys, rescan, message)
    return count


def batches(rows: Iterator[tuple[int, T]], size: int = BATCH, weight: Callable[[T], int] | None = None,
            ) -> Iterator[list[T]]:
    """Rows in lists of ``size``, or fewer when their ``weight`` (characters) reaches BATCH_CHARS."""
    batch: list[T] = []
    total = 0
    for _line, row in rows:
        batch.append(row)
        total += weight(row) if weight is not None else 0
        if len(batch) == size or total >= BATCH_CHARS:
            yield batch
            batch, total = [], 0
    if batch:
        yield batch


def check_columns(row: dict[str, str], line: int, required: list[str], optional: set[str]) -> None:
    """Refuse a row that lacks a required column or has one that is neither required nor optional."""
    missing = [c for c in required if c not in row]
    extra = sorted(set(row) - set(required) - optional)
    if missing:
        found = f"; found unknown column(s) {_names(extra)}" if extra else ""
        if len(row) == 1 and extra:
            found += "; separate the columns with a comma, a semicolon or a tab"
        raise ImportFileError(f"missing column(s) {', '.join(missing)}{found}", line)
    if extra:
        raise ImportFileError(f"unknown column(s) {_names(extra)}; expected {', '.join(required)}", line)


def check_length(value: str, what: str, limit: int | None, line: int) -> None:
    # The model's max_length (None: a field without one); SQLite would store a longer value, PostgreSQL refuses it.
    if limit is not None and len(value) > limit:
        raise ImportFileError(f"{what} longer than {limit} characters", line)


def check_group(study: Study, group: str, line: int) -> None:
    if not group:
        raise ImportFileError("empty group", line)
    if study.groups and group not in study.groups:
        raise ImportFileError(f"unknown group {shown(group)}; the study's groups are {', '.join(study.groups)}", line)
    check_length(group, "group", Item._meta.get_field("group").max_length, line)


class RenderedSize:
    """The length an item's rater page and judge prompts render to, without rendering them.

    Placeholders are plain ``{name}`` (annotations.studies refuses anything else), so a rendered text's
    length is its template's literal length plus the length of each value it names: one sum per item,
    where rendering every prompt of a 200 MB file would cost more than the import itself. The number is
    the one annotations.rendering checks again when it renders.
    """

    def __init__(self, study: Study, questions: list[Question]) -> None:
        hidden = {q.reveals for q in questions if q.reveals}
        self.page_fields = [name for name in study.item_fields if name not in hidden]
        self.page_literal = len(study.instruction) + sum(len(q.text) for q in questions)
        self.contexts = [_template_parts(q.context) for q in questions]
        self.prompts = [(q.key, len(q.text), _template_parts(study.llm_template)) for q in questions]

    def oversize(self, fields: dict[str, str]) -> str | None:
        """What is above MAX_PROMPT_CHARS for these fields ("the rater page ... would be N characters"), or None."""
        cap = settings.MAX_PROMPT_CHARS
        length = {name: len(str(value)) for name, value in fields.items()}
        try:
            contexts = [literal + sum(length[n] for n in names) for literal, names in self.contexts]
            page = self.page_literal + sum(length.get(n, 0) for n in self.page_fields) + sum(contexts)
            if page > cap:
                return f"the rater page would be {page} characters, above MAX_PROMPT_CHARS={cap}"
            for (key, question, (literal, names)), context in zip(self.prompts, contexts, strict=True):
                extra = {"question": question, "context": context}
                prompt = literal + sum(extra[n] if n in extra else length[n] for n in names)
                if prompt > cap:
                    return (f"the prompt for question {key!r} would be {prompt} characters, "
                            f"above MAX_PROMPT_CHARS={cap}")
        except KeyError:
            return None  # a template this item cannot fill is not a size question: rendering reports it
        return None


def _template_parts(template: str) -> tuple[int, list[str]]:
    literal, names = 0, []
    for text, name, _spec, _conversion in string.Formatter().parse(template):
        literal += len(text)
        if name is not None:
            names.append(name)
    return literal, names


def _item_rows(study: Study, path: Path, sink: KeySink | None,
               progress: Progress | None = None) -> Iterator[tuple[int, Item]]:
    """The file's items, each checked (all but the in-file duplicate, which ``sink`` sees), unsaved."""
    required = ["id", "group", *study.item_fields]
    existing = set(study.items.values_list("external_id", flat=True))
    sizes = RenderedSize(study, list(study.questions.order_by("order")))
    id_max = Item._meta.get_field("external_id").max_length
    for line, row in read_rows(path, progress):
        check_columns(row, line, required, set())
        item_id = row["id"].strip()
        if not item_id:
            raise ImportFileError("empty id", line)
        check_length(item_id, "id", id_max, line)
        if sink is not None:
            sink(line, (item_id,))
        if item_id in existing:
            raise ImportFileError(f"item {item_id!r} already exists in study {study.slug}", line)
        group = row["group"].strip()
        check_group(study, group, line)
        for name in study.item_fields:
            if not row[name].strip():
                raise ImportFileError(f"empty field {name!r}", line)
        item = Item(study=study, external_id=item_id, group=group,
                    fields={name: row[name] for name in study.item_fields})
        too_big = sizes.oversize(item.fields)
        if too_big:
            raise ImportFileError(too_big, line)
        yield line, item


def _item_chars(item: Item) -> int:
    return sum(len(value) for value in item.fields.values())


def items_import(*, study: Study, path: Path, progress: ImportProgress | None = None) -> ImportResult:
    """Create the study's items from a file with columns id, group and each of the study's item fields."""
    count = checked_reading(lambda sink: _item_rows(study, path, sink, checking(progress)),
                            lambda key: f"duplicate id {key[0]!r} in the file")
    if not count:
        raise ImportFileError("the file has a header but no rows")
    if progress is not None:
        progress("writing", 0)
    with transaction.atomic():
        position = study.items.count()
        for batch in batches(_item_rows(study, path, None), size=ITEM_BATCH, weight=_item_chars):
            for item in batch:
                item.position = position
                position += 1
            Item.objects.bulk_create(batch)
        if progress is not None:
            progress("written", count)  # inside the transaction: a job marked done commits with its rows
    return ImportResult(created_items=count)


def score_on_scale(raw: str, study: Study, line: int) -> float:
    """The file's score as a number, refused unless it is finite and on the study's scale."""
    try:
        score = float(raw)
    except ValueError:
        raise ImportFileError(f"score {shown(raw)} is not a number", line) from None
    if not math.isfinite(score):
        raise ImportFileError(f"score {shown(raw)} is not a finite number", line)
    if not study.scale_min <= score <= study.scale_max:
        raise ImportFileError(f"score {shown(raw)} is outside the scale {study.scale_min}-{study.scale_max}", line)
    return score


def human_ratings_write(
    *, study: Study, rows: list[tuple[str, str, str, float, str]], items: dict[str, Item],
    questions: dict[str, Question],
) -> int:
    """Write (item, question, rater, score, comment) rows of checked human ratings; refuse any already present.

    Raters unknown to the study are created as imported raters. The caller holds the transaction.
    (``import_annotations``'s writer: all rows at once, through the streamed import's batch writer.)
    """
    if not rows:
        return 0
    raters = {r.external_id: r for r in study.raters.exclude(external_id="")}
    return human_ratings_batch_write(study=study, rows=rows, item_ids={e: item.pk for e, item in items.items()},
                                     questions=questions, raters=raters)


def human_ratings_batch_write(
    *, study: Study, rows: list[tuple[str, str, str, float, str]], item_ids: dict[str, int],
    questions: dict[str, Question], raters: dict[str, Rater],
) -> int:
    """One batch of a streamed import: like human_ratings_write, with items by primary key and the study's
    raters by external id (``raters`` is updated with the imported raters it creates).

    The clash query is limited to the batch's raters and items, so its cost does not grow with the
    ratings the earlier batches of the same import wrote. The caller holds the transaction.
    """
    missing = sorted({rater for _, _, rater, _, _ in rows} - set(raters))
    numbers = rater_numbers_take(study=study, count=len(missing)) if missing else []
    for created in Rater.objects.bulk_create(
        [Rater(study=study, external_id=e, source=Rater.Source.IMPORTED, number=n)
         for e, n in zip(missing, numbers, strict=True)], batch_size=BATCH
    ):
        raters[created.external_id] = created
    existing = set(HumanRating.objects.filter(
        rater__study=study, rater__external_id__in={r for _, _, r, _, _ in rows},
        item_id__in={item_ids[i] for i, _, _, _, _ in rows},
    ).values_list("item__external_id", "question__key", "rater__external_id"))
    for item_id, question, rater, _, _ in rows:
        if (item_id, question, rater) in existing:
            raise ImportFileError(
                f"rater {rater!r} already rated item {item_id!r} on {question!r} in this study; nothing was imported"
            )
    HumanRating.objects.bulk_create(
        [HumanRating(rater=raters[rater], item_id=item_ids[item_id], question=questions[question], score=score,
                     comment=note)
         for item_id, question, rater, score, note in rows],
        batch_size=BATCH,
    )
    return len(rows)


DEMOGRAPHICS_KEY = "rater"
# Demographic fields differ by data set (OpinionQA has 12, the rater form asks 5), so their names are
# free; but a column of another import format means the wrong file was picked, and a name that is not
# a plain identifier (a stray "age band", "Gender ") is most likely a typo that would split one field in two.
_RATINGS_OR_ITEMS_COLUMNS = frozenset({"id", "item", "group", "question", "pool", "score", "rationale", "comment"})
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,49}")
DEMOGRAPHIC_VALUE_MAX_CHARS = 200  # a value goes into every persona prompt of the rater


def _check_demographic_fields(fields: list[str], line: int) -> None:
    if DEMOGRAPHICS_KEY not in fields:
        raise ImportFileError(f"missing column {DEMOGRAPHICS_KEY} (the rater id used when the ratings were imported)",
                              line)
    names = [f for f in fields if f != DEMOGRAPHICS_KEY]
    if not names:
        raise ImportFileError("no demographic columns besides rater", line)
    foreign = sorted(set(names) & _RATINGS_OR_ITEMS_COLUMNS)
    if foreign:
        raise ImportFileError(f"unknown column(s) {_names(foreign)}: this looks like an items or ratings file; "
                              "a demographics file has rater and one column per demographic field", line)
    bad = [n for n in names if not _FIELD_NAME.fullmatch(n)]
    if bad:
        listed = ", ".join(shown(n) for n in bad)
        raise ImportFileError(f"column name(s) {listed} must be lowercase letters, digits and _ "
                              "(at most 50, starting with a letter), e.g. age_band", line)


def demographics_import(*, study: Study, path: Path, replace: bool = False,
                        progress: ImportProgress | None = None) -> ImportResult:
    """Set the demographics of the study's existing raters from a file: ``rater`` plus one column per field.

    ``rater`` is the rater's external id, as in the ratings import. The first row's columns (the CSV
    header, the first JSONL object's keys) are the fields; every row must have exactly those. Empty
    values are left out (unknown, as the prompts treat them). A rater who already has different
    demographics (from the rater form or an earlier import) is refused unless ``replace``: the file's
    row then replaces them whole. A row equal to what the rater has changes nothing, so importing the
    same file twice is harmless. All or nothing, like the other imports.
    """
    raters = {r.external_id: r for r in study.raters.exclude(external_id="")}
    fields: list[str] | None = None
    seen: set[str] = set()
    updates: list[Rater] = []
    unchanged = 0
    # One reading: what it keeps (the raters to update, the ids seen) is bounded by the study's raters.
    for line, row in read_rows(path, checking(progress)):
        if fields is None:
            fields = list(row)
            _check_demographic_fields(fields, line)
        check_columns(row, line, fields, set())
        key = row[DEMOGRAPHICS_KEY].strip()
        if not key:
            raise ImportFileError("empty rater", line)
        if key in seen:
            raise ImportFileError(f"duplicate rater {shown(key)} in the file", line)
        seen.add(key)
        rater = raters.get(key)
        if rater is None:
            raise ImportFileError(f"unknown rater {shown(key)} in study {study.slug} (import their ratings first, "
                                  "or give the external id they were imported with)", line)
        values = {}
        for name in fields:
            value = row[name].strip()
            if name == DEMOGRAPHICS_KEY or not value:
                continue
            check_length(value, f"field {name!r}", DEMOGRAPHIC_VALUE_MAX_CHARS, line)
            values[name] = value
        if not values:
            raise ImportFileError(f"rater {shown(key)} has no demographic value", line)
        if rater.demographics == values:
            unchanged += 1
            continue
        if rater.demographics and not replace:
            given = "imported earlier" if rater.source == Rater.Source.IMPORTED else "given in the rater form"
            raise ImportFileError(f"rater {shown(key)} already has demographics ({given}: "
                                  f"{', '.join(sorted(rater.demographics))}); replace them with --replace", line)
        rater.demographics = values
        updates.append(rater)
    if fields is None:
        raise ImportFileError("the file has a header but no rows")
    if progress is not None:
        progress("writing", 0)
    with transaction.atomic():
        Rater.objects.bulk_update(updates, ["demographics"], batch_size=BATCH)
        if progress is not None:
            progress("written", len(updates))
    return ImportResult(created_items=0, updated_raters=len(updates), unchanged_raters=unchanged)
