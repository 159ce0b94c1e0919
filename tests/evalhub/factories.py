"""Small builders of studies with ratings, written through the real import services."""
from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from annotations.importing.services import RATING_COLUMNS
from annotations.models import Study
from evalhub.imports.ratings import ratings_import
from llmjudge.models import Judge, JudgeRun, LLMRating


def import_long(study: Study, rows: Iterable[Sequence[Any]], tmp_path: Path, name: str = "ratings.csv") -> None:
    """Import (item, group, question, pool, rater, score) rows through ratings_import."""
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(RATING_COLUMNS)
        writer.writerows(rows)
    ratings_import(study=study, path=path)


def live_run(study: Study, judge_name: str, ratings: Iterable[tuple[str, str, int, float | None, str]]) -> JudgeRun:
    """A judge run with (item external id, question key, sample, score, status) ratings, as a live run stores them."""
    judge, _ = Judge.objects.get_or_create(name=judge_name, defaults={"backend": Judge.Backend.FAKE})
    run = JudgeRun.objects.create(study=study, judge=judge, status=JudgeRun.Status.DONE)
    items = {i.external_id: i for i in study.items.all()}
    questions = {q.key: q for q in study.questions.all()}
    LLMRating.objects.bulk_create(
        LLMRating(run=run, item=items[item], question=questions[question], sample=sample, score=score, status=status,
                  raw="" if score is None else f"{score}")
        for item, question, sample, score, status in ratings
    )
    return run
