"""Celery tasks of the `llm` queue: they take ids and call a service (STYLE.md rule 5).

``acks_late`` + ``reject_on_worker_lost``: a chunk whose worker dies is delivered again. That is
safe because the service skips ratings that are no longer pending and writes each result with a
conditional UPDATE, so a second delivery can repeat a call but never duplicate or lose a rating.
Calls are retried inside the chunk (llmjudge/engine/runner.py); Celery retries only infrastructure that
may come back (the database or Redis briefly unreachable).

Infrastructure errors are first retried in this process, because the broker may be what is down:
Celery publishes a retry as a new message, and a retry it cannot publish is rejected without
requeue, which dropped the chunk and left its run ``running`` for ever (tests/reliability/test_faults.py,
Redis killed mid-run). Re-running a chunk is harmless for the reasons above.
"""
from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections
from django.utils.module_loading import import_string

from llmjudge.runs import chunks

logger = logging.getLogger(__name__)

# The project's Celery app: django.setup() does not load it (start-up, issue 22), so this module does, and
# @shared_task binds to it (its broker, its eager setting) in whatever process queues these tasks.
import_string(settings.EVALHUB_CELERY_APP)

_INFRA_ERRORS = chunks.INFRA_ERRORS
# Seconds between in-process retries: about half a minute in all covers a Redis or PostgreSQL restart.
IN_PROCESS_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=_INFRA_ERRORS,
    retry_backoff=True,
    retry_backoff_max=120,
    max_retries=6,
)
def judge_chunk(run_id: int, rating_ids: list[int]) -> None:
    for pause in (*IN_PROCESS_BACKOFF, None):
        try:
            chunks.run_chunk(run_id=run_id, rating_ids=rating_ids)
            return
        except _INFRA_ERRORS as exc:
            if pause is None:
                raise  # then Celery's own retry, through the broker
            logger.warning("judge run %s: chunk interrupted (%s: %s), again in %s s",
                           run_id, type(exc).__name__, str(exc).strip()[:200], pause)
        time.sleep(pause)
        # A connection that failed is marked unusable; this drops it so the next query reconnects.
        close_old_connections()
