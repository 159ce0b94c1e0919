"""Real Celery worker subprocesses (and management commands) for fault tests, as in test_worker_kill."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def start_worker(name: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "-Q", "llm", "-c", "1", "-n", f"{name}@%h",
         "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=5)


def manage(*args: str, env: dict[str, str]) -> str:
    """Run ``manage.py`` with ``env``; returns stdout, raises with stderr on failure."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
