"""The reliability tests' world: two researchers' studies, raters, runs and keys (tests/reliability/access.py)."""
from __future__ import annotations

import pytest

from tests.reliability.access import World, build_world


@pytest.fixture
def world(researcher, other_researcher) -> World:
    return build_world(owner=researcher, other=other_researcher)
