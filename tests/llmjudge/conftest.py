"""Fixtures for judging: a real OpenAI-protocol server on localhost, judges, fast retry settings."""
from __future__ import annotations

import pytest

from tests.support.openai_server import Behaviour, OpenAIServer


@pytest.fixture
def openai_server():
    with OpenAIServer(Behaviour()) as server:
        yield server


@pytest.fixture(autouse=True)
def _fast_llm_settings(settings):
    # Retries are real but quick: backoff in tens of milliseconds, a call times out after 1 s.
    settings.LLM_BACKOFF_BASE = 0.02
    settings.LLM_BACKOFF_CAP = 0.2
    settings.LLM_TIMEOUT = 1
    settings.LLM_MAX_ATTEMPTS = 6


@pytest.fixture
def make_judge(db, researcher):
    from llmjudge.models import Judge

    def make(name: str = "judge", **fields):
        fields.setdefault("backend", Judge.Backend.FAKE)
        fields.setdefault("model", "fake-model")
        fields.setdefault("samples", 3)
        return Judge.objects.create(name=name, owner=researcher, **fields)

    return make


@pytest.fixture
def server_judge(make_judge, openai_server):
    from llmjudge.models import Judge

    return make_judge(
        "local", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{openai_server.url}/v1", model="test-model"
    )


@pytest.fixture
def story_with_items(story_study):
    """The story study with three items (two groups)."""
    from annotations.models import Item

    texts = [
        ("s1", "human", "The lighthouse keeper counted the ships. None came back.", "Write about a lighthouse."),
        ("s2", "gpt2", "The dog was a dog and it was a good dog. The end was near.", "A dog finds a door."),
        ("s3", "human", "Rain fell on the city for a hundred days; nobody minded.", "Endless rain."),
    ]
    for position, (external_id, group, story, prompt) in enumerate(texts):
        Item.objects.create(
            study=story_study, external_id=external_id, group=group, position=position,
            fields={"story": story, "prompt": prompt},
        )
    return story_study
