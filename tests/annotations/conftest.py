"""The annotations tests' study: the story template, open, with the standard items (tests/support/raterkit.py).
A test file that needs another study defines its own ``study`` fixture, which takes precedence."""
from __future__ import annotations

import pytest

from tests.support.raterkit import add_story_items, open_study


@pytest.fixture
def study(story_study):
    open_study(story_study)
    add_story_items(story_study)
    return story_study
