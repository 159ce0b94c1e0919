"""Settings come from the environment and fail at start-up, naming the variable, when a value is bad."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PRINT = "from django.conf import settings as s; print(s.DEBUG, s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL)"


def run_settings(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"}}
    clean.update({"DJANGO_SETTINGS_MODULE": "evalhub.settings", "EVALHUB_VAR_DIR": str(tmp_path / "var"), **env})
    code = f"import django; django.setup(); {PRINT}"
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=clean, capture_output=True, text=True,
                          timeout=60)


def test_no_configuration_means_debug_sqlite_and_a_serverless_broker(tmp_path):
    result = run_settings(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "django.db.backends.sqlite3", "filesystem://"]
    assert (tmp_path / "var" / "broker" / "queue").is_dir()


def test_database_and_redis_urls_switch_to_postgres_and_redis(tmp_path):
    result = run_settings(tmp_path, DATABASE_URL="postgresql://postgres@127.0.0.1:5432/test",
                          REDIS_URL="redis://127.0.0.1:6379/0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "django.db.backends.postgresql", "redis://127.0.0.1:6379/0"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"DEBUG": "false", "ALLOWED_HOSTS": "x.org"}, "SECRET_KEY must be set"),
        ({"DEBUG": "false", "SECRET_KEY": "k" * 50}, "ALLOWED_HOSTS must be set"),
        ({"DATABASE_URL": "mysql://root@localhost/db"}, "DATABASE_URL='mysql://root@localhost/db': only sqlite"),
        ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL='http://localhost:6379' must start with redis://"),
        ({"DB_CONN_MAX_AGE": "soon"}, "DB_CONN_MAX_AGE='soon' is not an integer"),
        ({"DB_CONN_MAX_AGE": "-1"}, "DB_CONN_MAX_AGE=-1 must be at least 0"),
        ({"SECRET_KEY_FILE": "/nonexistent/secret"}, "SECRET_KEY_FILE points to '/nonexistent/secret'"),
    ],
)
def test_bad_values_stop_start_up_with_a_message_naming_the_variable(tmp_path, env, message):
    result = run_settings(tmp_path, **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_secret_key_may_come_from_a_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s" * 60 + "\n")
    code = "import django; django.setup(); from django.conf import settings as s; print(s.SECRET_KEY)"
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update({"DJANGO_SETTINGS_MODULE": "evalhub.settings", "EVALHUB_VAR_DIR": str(tmp_path / "var"),
                "DEBUG": "false", "ALLOWED_HOSTS": "evalhub.example.org", "SECRET_KEY_FILE": str(secret)})
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "s" * 60
