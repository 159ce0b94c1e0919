"""Shared fixtures: the three standing personas and studies made from the protocol templates; the
``services`` marker for tests that need PostgreSQL, Redis or their server binaries."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

# The suite's OpenAI-protocol servers listen on free loopback ports, which the production default (vLLM's port
# only) refuses: the tests allow every loopback port, here for subprocesses (Celery workers, gunicorn) and in the
# autouse fixture below for this process. Tests of the default set it back (tests/llmjudge/backends).
TEST_JUDGE_BASE_URL_HOSTS = "localhost,127.0.0.1,::1,vllm"
os.environ.setdefault("JUDGE_BASE_URL_HOSTS", TEST_JUDGE_BASE_URL_HOSTS)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"


def shared_path(*parts: str) -> Path:
    """A file under ../shared; skipped locally when absent, a failure under CI=true (never silently)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing: CI must have ../shared beside the project")
        pytest.skip(f"{path} is not available on this machine")
    return path


@pytest.fixture
def researcher(django_user_model):
    return django_user_model.objects.create_user(username="owner", password="pw-owner-123")


@pytest.fixture
def other_researcher(django_user_model):
    return django_user_model.objects.create_user(username="other", password="pw-other-123")


@pytest.fixture
def story_study(db, researcher):
    from annotations.studies import study_create_from_template

    return study_create_from_template(slug="story", template="story-likert", owner=researcher)


@pytest.fixture
def meaning_study(db, researcher):
    from annotations.studies import study_create_from_template

    return study_create_from_template(slug="meaning", template="adversarial-meaning", owner=researcher)


@pytest.fixture
def rater(story_study):
    from annotations.models import Rater

    return Rater.objects.create(study=story_study, external_id="rater-a")


@pytest.fixture
def fresh_cache():
    """An empty cache before and after the test: analyses and login-failure counts are cached, and a
    rolled-back test database hands the same ids to the next test's objects.

    Used with ``pytest.mark.usefixtures("fresh_cache")``; not autouse, because under REDIS_URL the cache
    is Redis and clearing it flushes the broker's queues too."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _loopback_judge_servers(settings):
    settings.JUDGE_BASE_URL_HOSTS = TEST_JUDGE_BASE_URL_HOSTS.split(",")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs half a second per user; tests need no protection.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _forget_full_items():
    # The claim scan's per-process memory of full items (annotations.services) is keyed by study id, and
    # a rolled-back test database may hand the same ids to the next test's study.
    from annotations import services

    services._full_items.clear()
    yield
    services._full_items.clear()


def _postgresql() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


def _redis() -> bool:
    from django.conf import settings

    return bool(settings.REDIS_URL)


def _redis_server() -> bool:
    from tests.support.private_services import redis_available

    return redis_available()


def _postgresql_binaries() -> bool:
    from tests.support.private_services import postgres_available

    return postgres_available()


# What ``@pytest.mark.services(...)`` may name: how to tell the service is there, and what to set if not.
SERVICES: dict[str, tuple[Callable[[], bool], str]] = {
    "postgresql": (_postgresql, "PostgreSQL (set DATABASE_URL)"),
    "redis": (_redis, "Redis (set REDIS_URL)"),
    "redis-server": (_redis_server, "redis-server on PATH"),
    "postgresql-binaries": (_postgresql_binaries, "PostgreSQL 15 binaries (EVALHUB_PG_BIN)"),
}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """The one rule for ``@pytest.mark.services("postgresql", "redis", reason=...)``: a test whose services
    are missing is skipped, with what to set; with EVALHUB_REQUIRE_SERVICES=1 (CI's PostgreSQL pass) it
    fails instead, so a misconfigured CI cannot pass by skipping. Checked before any fixture runs."""
    marks = list(item.iter_markers("services"))
    if not marks:
        return
    names = list(dict.fromkeys(name for mark in marks for name in mark.args))
    unknown = [name for name in names if name not in SERVICES]
    if unknown or not names:
        pytest.fail(f"@pytest.mark.services: name one or more of {', '.join(SERVICES)} (got {unknown or 'none'})")
    missing = [SERVICES[name][1] for name in names if not SERVICES[name][0]()]
    if not missing:
        return
    reasons = [mark.kwargs["reason"] for mark in marks if "reason" in mark.kwargs]
    message = f"needs {', '.join(missing)}" + "".join(f": {reason}" for reason in reasons)
    if os.environ.get("EVALHUB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"EVALHUB_REQUIRE_SERVICES=1: {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(autouse=True)
def _api_throttles_off(settings):
    # The API's throttle counts live in the cache, which outlives a test: a suite's hundreds of API calls
    # from 127.0.0.1 would pass the anonymous rate and fail unrelated tests with 429. The throttle tests
    # set their own small rates (tests/evalhub/api/test_api_hardening.py).
    settings.API_THROTTLE_ANON = None
    settings.API_THROTTLE_USER = None


@pytest.fixture(autouse=True)
def _open_link_count_starts_at_zero():
    """Each test's open-link joins count from zero: the per-address count of new raters (20 an hour) lives in the
    cache, which under REDIS_URL outlives the test database, so the suite's joins from the test client's address
    would otherwise add up to a 429 in whichever open-link test comes late. Only that key is dropped (clearing the
    Redis cache would flush the broker's queues too)."""
    yield
    import hashlib

    from django.core.cache import cache

    cache.delete("open-link-raters:" + hashlib.sha256(b"127.0.0.1").hexdigest())
