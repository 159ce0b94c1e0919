"""Importing items, human ratings and demographics from CSV or JSONL files.

Reading the files and checking rows lives here, with the writers of this app's rows. The ratings
import (``import_ratings``), whose files also hold LLM pools, is ``evalhub.rating_import``: it writes
into both apps, so it lives in the layer that sees both, and uses the readers and checks below.

Every import is all-or-nothing: every row is validated before anything is written, and the writes
happen in one transaction, so a file with one bad row changes nothing. Errors name the line
(line 1 of a CSV is its header) and the reason.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import math
import re
import string
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotations.models import HumanRating, Item, Question, Rater, Study

BATCH = 5000
RATING_COLUMNS = ("item", "group", "question", "pool", "rater", "score")
HUMAN_POOL = "human"
DELIMITERS = (",", ";", "\t")  # on a tie in the header line, the first wins
# Python's csv refuses fields above 131,072 characters; a story may be a whole chapter. The importer
# sets this limit while it reads (and restores the previous one after), so a 1 MB story imports and
# a quote that is never closed still stops at a bounded size with a clear message.
CSV_FIELD_MAX_CHARS = 16 * 1024 * 1024
_FOREIGN_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),  # before UTF-16: FF FE 00 00 starts with FF FE
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
# JSON strings cannot hold a raw CR or LF, so splitting on them never cuts an object; str.splitlines()
# would also split on U+2028 and friends, which JSON allows inside strings.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
    updated_raters: int = 0  # demographics: raters whose demographics were set or replaced
    unchanged_raters: int = 0  # demographics: raters whose file row equals what they already have


def shown(value: str, limit: int = 60) -> str:
    """repr() of a value from the file, cut short so that a message stays one readable line."""
    return repr(value if len(value) <= limit else value[:limit] + "\u2026")


def _names(names: list[str]) -> str:
    return ", ".join(n if n and n.isprintable() and n == n.strip() and len(n) <= 60 else shown(n) for n in names)


@contextmanager
def uploaded_file(upload: UploadedFile) -> Iterator[Path]:
    """An uploaded file written to a temporary path that keeps its suffix (.csv/.jsonl decide the format)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload{Path(upload.name or '').suffix}"
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        yield path


def _decode(data: bytes) -> str:
    if not data.strip():
        raise ImportFileError("the file is empty")
    for bom, name in _FOREIGN_BOMS:
        if data.startswith(bom):
            raise ImportFileError(f"not valid UTF-8: the file is {name} (it starts with a {name} byte order mark); "
                                  "save it as UTF-8", 1)
    # A NUL is valid UTF-8 but PostgreSQL cannot store it; here it almost always means UTF-16 or binary.
    nul = data.find(b"\x00")
    if nul != -1:
        raise ImportFileError(f"NUL byte (byte {nul}); is it UTF-16 or a binary file? Save it as UTF-8 text",
                              data[:nul].count(b"\n") + 1)
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


def read_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) from a CSV (with header) or JSONL file, values as strings."""
    text = _decode(_read_bytes(path))
    start = text.lstrip()
    if start.startswith("["):
        raise ImportFileError("the file is a JSON array; write one JSON object per line (JSONL)",
                              text[: len(text) - len(start)].count("\n") + 1)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json") or start.startswith("{"):
        yield from _jsonl_rows(text)
    else:
        yield from _csv_rows(text)


class _Pairs(list):
    """A JSON object as its (key, value) pairs, so that duplicate keys are seen rather than dropped."""


def _check_text(value: str, what: str, line: int) -> None:
    # Both are accepted by Python and SQLite but refused by PostgreSQL (text and jsonb).
    if "\x00" in value:
        raise ImportFileError(f"{what} contains a NUL character (\\u0000)", line)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ImportFileError(f"{what} contains an unpaired surrogate (\\u{ord(value[exc.start]):04x})", line) from None


def _jsonl_rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    for line_no, line in enumerate(_LINE_BREAK.split(text), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, object_pairs_hook=_Pairs)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"invalid JSON ({exc.msg} at column {exc.colno})", line_no) from None
        except RecursionError:
            raise ImportFileError("invalid JSON (nested too deeply)", line_no) from None
        except ValueError:  # an integer longer than sys.get_int_max_str_digits()
            raise ImportFileError("invalid JSON (a number with too many digits)", line_no) from None
        if not isinstance(obj, _Pairs):
            raise ImportFileError(f"each line must be a JSON object, not {_json_type(obj)}", line_no)
        row: dict[str, str] = {}
        for key, value in obj:
            _check_text(key, f"key {shown(key)}", line_no)
            if key in row:
                raise ImportFileError(f"duplicate key {shown(key)}", line_no)
            if isinstance(value, list):
                raise ImportFileError(f"field {shown(key)} must be a string or number, not {_json_type(value)}",
                                      line_no)
            row[key] = "" if value is None else str(value)
            _check_text(row[key], f"field {shown(key)}", line_no)
        yield line_no, row


def _json_type(value: object) -> str:
    if isinstance(value, _Pairs):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "null" if value is None else "a number or boolean"


def _delimiter(text: str) -> str:
    """The delimiter is the one of DELIMITERS most frequent in the header line.

    Not csv.Sniffer: it guesses from the data rows and can take a comma file whose values hold
    semicolons for a semicolon file, or turn off doubled quotes ('""' read as two quotes).
    """
    header = next((line for line in io.StringIO(text, newline="") if line.strip()), "")
    return max(DELIMITERS, key=header.count)


def _records(reader: Iterator[list[str]]) -> Iterator[tuple[int, int, list[str]]]:
    """(first line, last line, values) of each CSV record; a csv error names the record's first line."""
    while True:
        start = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            end, message = reader.line_num, str(exc)
            if "field larger than field limit" in message:
                reason = f"a field is longer than {csv.field_size_limit()} characters; is a closing quote missing?"
            elif "unexpected end of data" in message:
                reason = f"a quote opened on this line is never closed (the file ends on line {end})"
            elif end > start:
                reason = (f"a quoted field opened on this line runs to line {end} ({message}); "
                          "is a closing quote missing?")
            elif "expected after" in message:
                reason = 'text after a closing quote; a quote inside a quoted field must be doubled ("")'
            else:
                reason = f"malformed CSV: {message}"
            raise ImportFileError(reason, start) from None
        yield start, reader.line_num, values


def _csv_rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    previous_limit = csv.field_size_limit(CSV_FIELD_MAX_CHARS)
    try:
        records = _records(reader)
        first = next(((start, values) for start, _, values in records if any(v.strip() for v in values)), None)
        if first is None:
            raise ImportFileError("the file is empty")
        header_line, header = first[0], [h.strip() for h in first[1]]
        if "" in header:
            raise ImportFileError(f"column {header.index('') + 1} of the header has no name", header_line)
        if len(set(header)) != len(header):
            duplicates = sorted({h for h in header if header.count(h) > 1})
            raise ImportFileError(f"duplicate column names in the header: {_names(duplicates)}", header_line)
        for start, end, values in records:
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                hint = f" (a quoted field runs to line {end}; is a closing quote missing?)" if end > start else ""
                raise ImportFileError(f"expected {len(header)} values, found {len(values)}{hint}", start)
            yield start, dict(zip(header, values, strict=True))
    finally:
        csv.field_size_limit(previous_limit)


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


def check_length(value: str, what: str, limit: int, line: int) -> None:
    # The model's max_length; SQLite would store a longer value, PostgreSQL refuses it.
    if len(value) > limit:
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


def items_import(*, study: Study, path: Path) -> ImportResult:
    """Create the study's items from a file with columns id, group and each of the study's item fields."""
    required = ["id", "group", *study.item_fields]
    existing = set(study.items.values_list("external_id", flat=True))
    sizes = RenderedSize(study, list(study.questions.order_by("order")))
    seen: set[str] = set()
    new_items: list[Item] = []
    position = study.items.count()
    for line, row in read_rows(path):
        check_columns(row, line, required, set())
        item_id = row["id"].strip()
        if not item_id:
            raise ImportFileError("empty id", line)
        check_length(item_id, "id", Item._meta.get_field("external_id").max_length, line)
        if item_id in seen:
            raise ImportFileError(f"duplicate id {item_id!r} in the file", line)
        if item_id in existing:
            raise ImportFileError(f"item {item_id!r} already exists in study {study.slug}", line)
        seen.add(item_id)
        group = row["group"].strip()
        check_group(study, group, line)
        for name in study.item_fields:
            if not row[name].strip():
                raise ImportFileError(f"empty field {name!r}", line)
        item = Item(
            study=study,
            external_id=item_id,
            group=group,
            fields={name: row[name] for name in study.item_fields},
            position=position,
        )
        too_big = sizes.oversize(item.fields)
        if too_big:
            raise ImportFileError(too_big, line)
        new_items.append(item)
        position += 1
    if not new_items:
        raise ImportFileError("the file has a header but no rows")
    with transaction.atomic():
        Item.objects.bulk_create(new_items, batch_size=BATCH)
    return ImportResult(created_items=len(new_items))


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
    """
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


def demographics_import(*, study: Study, path: Path, replace: bool = False) -> ImportResult:
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
    for line, row in read_rows(path):
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
    with transaction.atomic():
        Rater.objects.bulk_update(updates, ["demographics"], batch_size=BATCH)
    return ImportResult(created_items=0, updated_raters=len(updates), unchanged_raters=unchanged)
