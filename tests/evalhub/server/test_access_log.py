"""Rater tokens and participant ids never reach a log line: gunicorn's access log (through the logger class
docker-compose uses) and Django's own records."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from evalhub.server.access_log import TokenMaskingFilter, mask_tokens

REPO = Path(__file__).resolve().parents[3]
TOKEN = "Zq3xV9kLmN2pR7sT4uW8yA1bC5dE6fG0hJ"
OPEN = "Op3nL1nkT0k3nAbCdEfGh1234567890xyz"


def test_mask_tokens_hides_rater_and_open_link_tokens_and_participant_ids():
    line = f'GET /r/{TOKEN}/?x=1 HTTP/1.1 "/s/{OPEN}/?PROLIFIC_PID=5f1a&STUDY_ID=s9&SESSION_ID=x7"'
    masked = mask_tokens(line)
    for secret in (TOKEN, OPEN, "5f1a", "s9", "x7"):
        assert secret not in masked
    assert masked == 'GET /r/<token>/?x=1 HTTP/1.1 "/s/<token>/?PROLIFIC_PID=<masked>&STUDY_ID=<masked>&SESSION_ID=<masked>"'
    assert mask_tokens("/studies/r/abc/ GET /healthz") == "/studies/r/<token>/ GET /healthz"


def test_django_log_records_are_masked_by_the_configured_filter():
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Not Found: %s", (f"/r/{TOKEN}/",), None)
    assert TokenMaskingFilter().filter(record)
    assert record.getMessage() == "Not Found: /r/<token>/"
    from django.conf import settings

    assert "mask_tokens" in settings.LOGGING["handlers"]["console"]["filters"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gunicorn_with_the_compose_logger_class_writes_no_token(tmp_path):
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    assert "--logger-class evalhub.server.access_log.MaskedAccessLogger" in command
    port = _free_port()
    log = tmp_path / "access.log"
    env = {**os.environ, "EVALHUB_VAR_DIR": str(tmp_path), "DEBUG": "true"}
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True,
                   timeout=300)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalhub.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--access-logfile", str(log),
         "--logger-class", "evalhub.server.access_log.MaskedAccessLogger"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2)
                break
            except OSError:  # refused, reset or timed out while gunicorn starts (URLError is an OSError)
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        for path in (f"/r/{TOKEN}/", f"/s/{OPEN}/?PROLIFIC_PID=5f1a9&SESSION_ID=x7z"):
            request = urllib.request.Request(base + path, headers={"Referer": f"{base}/r/{TOKEN}/"})
            try:
                urllib.request.urlopen(request, timeout=5)
            except urllib.error.HTTPError as exc:
                assert exc.code == 404  # no such rater or study: the request is logged all the same
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0].decode()
    written = log.read_text() + output
    assert "/r/<token>/" in log.read_text() and "PROLIFIC_PID=<masked>" in log.read_text()
    for secret in (TOKEN, OPEN, "5f1a9", "x7z"):
        assert secret not in written
