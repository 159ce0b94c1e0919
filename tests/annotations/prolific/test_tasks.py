"""The whole study with EvalHub's polling done by the beat task in a real Celery worker and a real beat, on
PostgreSQL and a private Redis (the test database is shared with the worker: the services marker)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from annotations.models import ProlificSubmission, ProlificTransition, Rater
from tests.support.celery_worker import REPO, service_env, stop_worker, wait_for
from tests.support.private_services import PrivateRedis
from tests.support.prolific_participants import TOKEN_ENV
from tests.support.prolific_story import check_the_rest, run_whole_study

pytestmark = pytest.mark.services("postgresql", "redis-server", reason="the worker shares the test database")


def _celery(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    out = open(log, "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "evalhub", *args], cwd=REPO, env=env,
                            start_new_session=True, stdout=out, stderr=out)


def _rule_has_acted(link) -> bool:  # noqa: ANN001
    rows = dict(ProlificSubmission.objects.filter(link=link).values_list("participant_id", "status"))
    carol = Rater.objects.filter(external_id="pid-carol").values_list("revoked_at", flat=True).first()
    return (rows.get("pid-alice"), rows.get("pid-bob"), rows.get("pid-dave")) == (
        "APPROVED", "APPROVED", "AWAITING REVIEW") and carol is not None


def test_the_whole_study_with_a_worker_and_beat_polling(transactional_db, prolific, study, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    logs = Path(tempfile.mkdtemp(prefix="prolific-celery-"))
    with PrivateRedis() as redis_server:
        env = service_env(redis_url=redis_server.url, PROLIFIC_API_URL=prolific.url, PROLIFIC_SYNC_SECONDS="1",
                          PROLIFIC_TOKEN_VARIABLES=f"{TOKEN_ENV}=user:owner", **{TOKEN_ENV: prolific.token})
        worker = _celery(["worker", "-Q", "default", "-c", "1", "-n", "prolific@%h", "--loglevel", "INFO",
                          "--without-gossip", "--without-mingle", "--without-heartbeat"], env, logs / "worker.log")
        beat = _celery(["beat", "--loglevel", "INFO", "-s", str(logs / "beat-schedule")], env, logs / "beat.log")
        try:
            def polled(link) -> None:  # noqa: ANN001
                wait_for(lambda: _rule_has_acted(link), 60, "the beat task to approve and free seats")

            link, *arrivals = run_whole_study(prolific, study, researcher, polled)
            before = ProlificTransition.objects.count()
            check_the_rest(prolific, link, researcher, *arrivals, sync=lambda: _next_poll(link))
            assert ProlificTransition.objects.count() > before
        finally:
            stop_worker(beat)
            stop_worker(worker)
    worker_log = (logs / "worker.log").read_text()
    assert "prolific_sync_study" in worker_log and "succeeded" in worker_log
    for text in (worker_log, (logs / "beat.log").read_text(), caplog.text):
        assert prolific.token not in text  # no token in any process's log
    assert os.environ.get(TOKEN_ENV) == prolific.token  # (the check above looked for the real value)


def _next_poll(link) -> None:  # noqa: ANN001
    started = time.time()

    def polled() -> bool:
        link.refresh_from_db()
        return link.synced_at is not None and link.synced_at.timestamp() >= started

    wait_for(polled, 30, "the next poll")
