"""The one rule for ``@pytest.mark.services``: skip when a service is missing, fail when it is required."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests import conftest


def _item(*marks: pytest.MarkDecorator) -> SimpleNamespace:
    return SimpleNamespace(iter_markers=lambda name: [m.mark for m in marks if m.mark.name == name])


@pytest.fixture
def no_redis(monkeypatch, settings):
    monkeypatch.delenv("EVALHUB_REQUIRE_SERVICES", raising=False)
    settings.REDIS_URL = ""


def test_a_test_whose_service_is_missing_is_skipped_with_what_to_set_and_why(no_redis):
    with pytest.raises(pytest.skip.Exception, match=r"needs Redis \(set REDIS_URL\): limits are shared"):
        conftest.pytest_runtest_setup(_item(pytest.mark.services("redis", reason="limits are shared")))


def test_a_missing_service_fails_instead_when_services_are_required(no_redis, monkeypatch):
    monkeypatch.setenv("EVALHUB_REQUIRE_SERVICES", "1")
    with pytest.raises(pytest.fail.Exception, match=r"EVALHUB_REQUIRE_SERVICES=1: needs Redis"):
        conftest.pytest_runtest_setup(_item(pytest.mark.services("redis")))


def test_a_test_whose_services_are_there_runs(settings, monkeypatch):
    monkeypatch.setenv("EVALHUB_REQUIRE_SERVICES", "1")
    settings.REDIS_URL = "redis://127.0.0.1:6379/5"
    assert conftest.pytest_runtest_setup(_item(pytest.mark.services("redis"))) is None
    assert conftest.pytest_runtest_setup(_item()) is None


@pytest.mark.parametrize("mark", [pytest.mark.services(), pytest.mark.services("mysql")], ids=["none", "unknown"])
def test_a_marker_naming_no_known_service_is_an_error(mark):
    with pytest.raises(pytest.fail.Exception, match="name one or more of postgresql, redis"):
        conftest.pytest_runtest_setup(_item(mark))
