"""Reading import files (CSV with a header, or JSONL) as a stream of rows, in bounded memory.

The file is read in blocks of READ_BLOCK bytes: the byte-level checks (a foreign byte order mark, a NUL,
invalid UTF-8) are made on each block, with the line they fall on, and the decoded text is cut into lines
as ``io.StringIO(text, newline="")`` would cut them (on CR LF, CR or LF), so the CSV reader and the JSONL
parser number lines exactly as they did when the whole file was read at once. Memory is bounded by the
block and the longest line (LINE_MAX_CHARS), never by the file. The importers (annotations.importing.services,
evalhub.imports.ratings) keep whatever else they need in bounded form (annotations.importing.duplicates).
"""
from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from _csv import Reader  # the type of csv.reader(); _csv.reader at runtime

DELIMITERS = (",", ";", "\t")  # on a tie in the header line, the first wins
# Python's csv refuses fields above 131,072 characters; a story may be a whole chapter. The importer
# sets this limit while it reads (and restores the previous one after), so a 1 MB story imports and
# a quote that is never closed still stops at a bounded size with a clear message.
CSV_FIELD_MAX_CHARS = 16 * 1024 * 1024
# A line longer than this is refused: it bounds what one line may cost in memory (a quoted CSV field may
# still span many lines, each below it; the field limit above bounds the whole field).
LINE_MAX_CHARS = 2 * CSV_FIELD_MAX_CHARS
READ_BLOCK = 256 * 1024
_FOREIGN_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),  # before UTF-16: FF FE 00 00 starts with FF FE
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)
# A line and its end, as io.StringIO(newline="") cuts them. JSON strings cannot hold a raw CR or LF, so
# cutting on them never cuts an object; str.splitlines() would also cut on U+2028 and friends, which JSON
# allows inside strings.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")
_LAST_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # the same, and a last line without an end

Progress = Callable[[int], None]  # called with the number of bytes read so far


class ImportFileError(ValueError):
    def __init__(self, reason: str, line: int | None = None) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


def shown(value: str, limit: int = 60) -> str:
    """repr() of a value from the file, cut short so that a message stays one readable line."""
    return repr(value if len(value) <= limit else value[:limit] + "\u2026")


def names_shown(names: list[str]) -> str:
    return ", ".join(n if n and n.isprintable() and n == n.strip() and len(n) <= 60 else shown(n) for n in names)


def file_size_checked(path: Path) -> int:
    if not path.is_file():
        raise ImportFileError(f"no such file: {path}")
    size = path.stat().st_size
    if size > settings.IMPORT_MAX_BYTES:
        raise ImportFileError(f"the file is {size} bytes, above the limit of {settings.IMPORT_MAX_BYTES} bytes")
    return size


def _text_blocks(path: Path, progress: Progress | None) -> Iterator[str]:
    """The file's text, block by block, after the byte-level checks; raises on the first bad byte."""
    newlines = 0  # LF bytes before the current block: byte errors are numbered by LF, as before
    offset = 0  # bytes before the current block, not counting a UTF-8 byte order mark
    pending = b""  # the start of a multi-byte character cut by the block's end
    blank = True
    with path.open("rb") as handle:
        first = True
        while True:
            raw = handle.read(max(READ_BLOCK, 4) if first else READ_BLOCK)  # a byte order mark is whole
            final = not raw
            if first:
                first = False
                for bom, name in _FOREIGN_BOMS:
                    if raw.startswith(bom):
                        raise ImportFileError(f"not valid UTF-8: the file is {name} (it starts with a {name} byte "
                                              "order mark); save it as UTF-8", 1)
                if raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8):]
                    blank = False  # as bytes.strip() saw it: a BOM alone is not an empty file
            if progress is not None and raw:
                progress(handle.tell())
            # A NUL is valid UTF-8 but PostgreSQL cannot store it; here it almost always means UTF-16 or binary.
            nul = raw.find(b"\x00")
            if nul != -1:
                raise ImportFileError(f"NUL byte (byte {offset + nul}); is it UTF-16 or a binary file? Save it as "
                                      "UTF-8 text", newlines + raw[:nul].count(b"\n") + 1)
            data = pending + raw if pending else raw
            try:
                text, used = codecs.utf_8_decode(data, "strict", final)
            except UnicodeDecodeError as exc:
                line = newlines + data[: exc.start].count(b"\n") + 1
                raise ImportFileError(f"not valid UTF-8 (byte {offset - len(pending) + exc.start}); save the file "
                                      "as UTF-8", line) from None
            pending = data[used:]
            newlines += raw.count(b"\n")
            offset += len(raw)
            if blank and raw.strip():
                blank = False
            if final:
                break
            if text:
                yield text
    if blank:
        raise ImportFileError("the file is empty")


def text_lines(path: Path, progress: Progress | None = None) -> Iterator[str]:
    """The file's lines with their ends, cut as io.StringIO(text, newline="") cuts them."""
    carry: list[str] = []  # the start of a line that has not ended yet, block by block
    carried = 0
    for block in _text_blocks(path, progress):
        # The last line end of the block; a final CR waits for the next block, which may start with its LF.
        cut = max(block.rfind("\n"), block.rfind("\r", 0, len(block) - 1))
        if cut == -1:
            carry.append(block)
            carried += len(block)
            if carried > LINE_MAX_CHARS:
                raise ImportFileError(f"a line longer than {LINE_MAX_CHARS} characters; is it a text file with "
                                      "line breaks?")
            continue
        head = "".join([*carry, block[: cut + 1]]) if carry else block[: cut + 1]
        yield from (match.group() for match in _LINE.finditer(head))
        rest = block[cut + 1:]
        carry, carried = ([rest], len(rest)) if rest else ([], 0)
    if carry:
        yield from (match.group() for match in _LAST_LINES.finditer("".join(carry)))


def read_rows(path: Path, progress: Progress | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) from a CSV (with header) or JSONL file, values as strings.

    ``progress``, if given, is called with the number of bytes read so far as the file is read.
    """
    file_size_checked(path)
    lines = text_lines(path, progress)
    skipped: list[str] = []
    first = ""
    for line in lines:
        if line.strip():
            first = line
            break
        skipped.append(line)
    start = first.lstrip()
    if start.startswith("["):
        leading = "".join(skipped) + first[: len(first) - len(start)]
        raise ImportFileError("the file is a JSON array; write one JSON object per line (JSONL)",
                              leading.count("\n") + 1)
    whole = chain(skipped, [first] if first else [], lines)
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json") or start.startswith("{"):
        yield from _jsonl_rows(whole)
    else:
        yield from _csv_rows(whole, header=first)


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


def _jsonl_rows(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, str]]]:
    for line_no, line in enumerate(lines, start=1):
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


def _records(reader: Reader) -> Iterator[tuple[int, int, list[str]]]:
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


def _csv_rows(lines: Iterable[str], header: str) -> Iterator[tuple[int, dict[str, str]]]:
    # The delimiter is the one of DELIMITERS most frequent in the header line. Not csv.Sniffer: it guesses
    # from the data rows and can take a comma file whose values hold semicolons for a semicolon file, or
    # turn off doubled quotes ('""' read as two quotes).
    reader = csv.reader(lines, delimiter=max(DELIMITERS, key=header.count), strict=True)
    previous_limit = csv.field_size_limit(CSV_FIELD_MAX_CHARS)
    try:
        records = _records(reader)
        first = next(((start, values) for start, _, values in records if any(v.strip() for v in values)), None)
        if first is None:
            raise ImportFileError("the file is empty")
        header_line, names = first[0], [h.strip() for h in first[1]]
        if "" in names:
            raise ImportFileError(f"column {names.index('') + 1} of the header has no name", header_line)
        if len(set(names)) != len(names):
            duplicates = sorted({h for h in names if names.count(h) > 1})
            raise ImportFileError(f"duplicate column names in the header: {names_shown(duplicates)}", header_line)
        for start, end, values in records:
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(names):
                hint = f" (a quoted field runs to line {end}; is a closing quote missing?)" if end > start else ""
                raise ImportFileError(f"expected {len(names)} values, found {len(values)}{hint}", start)
            yield start, dict(zip(names, values, strict=True))
    finally:
        csv.field_size_limit(previous_limit)
