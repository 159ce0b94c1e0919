"""The chunk task retries infrastructure errors in its own process before asking the broker."""
from __future__ import annotations

import pytest
import redis
from django.db import OperationalError

from llmjudge import tasks


@pytest.fixture
def calls(monkeypatch):
    seen: list[tuple[int, list[int]]] = []
    monkeypatch.setattr(tasks.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(tasks, "close_old_connections", lambda: seen.append(("closed", [])))
    return seen


@pytest.mark.parametrize("error", [redis.ConnectionError("Connection refused"), OperationalError("terminated")])
def test_a_chunk_whose_redis_or_database_went_away_is_rerun_in_process_not_dropped(monkeypatch, calls, error):
    # Regression: Celery publishes a retry through the broker; with Redis down it could not, rejected the
    # message without requeue, and the run stayed "running" with its chunk pending for ever.
    failures = [error, error]

    def run_chunk(*, run_id, rating_ids):
        calls.append((run_id, rating_ids))
        if failures:
            raise failures.pop()

    monkeypatch.setattr(tasks.chunks, "run_chunk", run_chunk)
    tasks.judge_chunk.run(7, [1, 2])  # called directly: a Celery retry would re-raise
    assert [c for c in calls if c[0] == 7] == [(7, [1, 2])] * 3
    assert calls.count(("closed", [])) == 2


def test_after_the_in_process_retries_the_error_goes_to_celerys_retry(monkeypatch, calls):
    def run_chunk(*, run_id, rating_ids):
        raise redis.ConnectionError("still down")

    monkeypatch.setattr(tasks.chunks, "run_chunk", run_chunk)
    with pytest.raises(redis.ConnectionError):
        tasks.judge_chunk.run(7, [1])
    assert calls.count(("closed", [])) == len(tasks.IN_PROCESS_BACKOFF)
