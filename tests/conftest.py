"""Shared fixtures: the three standing personas and studies made from the protocol templates."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

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
