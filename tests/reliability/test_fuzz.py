"""Fuzzing the score parser and the importers with hypothesis (derandomized, so CI runs are repeatable).

The parser never raises and always returns a score on the scale or None with a valid status; it
stays fast on degenerate answers. The importers raise nothing but ImportFileError on arbitrary bytes;
a refused file changes no row of any table, and an accepted one only adds valid rows.
"""
from __future__ import annotations

import json
import math
import signal
import string
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotations.importing.services import ImportFileError, items_import
from annotations.models import HumanRating, Item
from evalhub.imports.ratings import ratings_import
from llmjudge.models import LLMRating
from llmjudge.parsing import parse_pairwise, parse_score
from tests.support.snapshots import database_snapshot

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# Each importer example takes database snapshots; fewer examples keep PostgreSQL runs short.
FUZZ_IMPORTS = settings(FUZZ, max_examples=100)
SCALES = st.sampled_from([(1, 5), (1, 7), (0, 10), (1, 3)])

# --- the score parser

NUMBERISH = st.one_of(
    st.integers(-20, 20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["4.0.1", " 4 ", "four", "four and a half", "\u2212" "3", "½", "4,5", "1e3", "3-4", "0x4",
                     "nan", "inf", "-0", "4.", ".5", "10/10", "", "IV", "٤"]),
)
LABELS = st.sampled_from(["Rating: ", "Score: ", "**Rating:** ", "Final score: ", "[RESULT] ", "Grade = ",
                          "I would rate it a ", "I'd give it ", "", "Overall rating is "])
DENOMINATORS = st.sampled_from(["", "/5", "/7", "/10", " out of 5", " out of ten", " stars", ".", "!"])
NEAR_MISS = st.builds(lambda pre, label, num, den, post: f"{pre}{label}{num}{den}{post}",
                      st.text(max_size=40), LABELS, NUMBERISH, DENOMINATORS, st.text(max_size=40))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20) | NUMBERISH,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
JSON_ANSWERS = st.builds(
    lambda key, value, extra, fence: (lambda body: f"```json\n{body}\n```" if fence else body)(
        json.dumps({key: value, **extra}, allow_nan=True)),
    st.sampled_from(["score", "Score", "rating", "grade", "explanation"]), JSON_VALUES,
    st.dictionaries(st.sampled_from(["explanation", "rationale", "feedback"]), JSON_VALUES, max_size=2),
    st.booleans(),
)
ANSWERS = st.one_of(st.text(max_size=300), NEAR_MISS, JSON_ANSWERS,
                    st.lists(NEAR_MISS | JSON_ANSWERS | st.text(max_size=30), max_size=4).map("\n".join))


@FUZZ
@given(text=ANSWERS, scale=SCALES, adversarial=st.booleans())
def test_parse_score_never_raises_and_returns_a_score_on_the_scale_or_none(text, scale, adversarial):
    low, high = scale

    result = parse_score(text, scale_min=low, scale_max=high, adversarial=adversarial)

    assert result.status in ("ok", "unparseable", "refused")
    assert isinstance(result.rationale, str)
    if result.status == "ok":
        assert isinstance(result.score, float) and math.isfinite(result.score) and low <= result.score <= high
    else:
        assert result.score is None


@FUZZ
@given(label=st.sampled_from(["Rating: ", "Score: ", "Final rating: ", "[RESULT] ", "**Score:** "]),
       score=st.integers(-3, 12), noise=st.text(alphabet=string.ascii_letters + " ,", max_size=30))
def test_a_well_formed_rating_on_a_five_point_scale_is_read_exactly(label, score, noise):
    result = parse_score(f"{noise}\n{label}{score}/5")

    expected = (float(score), "ok") if 1 <= score <= 5 else (None, "unparseable")
    assert (result.score, result.status) == expected


@FUZZ
@given(value=JSON_VALUES)
def test_a_json_score_of_any_type_is_a_number_on_the_scale_or_unparseable(value):
    result = parse_score(json.dumps({"score": value}, allow_nan=True))

    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1 <= value <= 5:
        assert (result.score, result.status) == (float(value), "ok")
    elif not isinstance(value, str):
        assert (result.score, result.status) == (None, "unparseable")
    else:
        assert result.status in ("ok", "unparseable") and (result.score is None) == (result.status != "ok")


@FUZZ
@given(text=ANSWERS | st.builds(lambda label, choice, post: f"{label}{choice}{post}",
                                st.sampled_from(["[RESULT] ", "[[", "Winner: ", "Verdict: **", "Response "]),
                                st.sampled_from(["A", "B", "C", "tie", "draw", "a]]", "Z", "", "AB"]),
                                st.text(max_size=30)))
def test_parse_pairwise_never_raises_and_returns_a_choice_or_none(text):
    result = parse_pairwise(text)

    assert result.status in ("ok", "unparseable", "refused")
    assert result.choice in ("A", "B", "tie", None)
    assert (result.choice is None) == (result.status != "ok")


@contextmanager
def time_limit(seconds: float):
    def expire(*_: object) -> None:
        raise TimeoutError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# Each took from seconds to forever before the parser's quantifiers were made possessive
# ("score" + 60 spaces + "x": 15 s; + 2,000 spaces: never ended).
DEGENERATE = [
    ("score", " ", "x"), ("Final score", "*", "x"), ("[score", "\t", "x"), ("[RESULT]", " ", "x"), ("[RESULT]", "\n", ""),
    ("[[", " ", "x"), ("**", " ", "x"), ("4", " ", "x"), ("four", "\t", "x"), ("I would rate it", " ", "x"),
    ("{", " ", "x"), ('{"score":', "\n", "x"), ("```json", " ", "x"), ("winner", " ", "x"), ("title", " ", "x"),
    ("Rating:", " *", "x"), ("1.", "\n", "x"), ("", " ", "x"),
]


@pytest.mark.parametrize(("prefix", "run", "suffix"), DEGENERATE, ids=[f"{p!r}+{r!r}" for p, r, _ in DEGENERATE])
def test_degenerate_answers_with_long_runs_are_parsed_in_linear_time(prefix, run, suffix):
    text = prefix + run * (20_000 // len(run)) + suffix

    with time_limit(3):
        score, choice = parse_score(text), parse_pairwise(text)

    assert score.status in ("ok", "unparseable", "refused") and choice.status in ("ok", "unparseable", "refused")


# --- the importers

ITEM_TOKENS = ["id", "group", "story", "prompt", "human", "gpt2", "robot", "a", "b", "a", "", " ", "Once, upon",
               '"', '""', "'", "\ufeff", "\x00", "\u2028", "x" * 300, "{", "}", "[", "\\", "é"]
RATING_TOKENS = ["item", "group", "question", "pool", "rater", "score", "rationale", "human", "gpt2", "gpt4",
                 "cohesiveness", "relevance", "humour", "s1", "s2", "t", "0", "00", "-1", "3", "4.5", "6", "nan", "inf",
                 "4.0.1", " 4 ", "", '"', "\x00", "2147483648", "r" * 201]
DELIMITERS = st.sampled_from([",", ";", "\t", "|", ", "])
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"])


def table_file(header: list[str], tokens: list[str]) -> st.SearchStrategy[bytes]:
    cells = st.sampled_from(tokens) | st.text(max_size=8)
    rows = st.lists(st.lists(cells, min_size=len(header) - 1, max_size=len(header) + 1), max_size=6)
    return st.builds(
        lambda head, body, delimiter, newline, encoding: newline.join(
            delimiter.join(row) for row in [head, *body]).encode(encoding, errors="replace"),
        st.just(header) | st.permutations(header) | st.lists(st.sampled_from(tokens), max_size=len(header) + 1),
        rows, DELIMITERS, NEWLINES, ENCODINGS,
    )


def jsonl_file(keys: list[str]) -> st.SearchStrategy[bytes]:
    objects = st.dictionaries(st.sampled_from(keys), JSON_VALUES | st.sampled_from(ITEM_TOKENS + RATING_TOKENS),
                              min_size=len(keys) - 2, max_size=len(keys))
    line = objects.map(lambda obj: json.dumps(obj, allow_nan=True)) | st.text(max_size=30)
    return st.lists(line, max_size=5).map(lambda lines: "\n".join(lines).encode("utf-8", errors="surrogatepass"))


ITEM_FILES = st.one_of(st.binary(max_size=500), table_file(["id", "group", "story", "prompt"], ITEM_TOKENS),
                       jsonl_file(["id", "group", "story", "prompt", "extra"]))
RATING_FILES = st.one_of(
    st.binary(max_size=500),
    table_file(["item", "group", "question", "pool", "rater", "score", "rationale"], RATING_TOKENS),
    jsonl_file(["item", "group", "question", "pool", "rater", "score", "rationale"]),
)


def import_once(service, study, tmp_path: Path, data: bytes, suffix: str) -> tuple[dict, dict]:
    """Import inside a savepoint rolled back afterwards, so every example starts from the same database."""
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    with transaction.atomic():
        before = database_snapshot()
        try:
            service(study=study, path=path)
        except ImportFileError as exc:
            assert "\n" not in str(exc) and "\r" not in str(exc)
            assert database_snapshot() == before
        after = database_snapshot()
        transaction.set_rollback(True)
    return before, after


def new_rows(before: dict, after: dict, model) -> list[int]:
    label = model._meta.label_lower
    return sorted({row[0] for row in after[label]} - {row[0] for row in before[label]})


@FUZZ_IMPORTS
@given(data=ITEM_FILES, suffix=st.sampled_from([".csv", ".jsonl", ".tsv", ""]))
def test_items_import_raises_only_import_file_error_and_imports_only_valid_items(story_study, tmp_path, data, suffix):
    before, after = import_once(items_import, story_study, tmp_path, data, suffix)

    added = [row for row in after["annotations.item"] if row[0] in new_rows(before, after, Item)]
    columns = [f.attname for f in Item._meta.concrete_fields]
    for row in (dict(zip(columns, values, strict=True)) for values in added):
        assert row["study_id"] == story_study.pk
        assert 0 < len(row["external_id"]) <= 200 and row["external_id"] == row["external_id"].strip()
        assert row["group"] in story_study.groups
        assert set(row["fields"]) == set(story_study.item_fields) and all(v.strip() for v in row["fields"].values())
        assert "\x00" not in json.dumps(row["fields"], ensure_ascii=False)


@FUZZ_IMPORTS
@given(data=RATING_FILES, suffix=st.sampled_from([".csv", ".jsonl", ""]))
def test_ratings_import_raises_only_import_file_error_and_imports_only_valid_ratings(story_study, tmp_path, data,
                                                                                   suffix):
    before, after = import_once(ratings_import, story_study, tmp_path, data, suffix)

    low, high = story_study.scale_min, story_study.scale_max
    for model in (HumanRating, LLMRating):
        columns = [f.attname for f in model._meta.concrete_fields]
        added = set(new_rows(before, after, model))
        for values in after[model._meta.label_lower]:
            row = dict(zip(columns, values, strict=True))
            if row["id"] in added:
                assert math.isfinite(row["score"]) and low <= row["score"] <= high
                assert row.get("status", "ok") == "ok"
                assert 0 <= row.get("sample", 0) <= 2**31 - 1


# Found by the fuzz test above: the label's "-" separator used to swallow the sign ("[RESULT] -1" -> 1).
@pytest.mark.parametrize("text", ["[RESULT] -1", "[RESULT] -1/5", "Rating -2/5", "[RESULT]-3"])
def test_a_negative_score_after_a_label_is_unparseable_not_its_absolute_value(text):
    result = parse_score(text)

    assert (result.score, result.status) == (None, "unparseable")
