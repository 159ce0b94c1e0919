"""Faults (issue 8, item 2): judge runs and rater submits survive the infrastructure failing under them.

Every judge-run test uses a real Celery worker subprocess against PostgreSQL and a private Redis
(tests/support/private_services.py; the shared servers are never restarted), and ends with exactly
one LLMRating per key: either the run completes on its own, or it is left in a state that
``manage.py judge_run RUN resume`` completes, and the test runs that command.

Needs PostgreSQL (the test database is shared with the worker) and redis-server/PostgreSQL binaries:
skipped on the embedded default, a failure when EVALHUB_REQUIRE_SERVICES=1 (the services marker).
The fault rates of the server test are configurable: EVALHUB_FAULT_RATES="429=0.1,500=0.1,garbage=0.08,timeout=0.03".
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection
from django.template.defaultfilters import pluralize

from annotations.models import Item, Study
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.support.celery_worker import REPO, judge_run_command, service_env, start_worker, stop_worker, wait_for
from tests.support.openai_server import Behaviour, OpenAIServer, expected_score
from tests.support.private_services import (
    PrivatePostgres,
    PrivateRedis,
    free_port,
)

ITEMS, SAMPLES, QUESTIONS = 10, 3, 4  # the story-likert template asks four questions
TOTAL = ITEMS * SAMPLES * QUESTIONS

pytestmark = pytest.mark.services("postgresql", "redis-server", reason="the test database is shared with the worker")


def _study(owner, slug: str) -> Study:
    from annotations.studies import study_create_from_template

    study = study_create_from_template(slug=slug, template="story-likert", owner=owner)
    for i in range(ITEMS):
        Item.objects.create(study=study, external_id=f"{slug}{i}", group="human", position=i,
                            fields={"story": f"Story {slug} {i} begins. It ends.", "prompt": f"Prompt {i}"})
    return study


def _run(study: Study, server: OpenAIServer, *, chunk_size: int, settings) -> JudgeRun:
    settings.LLM_CHUNK_SIZE = chunk_size
    judge = Judge.objects.create(name=f"{study.slug}-judge", backend="openai-compatible", base_url=f"{server.url}/v1",
                                 model="m", samples=SAMPLES, concurrency=4)
    # Not enqueued here: this process's Celery app talks to the configured broker, not the private
    # Redis. The resume command, sent to the private Redis, enqueues every pending rating.
    run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
    assert run.calls_total == TOTAL
    return run


def _answered(run: JudgeRun) -> int:
    return run.ratings.exclude(status=LLMRating.Status.PENDING).count()


def _status(run: JudgeRun) -> str:
    return JudgeRun.objects.values_list("status", flat=True).get(pk=run.pk)


def _wait_until_quiet(run: JudgeRun, quiet: float, timeout: float) -> None:
    """Until the run is done, or no rating was answered for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline and _status(run) != JudgeRun.Status.DONE:
        now = _answered(run)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.1)


def _assert_exactly_once(run: JudgeRun, *, statuses: set[str]) -> Counter:
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE
    keys = list(run.ratings.values_list("item_id", "question_id", "sample"))
    assert len(keys) == len(set(keys)) == TOTAL  # one row per key: nothing lost, nothing duplicated
    counts = Counter(run.ratings.values_list("status", flat=True))
    assert set(counts) <= statuses, counts
    for rating in run.ratings.filter(status=LLMRating.Status.OK):
        assert rating.score == expected_score(rating.prompt)
    assert (run.calls_done, run.calls_failed) == (TOTAL, counts.get("error", 0))  # the counters agree
    return counts


@pytest.mark.parametrize("appendonly", [True, False], ids=["redis-with-aof", "redis-without-persistence"])
def test_a_run_survives_redis_being_killed_and_restarted_mid_run(transactional_db, researcher, settings, appendonly):
    study = _study(researcher, f"redis{int(appendonly)}")
    with PrivateRedis(appendonly=appendonly) as redis_server, OpenAIServer(Behaviour(latency=0.1)) as server:
        run = _run(study, server, chunk_size=12, settings=settings)
        env = service_env(redis_url=redis_server.url, CELERY_VISIBILITY_TIMEOUT="3")
        judge_run_command(str(run.pk), "resume", redis_url=redis_server.url)
        worker = start_worker("redis", env)
        try:
            wait_for(lambda: _answered(run) >= TOTAL * 0.3, 30, "the worker to answer 30 %")
            redis_server.restart(down_seconds=1.0)
            at_restart = _answered(run)
            assert at_restart < TOTAL, "the run finished before the restart; make it longer"
            _wait_until_quiet(run, quiet=6, timeout=40)
            resumed = _status(run) != JudgeRun.Status.DONE
            to_ask = TOTAL - _answered(run)
            if appendonly:
                # The queue and the unacked chunk survive in the AOF: the run completes by itself.
                assert not resumed, f"stalled at {_answered(run)}/{TOTAL} although Redis kept its data"
            if resumed:
                # Without persistence the queued chunks are gone: the run waits, running, with the
                # rest pending (never half-written), and a resume asks exactly what is missing.
                assert _status(run) == JudgeRun.Status.RUNNING
                out = judge_run_command(str(run.pk), "resume", redis_url=redis_server.url)
                assert f"{to_ask} answer{pluralize(to_ask)} to ask" in out
                wait_for(lambda: _status(run) == JudgeRun.Status.DONE, 30, "the resumed run to finish")
        finally:
            stop_worker(worker)
    _assert_exactly_once(run, statuses={"ok"})
    attempts = sum(run.ratings.values_list("attempts", flat=True))
    assert server.stats.requests >= attempts
    print(f"\nredis restart ({'aof' if appendonly else 'no persistence'}): answered {at_restart}/{TOTAL} at restart, "
          f"resume needed={resumed} ({to_ask} to ask), calls={server.stats.requests}, ratings={TOTAL}, duplicates=0, lost=0")


def _drop_worker_connections() -> int:
    """pg_terminate_backend on every other session of this test database (the worker's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_a_run_survives_its_database_connections_being_dropped_mid_run(transactional_db, researcher, settings,
                                                                      tmp_path):
    study = _study(researcher, "dbdrop")
    dropped = 0
    log = tmp_path / "worker.log"
    with PrivateRedis() as redis_server, OpenAIServer(Behaviour(latency=0.2)) as server:
        run = _run(study, server, chunk_size=12, settings=settings)
        env = service_env(redis_url=redis_server.url)
        judge_run_command(str(run.pk), "resume", redis_url=redis_server.url)
        worker = start_worker("dbdrop", env, log_path=log)
        try:
            wait_for(lambda: _answered(run) >= TOTAL * 0.1, 30, "the worker to answer 10 %")
            # Every 2 s (a chunk takes about one), kill the worker's sessions, whatever they are doing:
            # idle between chunks (the next query reconnects) or mid-chunk (the chunk is interrupted
            # and re-run). Drops faster than a chunk can finish would starve the run: no progress.
            deadline = time.monotonic() + 45
            while _status(run) != JudgeRun.Status.DONE and time.monotonic() < deadline:
                dropped += _drop_worker_connections()
                time.sleep(2.0)
            assert _status(run) == JudgeRun.Status.DONE, f"not done after the drops: {_answered(run)}/{TOTAL}"
        finally:
            stop_worker(worker)
    interrupted = log.read_text(errors="replace").count("chunk interrupted")
    assert dropped >= 3
    _assert_exactly_once(run, statuses={"ok"})
    print(f"\ndatabase drops: {dropped} worker sessions terminated, {interrupted} chunks interrupted and re-run, "
          f"calls={server.stats.requests}, ratings={TOTAL}, duplicates=0, lost=0")


def _fault_rates() -> dict[str, float]:
    raw = os.environ.get("EVALHUB_FAULT_RATES", "429=0.1,500=0.1,garbage=0.08,timeout=0.03")
    rates = {}
    for part in raw.split(","):
        name, _, value = part.partition("=")
        rates[name.strip()] = float(value)
    return rates


def test_a_run_on_a_worker_survives_429_500_garbage_and_timeouts_at_configurable_rates(
    transactional_db, researcher, settings
):
    rates = _fault_rates()
    behaviour = Behaviour(latency=0.02, rate_429=rates.get("429", 0), rate_500=rates.get("500", 0),
                          rate_garbage=rates.get("garbage", 0), rate_timeout=rates.get("timeout", 0),
                          timeout_seconds=1.5, retry_after=0.1, seed=8)
    study = _study(researcher, "faults")
    with PrivateRedis() as redis_server, OpenAIServer(behaviour) as server:
        run = _run(study, server, chunk_size=TOTAL, settings=settings)
        env = service_env(redis_url=redis_server.url, LLM_MAX_ATTEMPTS="3", LLM_TIMEOUT="1")
        judge_run_command(str(run.pk), "resume", redis_url=redis_server.url)
        worker = start_worker("faults", env)
        try:
            wait_for(lambda: _status(run) == JudgeRun.Status.DONE, 60, "the run to finish under faults")
            first = _assert_exactly_once(run, statuses={"ok", "error"})
            faulty = dict(server.stats.by_status)
            requests = server.stats.requests
            if first.get("error"):
                # Errors after the attempt limit are a final state; a resume with --retry-errors asks them
                # again (the server has recovered) and keeps their history.
                server.behaviour = Behaviour(latency=0.02)
                out = judge_run_command(str(run.pk), "resume", "--retry-errors", redis_url=redis_server.url)
                assert f"{first['error']} answer{pluralize(first['error'])} to ask" in out
                wait_for(lambda: _status(run) == JudgeRun.Status.DONE, 30, "the resumed run to finish")
        finally:
            stop_worker(worker)
    assert _assert_exactly_once(run, statuses={"ok"}) == {"ok": TOTAL}
    assert sum(run.ratings.values_list("attempts", flat=True)) <= server.stats.requests
    print(f"\nserver faults {rates}: first pass {dict(first)}, calls={requests} {faulty}, "
          f"timeouts={server.stats.timeouts} garbage={server.stats.garbage}; after resume ok={TOTAL}, duplicates=0, lost=0")


# --- human submits during a database restart ---------------------------------------------------


class _RaterBrowser:
    """A rater's browser: reads the current page's form and answers every question with 3."""

    def __init__(self, base_url: str, path: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=base_url, follow_redirects=True, timeout=15)
        self.path = path

    def current_form(self) -> dict[str, str]:
        html = self.http.get(self.path).raise_for_status().text
        page = re.search(r'name="page" value="([^"]*)"', html)
        assert page, "the page has no form"
        data = {"page": page.group(1)}
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]*)"', html)
        if token:
            data["csrfmiddlewaretoken"] = token.group(1)
        for name in sorted(set(re.findall(r'type="radio" name="([^"]+)"', html))):
            data[name] = "3"
        return data

    def submit(self, data: dict[str, str]):
        return self.http.post(self.path, data=data)


def _ratings_in(database_url: str) -> tuple[int, int]:
    """(HumanRating rows, keys stored more than once) in the private database."""
    import psycopg

    with psycopg.connect(database_url) as db:
        total = db.execute("SELECT count(*) FROM annotations_humanrating").fetchone()[0]
        duplicated = db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM annotations_humanrating"
            " GROUP BY rater_id, item_id, question_id HAVING count(*) > 1) d"
        ).fetchone()[0]
    return total, duplicated


def _serve_rater_app(database_url: str, port: int, workdir: str) -> tuple[subprocess.Popen, str]:
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_TASK_ALWAYS_EAGER")},
        "DATABASE_URL": database_url,
        # Production-like: no debug pages, so a 500 would be Django's bare error page.
        "DEBUG": "false", "SECRET_KEY": "wt8c-" + "x" * 50, "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false", "SECURE_COOKIES": "false", "SECURE_HSTS_SECONDS": "0",
        "EVALHUB_VAR_DIR": workdir, "LOG_LEVEL": "WARNING",
    }
    log_path = Path(workdir) / "app.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server writes here until killed
    app = subprocess.Popen([sys.executable, "-m", "tests.support.rater_app", str(port)], cwd=REPO, env=env,
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for line in log_path.read_text(errors="replace").splitlines():
            if line.startswith('{"url"'):
                return app, json.loads(line)["url"]
        if app.poll() is not None:
            raise AssertionError(f"the app died:\n{log_path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.1)
    raise AssertionError("the app did not start within 90 s")


@pytest.mark.services("postgresql-binaries")
def test_a_rater_submitting_during_a_database_restart_is_told_to_retry_and_loses_nothing(tmp_path):
    with PrivatePostgres() as pg:
        pg.createdb("wt8c_raters")
        database_url = pg.url_for("wt8c_raters")
        port = free_port()
        app, path = _serve_rater_app(database_url, port, str(tmp_path))
        try:
            browser = _RaterBrowser(f"http://127.0.0.1:{port}", path)
            confirmed = 0
            for _ in range(2):  # two pages confirmed before the restart
                data = browser.current_form()
                answered = browser.submit(data)
                assert answered.status_code == 200 and f'value="{data["page"]}"' not in answered.text
                confirmed += sum(1 for name in data if name.startswith("q_"))
            data = browser.current_form()
            assert any(name.startswith("q_") for name in data)

            pg.stop()
            during = [browser.submit(data), browser.http.get(path)]
            for response in during:
                assert response.status_code == 503
                assert response.headers["Retry-After"] == "10"
                assert "Please try again in a moment" in response.text
                assert "Traceback" not in response.text and "Server Error (500)" not in response.text

            pg.start()
            retried = browser.submit(data)  # the same form again, as the page asks
            assert retried.status_code == 200 and f'value="{data["page"]}"' not in retried.text
            confirmed += sum(1 for name in data if name.startswith("q_"))
            replayed = browser.submit(data)  # a second click on the old page changes nothing
            assert replayed.status_code == 200
        finally:
            os.killpg(app.pid, signal.SIGTERM)
            app.wait(timeout=15)
        stored, duplicated = _ratings_in(database_url)
    assert (stored, duplicated) == (confirmed, 0)
    print(f"\nrater during a database restart: {confirmed} ratings confirmed, {stored} stored, "
          "503 + Retry-After while down, saved on the first retry, duplicates=0, lost=0")
