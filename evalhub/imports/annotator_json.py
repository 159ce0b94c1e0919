"""The annotator-keyed JSON import: ``{annotator: {instance: label}}`` and ``{llm: {instance: label}}``.

The format of the alternative annotator test's repository (``../shared/data/AltTest``) and of many
papers' releases. It writes human raters and imported LLM pools, so it lives in evalhub, the layer that
sees both apps, and writes through the same writers as ``import_ratings``
(``annotations.importing.services.human_ratings_write``, ``llmjudge.runs.imported.llm_pool_ratings_write``).

Instances. An id ``<item>__<question>`` is that item and question when the study has that question;
otherwise the whole id is the item and the study's single question is used (a study with several
questions then refuses it).

Items that do not exist. Such files carry no item texts. Without ``create`` an unknown item is an
error (import the items first). With ``create`` the study must not exist yet: it is created from the
files, its scale derived from the labels (numbers: a Likert scale from the smallest to the largest;
strings: a categorical study whose labels are the sorted distinct strings, so codes match
``tests.support.alt_test_data``'s order), its questions given by ``questions`` (``["auto"]``: the distinct
``__<question>`` suffixes of the ids), and its items created with an empty text field.

Labels. A Likert or pairwise study takes numbers on its scale (a pairwise study also "A", "B",
"tie"); a categorical study takes its label names. An LLM's label may be a list: one label per sample.

All or nothing, like the other imports: both files are read and every label checked before anything
is written, and the writes share one transaction. Errors are one line and name the file, the
annotator (or LLM) and the instance.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotations.importing.services import BATCH, HUMAN_POOL, ImportFileError, ImportResult, human_ratings_write, shown
from annotations.models import Item, Question, Rater, Study
from annotations.studies import StudySpecError, study_create
from llmjudge.models import Judge
from llmjudge.runs.imported import llm_pool_ratings_write

AUTO_QUESTIONS = "auto"
DEFAULT_QUESTION = "label"
CREATED_GROUP = "imported"
CREATED_FIELD = "text"
_QUESTION_KEY = re.compile(r"[-a-zA-Z0-9_]{1,100}")

Label = str | float
Table = dict[str, dict[str, list[Label]]]  # who -> instance -> labels (one per sample; humans have one)


class _Pairs(list):
    """A JSON object as its (key, value) pairs, so that a key given twice is seen rather than dropped."""


@dataclass(frozen=True)
class AnnotationFile:
    path: Path
    owner: str  # "annotator" or "LLM": how its errors name the keys of the outer object
    table: Table


def _read(path: Path, owner: str) -> AnnotationFile:
    def fail(reason: str) -> ImportFileError:
        return ImportFileError(f"{path}: {reason}")

    if not path.is_file():
        raise fail("no such file")
    size = path.stat().st_size
    if size > settings.IMPORT_MAX_BYTES:
        raise fail(f"the file is {size} bytes, above the limit of {settings.IMPORT_MAX_BYTES} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"), object_pairs_hook=_Pairs)
    except UnicodeDecodeError as exc:
        raise fail(f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise fail(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except (RecursionError, ValueError):
        raise fail("not JSON (nested too deeply, or a number with too many digits)") from None
    shape = f"expected an object {{{owner}: {{instance: label}}}}"
    if not isinstance(data, _Pairs):
        raise fail(shape)
    table: Table = {}
    for who, ratings in data:
        if who in table:
            raise fail(f"{owner} {shown(who)} appears twice")
        if not who.strip() or who != who.strip():
            raise fail(f"{owner} {shown(who)}: a name must be non-empty, without outer spaces")
        if not isinstance(ratings, _Pairs):
            raise fail(f"{owner} {shown(who)}: {shape}")
        if not ratings:
            raise fail(f"{owner} {shown(who)} has no labels")
        labels: dict[str, list[Label]] = {}
        for instance, value in ratings:
            where = f"{owner} {shown(who)}, instance {shown(instance)}"
            if instance in labels:
                raise fail(f"{where} appears twice")
            if not instance.strip():
                raise fail(f"{owner} {shown(who)}: an empty instance id")
            is_list = isinstance(value, list) and not isinstance(value, _Pairs)  # _Pairs is an object
            samples = value if is_list and owner == "LLM" else [value]
            if not samples:
                raise fail(f"{where}: an empty list of samples")
            labels[instance] = [_label(v, f"{path}: {where}") for v in samples]
        table[who] = labels
    if not table:
        raise fail(f"no {owner}s; {shape}")
    return AnnotationFile(path=path, owner=owner, table=table)


def _label(value: Any, where: str) -> Label:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    kind = "an object" if isinstance(value, _Pairs) else "a list" if isinstance(value, list) else repr(value)
    raise ImportFileError(f"{where}: label {kind[:60]} is not a string or a finite number")


def _labels(files: list[AnnotationFile]) -> Iterator[tuple[AnnotationFile, str, str, Label]]:
    for file in files:
        for who, ratings in file.table.items():
            for instance, samples in ratings.items():
                for label in samples:
                    yield file, who, instance, label


def _derived_scale(files: list[AnnotationFile]) -> dict[str, Any]:
    """The study kind and scale the labels call for; mixed numbers and strings are refused."""
    strings = sorted({label for _, _, _, label in _labels(files) if isinstance(label, str)})
    numbers = [label for _, _, _, label in _labels(files) if not isinstance(label, str)]
    if strings and numbers:
        file, who, instance, label = next(x for x in _labels(files) if not isinstance(x[3], str))
        raise ImportFileError(f"{file.path}: {file.owner} {shown(who)}, instance {shown(instance)}: label "
                              f"{label:g} is a number, but other labels are strings (e.g. {strings[0]!r}); "
                              "a study's labels are all numbers (Likert) or all names (categorical)")
    if strings:
        return {"kind": Study.Kind.CATEGORICAL, "scale": {"labels": strings}}
    low, high = math.floor(min(numbers)), math.ceil(max(numbers))
    if low == high:
        raise ImportFileError(f"every label is {low}: a scale needs at least two values")
    return {"kind": Study.Kind.LIKERT, "scale": {"min": low, "max": high}}


def _question_keys(files: list[AnnotationFile], questions: list[str]) -> list[str]:
    if questions != [AUTO_QUESTIONS]:
        keys = questions or [DEFAULT_QUESTION]
    else:
        keys = []
        for file, who, instance, _ in _labels(files):
            if "__" not in instance:
                raise ImportFileError(f"{file.path}: {file.owner} {shown(who)}, instance {shown(instance)}: "
                                      "--questions auto needs ids <item>__<question>")
            key = instance.rsplit("__", 1)[1]
            if key not in keys:
                keys.append(key)
    for key in keys:
        if not _QUESTION_KEY.fullmatch(key):
            raise ImportFileError(f"question {shown(key)} must be letters, digits, - and _ (at most 100)")
    if len(set(keys)) != len(keys):
        raise ImportFileError(f"question keys {keys} name one question twice")
    return keys


def _spec(slug: str, scale: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """A study for data with no item texts: one empty text field, the questions named by their keys."""
    if scale["kind"] == Study.Kind.CATEGORICAL:
        answer = "Answer with one of: " + ", ".join(scale["scale"]["labels"]) + "."
    else:
        answer = f"Answer with a number from {scale['scale']['min']} to {scale['scale']['max']}."
    escaped = answer.replace("{", "{{").replace("}", "}}")  # the template is str.format'ed
    return {
        "title": slug, "item_fields": [CREATED_FIELD],
        "llm_template": f"{{{CREATED_FIELD}}}\n\n{{question}}\n{escaped}",
        "human_instruction": f"Imported annotations. {answer}", "ordering": Study.Ordering.FIXED,
        "questions": [{"key": key, "text": key} for key in keys], **scale,
    }


def _score(study: Study, label: Label) -> float | str:
    """The score `study` stores for `label`, or the reason it cannot hold it."""
    if study.is_categorical:
        if not isinstance(label, str):
            return f"label {label:g} is a number; the study's labels are {', '.join(study.category_labels())}"
        code = study.category_code(label)
        return float(code) if code is not None else (
            f"label {shown(label)} is not one of the study's labels ({', '.join(study.category_labels())})")
    if isinstance(label, str):
        choice = study.pairwise_score(label) if study.is_pairwise else None
        if choice is not None:
            return float(choice)
        try:
            number = float(label)
        except ValueError:
            return f"label {shown(label)} is not a number (the study's scale is {study.scale_min}-{study.scale_max})"
    else:
        number = label
    if not (math.isfinite(number) and study.scale_min <= number <= study.scale_max):
        return f"label {number:g} is outside the scale {study.scale_min}-{study.scale_max}"
    return number


def _instance(instance: str, questions: dict[str, Any]) -> tuple[str, str] | None:
    """(item, question) of an instance id, None when it names no question and the study has several."""
    item, sep, key = instance.rpartition("__")
    if sep and item and key in questions:
        return item, key
    if len(questions) == 1:
        return instance, next(iter(questions))
    return None


def annotations_import(
    *, slug: str, humans: Path, llm: Path | None = None, create: bool = False, questions: list[str] | None = None,
    owner: User | None = None,
) -> tuple[Study, ImportResult]:
    """Import annotator-keyed human labels and, optionally, LLM labels (one imported pool per LLM)."""
    files = [_read(humans, "annotator")] + ([_read(llm, "LLM")] if llm is not None else [])
    target = _target(slug, files, create=create, questions=questions or [])
    rows = _checked_rows(files, target, slug=slug, create=create)
    with transaction.atomic():
        study = target.study
        if target.spec is not None:
            try:
                study = study_create(slug=slug, spec=target.spec, owner=owner)
            except StudySpecError as exc:
                raise ImportFileError(f"cannot create study {slug!r}: {exc}") from None
        position = study.items.count()
        created = Item.objects.bulk_create(
            [Item(study=study, external_id=e, group=CREATED_GROUP, fields={CREATED_FIELD: ""}, position=position + n)
             for n, e in enumerate(rows.new_items)],
            batch_size=BATCH,
        )
        items = {**target.items, **{i.external_id: i for i in created}}
        question_rows: dict[str, Question] = {q.key: q for q in study.questions.all()}
        n_human = human_ratings_write(study=study, rows=rows.human, items=items, questions=question_rows)
        n_llm = sum(
            llm_pool_ratings_write(study=study, pool=pool, rows=pool_rows, items=items, questions=question_rows)
            for pool, pool_rows in rows.llm.items()
        )
    return study, ImportResult(created_items=len(created), created_ratings=n_human + n_llm,
                               pools=tuple(([HUMAN_POOL] if rows.human else []) + list(rows.llm)))


@dataclass(frozen=True)
class _Target:
    """The study the files go to: an existing one, or (``spec`` set) an unsaved one that answers the scale
    questions exactly as the study created from ``spec`` will; its questions and items by key."""

    study: Study
    spec: dict[str, Any] | None
    questions: dict[str, Any]
    items: dict[str, Item]


def _target(slug: str, files: list[AnnotationFile], *, create: bool, questions: list[str]) -> _Target:
    study = Study.objects.filter(slug=slug).first()
    if create:
        if study is not None:
            raise ImportFileError(f"study {slug!r} already exists; leave out --create to import into it")
        spec = _spec(slug, _derived_scale(files), _question_keys(files, questions))
        names = spec["scale"].get("labels", [])
        unsaved = Study(slug=slug, kind=spec["kind"], scale_min=spec["scale"].get("min", 1),
                        scale_max=spec["scale"].get("max", len(names)),
                        scale_labels={str(code): name for code, name in enumerate(names, start=1)})
        return _Target(unsaved, spec, {q["key"]: None for q in spec["questions"]}, {})
    if study is None:
        raise ImportFileError(f"no study {slug!r}; create it first, or pass --create to derive it from the files")
    if questions:
        raise ImportFileError("--questions is only for --create (an existing study has its questions)")
    return _Target(study, None, {q.key: q for q in study.questions.all()},
                   {i.external_id: i for i in study.items.all()})


@dataclass(frozen=True)
class _Rows:
    new_items: dict[str, None]  # insertion-ordered set of the items --create makes
    human: list[tuple[str, str, str, float, str]]
    llm: dict[str, list[tuple[str, str, int, float, str]]]


def _checked_rows(files: list[AnnotationFile], target: _Target, *, slug: str, create: bool) -> _Rows:
    """Every label of both files checked and turned into the writers' rows; nothing is written here."""
    rows = _Rows({}, [], {})
    seen: dict[tuple[str, str, str, str], str] = {}  # (pool, who, item, question) -> instance id
    for file, who, ratings in ((f, w, r) for f in files for w, r in f.table.items()):
        if file.owner == "annotator":
            _check_length(file, who, Rater._meta.get_field("external_id").max_length)
        else:
            _check_length(file, who, Judge._meta.get_field("name").max_length)
            if who == HUMAN_POOL:
                raise ImportFileError(f"{file.path}: LLM {who!r}: the name is the human pool's; rename it")
        for instance, samples in ratings.items():
            where = f"{file.path}: {file.owner} {shown(who)}, instance {shown(instance)}"
            mapped = _instance(instance, target.questions)
            if mapped is None:
                raise ImportFileError(f"{where}: the id names none of the study's questions "
                                      f"({', '.join(target.questions)}); expected <item>__<question>")
            item, question = mapped
            item_max = Item._meta.get_field("external_id").max_length
            if item_max is not None and len(item) > item_max:
                raise ImportFileError(f"{where}: item id longer than {item_max}")
            if item not in target.items:
                if not create:
                    raise ImportFileError(f"{where}: unknown item {shown(item)} in study {slug!r} (import the "
                                          "items first, or create the study from the files with --create)")
                rows.new_items[item] = None
            key = (file.owner, who, item, question)
            if key in seen:
                raise ImportFileError(f"{where}: item {shown(item)}, question {question!r} is also "
                                      f"instance {shown(seen[key])}: one label per item and question")
            seen[key] = instance
            for sample, label in enumerate(samples):
                score = _score(target.study, label)
                if isinstance(score, str):
                    raise ImportFileError(f"{where}: {score}")
                if file.owner == "annotator":
                    rows.human.append((item, question, who, score, ""))
                else:
                    rows.llm.setdefault(who, []).append((item, question, sample, score, ""))
    return rows


def _check_length(file: AnnotationFile, who: str, limit: int | None) -> None:
    if limit is not None and len(who) > limit:
        raise ImportFileError(f"{file.path}: {file.owner} {shown(who)}: the name is longer than {limit} characters")
