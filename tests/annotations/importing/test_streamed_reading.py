"""Import files read as a stream (annotations/importing/file_rows.py) and checked in bounded memory
(annotations/importing/duplicates.py): the same rows, errors and line numbers as the whole-file reading, whatever
the block size, and a peak memory well below the file's size."""
from __future__ import annotations

import io
import tracemalloc

import pytest

from annotations.importing import duplicates, file_rows
from annotations.importing.services import ImportFileError, items_import
from annotations.models import Item
from evalhub.imports.ratings import ratings_import
from tests.support.import_files import snapshot, write

ITEMS = "id,group,story,prompt\n"
RATINGS = "item,group,question,pool,rater,score\n"

FILES = {
    "crlf.csv": (ITEMS + 'a,human,"two\r\nlines",p\r\nb,gpt2,s,p\r\n').encode(),
    "cr-only.csv": (ITEMS.replace("\n", "\r") + "a,human,s,p\rb,gpt2,s,p\r").encode(),
    "multibyte.csv": (ITEMS + "a,human,Ünïcode “quotes” ✓ 𝄞,p\nb,gpt2,ééééé,p\n").encode(),
    "bom.jsonl": "\ufeff".encode() + b'{"id": "a", "group": "human", "story": "s\\u2028t", "prompt": "p"}\r\n\r\n'
                 + b'{"id": "b", "group": "gpt2", "story": "\xe2\x9c\x93", "prompt": "p"}',
    "bad-byte-late.csv": (ITEMS + "a,human,s,p\n" * 30).encode() + b"z,human,caf\xe9,p\n",
    "nul-late.csv": (ITEMS + "a,human,s,p\n" * 30).encode() + b"z,human,c\x00,p\n",
    "cut-multibyte-at-end.csv": (ITEMS + "a,human,caf").encode() + b"\xc3",
    "array.jsonl": b"\n \n[{}]",
}


def _read(path):
    try:
        return list(file_rows.read_rows(path))
    except ImportFileError as exc:
        return str(exc)


@pytest.mark.parametrize("name", sorted(FILES))
def test_rows_and_errors_do_not_depend_on_the_block_size(tmp_path, monkeypatch, name):
    path = write(tmp_path, name, FILES[name])
    whole = _read(path)
    for block in (1, 2, 3, 5, 64):
        monkeypatch.setattr(file_rows, "READ_BLOCK", block)
        assert _read(path) == whole, f"block of {block} bytes"


def test_line_numbers_of_byte_errors_are_those_of_the_whole_file_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(file_rows, "READ_BLOCK", 7)
    assert _read(write(tmp_path, "x.csv", FILES["bad-byte-late.csv"])).startswith("line 32: not valid UTF-8 (byte ")
    assert _read(write(tmp_path, "y.csv", FILES["nul-late.csv"])).startswith("line 32: NUL byte (byte ")
    assert _read(write(tmp_path, "z.jsonl", FILES["array.jsonl"])) == (
        "line 3: the file is a JSON array; write one JSON object per line (JSONL)")
    crlf = _read(write(tmp_path, "c.csv", FILES["crlf.csv"]))
    assert [(line, row["id"]) for line, row in crlf] == [(2, "a"), (4, "b")]


def test_a_line_without_end_above_the_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(file_rows, "LINE_MAX_CHARS", 100)
    monkeypatch.setattr(file_rows, "READ_BLOCK", 16)
    assert "a line longer than 100 characters" in _read(write(tmp_path, "x.csv", ITEMS + "a,human," + "s" * 300))


def test_a_duplicate_before_another_error_is_the_one_reported_and_after_it_is_not(story_study, tmp_path):
    dup_first = ITEMS + "a,human,s,p\nb,human,s,p\na,human,s,p\nc,robot,s,p\n"
    with pytest.raises(ImportFileError, match=r"^line 4: duplicate id 'a' in the file$"):
        items_import(study=story_study, path=write(tmp_path, "a.csv", dup_first))
    error_first = ITEMS + "a,human,s,p\nc,robot,s,p\na,human,s,p\n"
    with pytest.raises(ImportFileError, match=r"^line 3: unknown group 'robot'"):
        items_import(study=story_study, path=write(tmp_path, "b.csv", error_first))
    same_row = ITEMS + "a,human,s,p\na,robot,s,p\n"  # the in-memory check tested the id before the group
    with pytest.raises(ImportFileError, match=r"^line 3: duplicate id 'a' in the file$"):
        items_import(study=story_study, path=write(tmp_path, "c.csv", same_row))
    assert Item.objects.count() == 0


def test_a_hash_collision_never_refuses_a_good_file(story_study, tmp_path, monkeypatch):
    monkeypatch.setattr(duplicates, "key_hash", lambda key: 42)  # every key collides
    items_import(study=story_study, path=write(tmp_path, "ok.csv", ITEMS + "a,human,s,p\nb,human,s,p\nc,gpt2,s,p\n"))
    assert Item.objects.count() == 3
    before = snapshot()
    with pytest.raises(ImportFileError, match=r"^line 3: duplicate id 'd'"):
        items_import(study=story_study, path=write(tmp_path, "dup.csv", ITEMS + "d,human,s,p\nd,human,s,p\n"))
    assert snapshot() == before


def test_a_duplicate_rating_in_a_later_batch_changes_nothing(story_study, tmp_path, monkeypatch):
    from annotations.importing import services as importing

    monkeypatch.setattr(importing, "BATCH", 3)
    rows = "".join(f"s{n},human,cohesiveness,human,t{n},3\n" for n in range(10))
    path = write(tmp_path, "r.csv", RATINGS + rows + "s2,human,cohesiveness,human,t2,4\n")
    before = snapshot()
    with pytest.raises(ImportFileError, match=r"^line 12: duplicate rating: item 's2'"):
        ratings_import(study=story_study, path=path)
    assert snapshot() == before


def test_ratings_written_in_several_batches_are_all_there_once(story_study, tmp_path, monkeypatch):
    from annotations.importing import services as importing
    from annotations.models import HumanRating
    from llmjudge.models import LLMRating

    monkeypatch.setattr(importing, "BATCH", 4)
    human = "".join(f"s{n % 5},human,cohesiveness,human,t{n // 5},3\n" for n in range(15))
    llm = "".join(f"s{n % 5},human,cohesiveness,gpt,{n // 5},2\n" for n in range(10))
    result = ratings_import(study=story_study, path=write(tmp_path, "r.csv", RATINGS + human + llm))
    assert (result.created_items, result.created_ratings, result.pools) == (5, 25, ("human", "gpt"))
    assert HumanRating.objects.count() == 15 and LLMRating.objects.count() == 10
    assert list(Item.objects.order_by("position").values_list("external_id", flat=True)) == [f"s{n}" for n in range(5)]
    before = snapshot()
    later = "".join(f"s{n},human,cohesiveness,human,new{n},3\n" for n in range(5))  # the clash is in batch 3
    with pytest.raises(ImportFileError, match=r"^rater 't2' already rated item 's4' on 'cohesiveness'"):
        ratings_import(study=story_study, path=write(tmp_path, "again.csv", RATINGS + later + human[-34:]))
    assert snapshot() == before


def test_reading_a_file_keeps_far_less_than_the_file_in_memory(story_study, tmp_path):
    # About 6 MB of items: the whole-file reading held the bytes and the text (12 MB and more).
    buffer = io.StringIO()
    buffer.write(ITEMS)
    for n in range(30_000):
        buffer.write(f"i{n},human,{'Story text that goes on. ' * 8},p{n}\n")
    path = write(tmp_path, "big.csv", buffer.getvalue())
    size = path.stat().st_size
    assert size > 6_000_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in file_rows.read_rows(path))
        _current, reading_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        items_import(study=story_study, path=path)
        _current, import_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 30_000 and Item.objects.count() == 30_000
    assert reading_peak < size / 4, f"reading peaked at {reading_peak} bytes for a {size}-byte file"
    assert import_peak < size, f"the import peaked at {import_peak} bytes for a {size}-byte file"
