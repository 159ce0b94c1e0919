"""Storing ratings of an LLM pool that were produced elsewhere (import_ratings, dataset importers)."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotations.importing.services import BATCH, ImportFileError
from annotations.models import Item, Question, Study
from llmjudge.models import Judge, JudgeRun, LLMRating


def imported_run_get_or_create(*, study: Study, pool: str) -> JudgeRun:
    """The run holding pool `pool` of `study`: a judge with backend "imported" and one finished run.

    The pool's judge belongs to the study's owner, and names are unique per owner: one researcher's pool
    can neither take nor reveal another researcher's judge names (issue 23, finding 8).
    """
    judge, _ = Judge.objects.get_or_create(
        owner=study.owner, name=pool, defaults={"backend": Judge.Backend.IMPORTED, "model": pool, "samples": 1}
    )
    if judge.backend != Judge.Backend.IMPORTED:
        raise ImportFileError(f"pool {pool!r} is the name of one of the study owner's live judges; rename the pool "
                              "to import it")
    run = JudgeRun.objects.filter(study=study, judge=judge).order_by("id").first()
    if run is None:
        now = timezone.now()
        run = JudgeRun.objects.create(
            study=study, judge=judge, status=JudgeRun.Status.DONE, started_at=now, finished_at=now,
            params={"source": "import"},
        )
    return run


@transaction.atomic
def llm_pool_ratings_write(
    *, study: Study, pool: str, rows: list[tuple[str, str, int, float, str]], items: dict[str, Item],
    questions: dict[str, Question],
) -> int:
    """Write (item, question, sample, score, rationale) rows of one LLM pool; refuse any already present."""
    run = imported_run_get_or_create(study=study, pool=pool)
    existing = set(run.ratings.values_list("item__external_id", "question__key", "sample"))
    for item_id, question, sample, _, _ in rows:
        if (item_id, question, sample) in existing:
            raise ImportFileError(
                f"pool {pool!r} already has sample {sample} for item {item_id!r} on {question!r}; "
                "nothing was imported"
            )
    LLMRating.objects.bulk_create(
        [LLMRating(run=run, item=items[item_id], question=questions[question], sample=sample, score=score,
                   status=LLMRating.Status.OK, rationale=note, raw="", model=pool)
         for item_id, question, sample, score, note in rows],
        batch_size=BATCH,
    )
    total = run.ratings.count()
    JudgeRun.objects.filter(pk=run.pk).update(calls_total=total, calls_done=total)
    return len(rows)
