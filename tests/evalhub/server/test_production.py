"""Production settings: check --deploy is clean, logs are JSON lines, /healthz checks database and broker."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalhub.server.json_logs import JSONFormatter

REPO = Path(__file__).resolve().parents[3]


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {**os.environ, "DEBUG": "false", "SECRET_KEY": "x7" * 30 + "-production-secret",
           "ALLOWED_HOSTS": "evalhub.example.org", "EVALHUB_VAR_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_log_records_become_one_json_object_per_line():
    record = logging.LogRecord("evalhub.x", logging.WARNING, __file__, 1, "judge %s failed", ("j1",), None)
    entry = json.loads(JSONFormatter().format(record))
    assert (entry["level"], entry["logger"], entry["message"]) == ("WARNING", "evalhub.x", "judge j1 failed")
    assert entry["time"].endswith("+00:00")


@pytest.mark.django_db
def test_health_endpoint_reports_database_and_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok"}


@pytest.mark.django_db
def test_health_endpoint_fails_when_the_broker_is_unreachable(client, settings, monkeypatch):
    from evalhub.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"].startswith("error")
    assert response.json()["database"] == "ok"
