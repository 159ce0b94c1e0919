"""Celery tasks of the `llm` queue: they take ids and call a service (STYLE.md rule 5).

``acks_late`` + ``reject_on_worker_lost``: a chunk whose worker dies is delivered again. That is
safe because the service skips ratings that are no longer pending and writes each result with a
conditional UPDATE, so a second delivery can repeat a call but never duplicate or lose a rating.
Calls are retried inside the chunk (llmjudge/engine.py); Celery retries only infrastructure that
may come back (the database or Redis briefly unreachable).
"""
from __future__ import annotations

import redis
from celery import shared_task
from django.db import InterfaceError, OperationalError

from llmjudge import judging


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError, redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
    retry_backoff_max=120,
    max_retries=6,
)
def judge_chunk(run_id: int, rating_ids: list[int]) -> None:
    judging.run_chunk(run_id=run_id, rating_ids=rating_ids)
