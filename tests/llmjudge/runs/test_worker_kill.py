"""A real Celery worker is SIGKILLed halfway through a run; a new worker completes it exactly once.

Needs PostgreSQL and Redis (two processes share the database and the broker): skipped on the
embedded default, and a failure, never a skip, when EVALHUB_REQUIRE_SERVICES=1 (the services marker).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter

import pytest
import redis
from django.conf import settings

from annotations.models import Item
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from tests.support.celery_worker import service_env, start_worker, wait_for
from tests.support.openai_server import Behaviour, OpenAIServer, expected_score

VISIBILITY_TIMEOUT = 3


def _start_worker(name: str) -> subprocess.Popen:
    # A message taken by the killed worker is delivered again after VISIBILITY_TIMEOUT seconds.
    env = service_env(redis_url=settings.REDIS_URL, CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT), LLM_TIMEOUT="5")
    return start_worker(name, env)


@pytest.mark.services("postgresql", "redis", reason="two processes share the database and the broker")
def test_a_run_survives_sigkill_of_its_worker_with_no_gap_and_no_duplicate(transactional_db, researcher, settings):
    from annotations.studies import study_create_from_template

    broker = redis.Redis.from_url(settings.REDIS_URL)
    broker.delete("llm", "unacked", "unacked_index")  # no stale chunk from an earlier run of the suite
    settings.LLM_CHUNK_SIZE = 12
    study = study_create_from_template(slug="kill", template="story-likert", owner=researcher)
    for i in range(10):
        Item.objects.create(study=study, external_id=f"k{i}", group="human", position=i,
                            fields={"story": f"Story {i} begins. It ends.", "prompt": f"Prompt {i}"})
    workers: list[subprocess.Popen] = []
    with OpenAIServer(Behaviour(latency=0.1)) as server:
        judge = Judge.objects.create(name="kill-judge", backend="openai-compatible", base_url=f"{server.url}/v1",
                                     model="m", samples=3, concurrency=4)
        try:
            workers.append(_start_worker("first"))
            run = judging.judge_run_start(study=study, judge=judge)  # enqueued at once: autocommit
            total = run.calls_total
            assert total == 120

            def done() -> int:
                return run.ratings.exclude(status="pending").count()

            wait_for(lambda: done() >= total * 0.3, 60, "the first worker to answer 30 %")
            os.killpg(workers[0].pid, signal.SIGKILL)
            workers[0].wait(timeout=10)
            at_kill = done()
            assert at_kill < total, "the run finished before the kill; make it longer"
            time.sleep(VISIBILITY_TIMEOUT + 0.5)
            assert done() == at_kill  # nobody works on the run while no worker lives

            workers.append(_start_worker("second"))
            wait_for(lambda: JudgeRun.objects.get(pk=run.pk).status == "done", 90, "the second worker to finish")
        finally:
            for worker in workers:
                if worker.poll() is None:
                    os.killpg(worker.pid, signal.SIGTERM)
                    worker.wait(timeout=20)

        keys = list(run.ratings.values_list("item_id", "question_id", "sample"))
        assert len(keys) == len(set(keys)) == total
        assert Counter(run.ratings.values_list("status", flat=True)) == {"ok": total}
        for rating in run.ratings.all():
            assert rating.score == expected_score(rating.prompt)
        attempts = sum(run.ratings.values_list("attempts", flat=True))
        # Calls in flight when the worker died were made but never stored: at most one per slot.
        assert attempts <= server.stats.requests <= attempts + judge.concurrency
