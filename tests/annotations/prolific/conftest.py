"""The Prolific tests' local server, the token granted to the owner researcher, and a study that needs four
places (4 items x 2 raters, 2 items each, a check after the first item whose failures are only warned)."""
from __future__ import annotations

import pytest

from tests.support.prolific_participants import TOKEN_ENV
from tests.support.prolific_server import ProlificServer
from tests.support.raterkit import add_story_items, open_study


@pytest.fixture
def server():
    with ProlificServer() as running:
        yield running


@pytest.fixture
def prolific(settings, monkeypatch, server):
    settings.PROLIFIC_API_URL = server.url
    settings.PROLIFIC_TOKEN_VARIABLES = [f"{TOKEN_ENV}=user:owner"]
    # Every participant arrives from 127.0.0.1; the per-address limit on new open-link raters is not under test
    # (and under REDIS_URL its count outlives the test).
    settings.OPEN_LINK_RATERS_PER_ADDRESS = 100_000
    monkeypatch.setenv(TOKEN_ENV, server.token)
    return server


@pytest.fixture
def study(story_study):
    add_story_items(story_study)
    # 4 items x 2 raters, 2 items each: 4 places; a check after the first item, failures only warned.
    return open_study(story_study, raters_per_item=2, items_per_rater=2, attention_positions=[1],
                      attention_rule="warn")
