"""Migration llmjudge 0004 (JudgeCall, LLMRating.target_rater) on a database with ratings and triggers."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("llmjudge", "0003_experiment")]


def _triggers() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_migrating_0004_back_and_forth_keeps_the_rating_triggers_and_the_existing_rows(story_with_items, make_judge):
    from llmjudge.models import LLMRating
    from llmjudge.runs.lifecycle import judge_run_start

    run = judge_run_start(study=story_with_items, judge=make_judge(samples=1), enqueue=False)
    triggers = _triggers()
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    MigrationExecutor(connection).migrate(latest)

    assert _triggers() == triggers
    assert LLMRating.objects.filter(run=run).count() == 3 * 4
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.filter(run=run).update(status="ok", score=6)
    row = LLMRating.objects.filter(run=run).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMRating.objects.create(run=run, item=row.item, question=row.question, sample=row.sample)
