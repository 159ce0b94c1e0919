"""Real Celery worker subprocesses (and management commands) for fault tests, as in test_worker_kill."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.management import call_command
from django.db import connection

REPO = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The URL of the database this test process uses (the pytest-django test database)."""
    db = connection.settings_dict
    auth = f"{db['USER']}:{db['PASSWORD']}" if db.get("PASSWORD") else db["USER"]
    return f"postgresql://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def service_env(*, redis_url: str, database: str | None = None, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database or database_url(),
        "REDIS_URL": redis_url,
        "LLM_TIMEOUT": "2",
        **extra,
    }


def start_worker(name: str, env: dict[str, str], log_path: Path | None = None) -> subprocess.Popen:
    """A one-process worker on the `llm` queue, logging to ``log_path`` (or $EVALHUB_WORKER_LOG_DIR/<name>.log)."""
    log_dir = os.environ.get("EVALHUB_WORKER_LOG_DIR")
    if log_path is None and log_dir:
        log_path = Path(log_dir) / f"{name}.log"
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "-Q", "llm", "-c", "1", "-n", f"{name}@%h",
         "--loglevel", "INFO" if log_path else "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO, env=env, start_new_session=True, stdout=log, stderr=log,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=5)


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Send this process's Celery messages to ``url`` (a private Redis) inside the block.

    In-process rather than a ``manage.py`` subprocess: Django's start-up costs seconds on a busy
    two-core machine.
    """
    from evalhub.celery import app

    def forget_connections() -> None:
        # Dropped, not closed: kombu keeps one pool per URL and would hand back a closed one.
        app._pool = None
        app.amqp._producer_pool = None

    old = app.conf.broker_url
    forget_connections()
    app.conf.broker_url = url
    try:
        yield
    finally:
        forget_connections()
        app.conf.broker_url = old


def judge_run_command(*args: str, redis_url: str) -> str:
    """``manage.py judge_run ...`` (the operator's command), enqueuing to ``redis_url``; returns stdout."""
    out = io.StringIO()
    with celery_broker(redis_url):
        call_command("judge_run", *args, stdout=out)
    return out.getvalue()


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
