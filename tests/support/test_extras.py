"""The extras rule: skip on the base install with the command that installs the extra; fail under EVALHUB_EXTRAS=1."""
from __future__ import annotations

import pytest

from tests.support.extras import require_extra

ABSENT = ("json", "evalhub_no_such_extra_module")


def test_a_missing_extra_skips_naming_the_module_and_the_command_that_installs_it(monkeypatch):
    monkeypatch.delenv("EVALHUB_EXTRAS", raising=False)
    with pytest.raises(pytest.skip.Exception,
                       match=r"^role de-duplication needs evalhub_no_such_extra_module: install it with "
                             r"`make install-gpu`$"):
        require_extra(ABSENT, why="role de-duplication")


def test_a_missing_extra_fails_instead_when_the_extras_are_required(monkeypatch):
    monkeypatch.setenv("EVALHUB_EXTRAS", "1")
    with pytest.raises(pytest.fail.Exception, match=r"^EVALHUB_EXTRAS=1: role de-duplication needs "
                                                    r"evalhub_no_such_extra_module"):
        require_extra(ABSENT, why="role de-duplication")


@pytest.mark.parametrize("required", ["", "1"])
def test_an_installed_extra_lets_the_test_run(monkeypatch, required):
    monkeypatch.setenv("EVALHUB_EXTRAS", required)
    assert require_extra(("json", "csv"), why="anything") is None
