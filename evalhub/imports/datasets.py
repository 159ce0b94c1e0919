"""Importers for published multi-rater datasets: HANNA and JUDGE-BENCH (formats in ../shared/data/SOURCES.md).

Each converts its file into EvalHub's long rating format (item, group, question, pool, rater, score)
and hands it to ``evalhub.imports.ratings.ratings_import``, so validation, the all-or-nothing
transaction and the LLM-pool storage are the ones every other import uses. Only the study set-up
(questions, scale, groups) is specific to the dataset. Rater indices in both datasets are positions
("the 1st annotation row of the story"), not persistent people, hence the rater names "position-k".
"""

from __future__ import annotations

import ast
import csv
import json
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from annotations.importing.services import BATCH, RATING_COLUMNS, ImportFileError, ImportResult
from annotations.models import Study
from annotations.studies import StudySpecError, study_create
from evalhub.imports.ratings import ratings_import
from llmjudge.models import LLMRating
from llmjudge.runs.imported import imported_run_get_or_create

HANNA_CRITERIA = {  # column code -> (question key, the HANNA annotation guideline's question)
    "RE": ("relevance", "How well does the story match its prompt?"),
    "CH": ("coherence", "How much does the story make sense?"),
    "EM": ("empathy", "How well do you understand the character's emotions?"),
    "SU": ("surprise", "How surprising is the end of the story?"),
    "EG": ("engagement", "How much did you engage with the story?"),
    "CX": ("complexity", "How elaborate is the story?"),
}
HANNA_LLMS = ("Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT")
HANNA_HUMAN_SYSTEM = "Human"


class DatasetError(ValueError):
    """The dataset file is not in the expected format; the message says what is wrong."""


def _write_long_csv(rows: Iterable[Sequence[object]], directory: str) -> Path:
    path = Path(directory) / "ratings.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(RATING_COLUMNS)
        writer.writerows(rows)
    return path


def _create_study(slug: str, spec: dict[str, Any], owner: User | None) -> Study:
    try:
        return study_create(slug=slug, spec=spec, owner=owner)
    except StudySpecError as exc:
        raise DatasetError(str(exc)) from None


def _import_rows(study: Study, rows: Sequence[Sequence[object]]) -> ImportResult:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            return ratings_import(study=study, path=_write_long_csv(rows, tmp))
        except ImportFileError as exc:
            raise DatasetError(f"converted ratings were refused: {exc}") from None


# ---------------------------------------------------------------------------
# HANNA


def _hanna_table(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"no such file: {path}")
    csv.field_size_limit(sys.maxsize)  # every cell holds a JSON list of 96 numbers
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        needed = ["Model"] + [f"Human {k} {code}" for k in (1, 2, 3) for code in HANNA_CRITERIA]
        missing = [c for c in needed if c not in header]
        if missing:
            raise DatasetError(f"not a HANNA score file: missing column(s) {', '.join(missing[:4])}")
        table = []
        for line, row in enumerate(reader, start=2):
            parsed: dict[str, Any] = {"Model": row["Model"]}
            for column, value in row.items():
                if column == "Model" or not (column.startswith("Human ") or column.split(" ")[0] in HANNA_LLMS):
                    continue
                try:
                    parsed[column] = json.loads(value)
                except json.JSONDecodeError:
                    raise DatasetError(f"line {line}, column {column!r}: not a JSON list") from None
            table.append(parsed)
    return table


def hanna_import(
    *, path: Path, slug: str = "hanna", prompts: Sequence[int] = (1,), owner: User | None = None
) -> Study:
    """Create study `slug` from HANNA's hanna_metric_scores_llm.csv.

    Items: one per story, id "<system>/<k>" (k = prompt position 1-96), group = the generating system.
    Human pool: the three annotation positions, raters "position-1".."position-3", 1-5 per criterion.
    LLM pools: one per model and Eval-Prompt in `prompts`, named "<model> p<k>"; each value is already the
    mean of three sampled answers (so thirds), stored as the pool's single sample 0.
    Contrasts: Human-written stories vs each system.
    """
    table = _hanna_table(path)
    systems = [row["Model"] for row in table]
    if HANNA_HUMAN_SYSTEM not in systems:
        raise DatasetError("not a HANNA score file: no 'Human' row")
    for k in prompts:
        if k not in (1, 2, 3, 4):
            raise DatasetError(f"HANNA has Eval-Prompts 1-4, not {k}")
    spec = {
        "title": "HANNA: human and LLM ratings of generated stories (Chhun et al. 2022, 2024)",
        "item_fields": ["story"],
        "llm_template": "Story:\n{story}\n(End of story)\n{question}",
        "human_instruction": "Rate the story on each criterion.",
        "scale": {"min": 1, "max": 5, "labels": {"1": "1 (lowest)", "5": "5 (highest)"}},
        "groups": systems,
        "contrasts": [[HANNA_HUMAN_SYSTEM, s] for s in systems if s != HANNA_HUMAN_SYSTEM],
        "ordering": "fixed",
        "questions": [{"key": key, "text": text} for key, text in HANNA_CRITERIA.values()],
    }
    rows: list[tuple[object, ...]] = []
    # HANNA's pipeline averaged failed parses as 0, so some LLM means fall below the scale: they are stored
    # as unparseable ratings of the pool (counted, never scored). Means inside the scale are kept as published.
    outside: dict[str, list[tuple[str, str, float]]] = {}
    for row in table:
        system = row["Model"]
        for code, (key, _) in HANNA_CRITERIA.items():
            columns = [(f"Human {k} {code}", "human", f"position-{k}") for k in (1, 2, 3)]
            columns += [(f"{llm} {code} {p}", f"{llm} p{p}", "0") for llm in HANNA_LLMS for p in prompts]
            for column, pool, rater in columns:
                if column not in row:
                    raise DatasetError(f"not a HANNA score file: missing column {column!r}")
                for k, score in enumerate(row[column], start=1):
                    if score is None:
                        continue
                    if pool != "human" and not 1 <= score <= 5:
                        outside.setdefault(pool, []).append((f"{system}/{k}", key, float(score)))
                        continue
                    rows.append((f"{system}/{k}", system, key, pool, rater, repr(float(score))))
    with transaction.atomic():
        study = _create_study(slug, spec, owner)
        _import_rows(study, rows)
        _unparseable_write(study, outside)
    return study


def _unparseable_write(study: Study, outside: dict[str, list[tuple[str, str, float]]]) -> None:
    items = {i.external_id: i for i in study.items.all()}
    questions = {q.key: q for q in study.questions.all()}
    for pool, values in outside.items():
        run = imported_run_get_or_create(study=study, pool=pool)
        LLMRating.objects.bulk_create(
            [LLMRating(run=run, item=items[item], question=questions[key], sample=0, score=None,
                       status=LLMRating.Status.UNPARSEABLE, model=pool,
                       raw=f"published mean {value!r} is outside the scale 1-5")
             for item, key, value in values],
            batch_size=BATCH,
        )


# ---------------------------------------------------------------------------
# JUDGE-BENCH


def _metric_key(metric: str) -> str:
    key = re.sub(r"[^a-z0-9]+", "-", metric.lower()).strip("-")
    return key or "metric"


def judgebench_import(*, path: Path, slug: str | None = None, owner: User | None = None) -> Study:
    """Create a study from one JUDGE-BENCH data file (graded metrics only).

    Items: one per instance, id = the instance id, group = the dataset name. Questions: one per graded
    metric (key = the metric name in lower case, text = its prompt). Scale: the smallest `worst` to the
    largest `best`. Human pool: raters "position-k" for the k-th score of an instance's list.
    Categorical metrics (labels such as Yes/No/Unsure) are not Likert ratings and are refused when they are
    all the file has, skipped otherwise.
    """
    if not path.is_file():
        raise DatasetError(f"no such file: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not {"dataset", "annotations", "instances"} <= set(data):
        raise DatasetError("not a JUDGE-BENCH file: expected keys dataset, annotations, instances")
    graded = [a for a in data["annotations"] if a.get("category") == "graded"]
    if not graded:
        raise DatasetError("the file has no graded metric (categorical labels are not Likert ratings)")
    try:
        low = min(int(a["worst"]) for a in graded)
        high = max(int(a["best"]) for a in graded)
    except (KeyError, TypeError, ValueError):
        raise DatasetError("graded metrics need integer 'worst' and 'best'") from None
    dataset = str(data["dataset"])
    keys = {a["metric"]: _metric_key(a["metric"]) for a in graded}
    if len(set(keys.values())) != len(keys):
        raise DatasetError("two metrics map to the same question key")
    spec = {
        "title": f"JUDGE-BENCH {dataset} (Bavaresco et al. 2025)",
        "item_fields": ["instance"],
        "llm_template": "{instance}\n{question}",
        "human_instruction": f"Rate each instance of {dataset}.",
        "scale": {"min": low, "max": high},
        "groups": [dataset],
        "contrasts": [],
        "ordering": "fixed",
        "questions": [{"key": keys[a["metric"]], "text": str(a.get("prompt") or a["metric"])} for a in graded],
    }
    rows: list[tuple[object, ...]] = []
    for n, instance in enumerate(data["instances"], start=1):
        annotations = instance.get("annotations")
        if isinstance(annotations, str):  # some files store a Python literal
            try:
                annotations = ast.literal_eval(annotations)
            except (ValueError, SyntaxError):
                raise DatasetError(f"instance {n}: annotations are neither JSON nor a Python literal") from None
        if not isinstance(annotations, dict):
            raise DatasetError(f"instance {n}: annotations must be an object")
        item_id = str(instance.get("id", n))
        for metric, key in keys.items():
            scores = (annotations.get(metric) or {}).get("individual_human_scores") or []
            for k, score in enumerate(scores, start=1):
                if score is None:
                    continue
                rows.append((item_id, dataset, key, "human", f"position-{k}", score))
    if not rows:
        raise DatasetError("no individual human scores in the file")
    with transaction.atomic():
        study = _create_study(slug or _metric_key(dataset), spec, owner)
        _import_rows(study, rows)
    return study
