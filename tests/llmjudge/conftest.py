"""Fixtures for judging: a real OpenAI-protocol server on localhost, judges, fast retry settings, and for
the browser tests: headless Chromium, a live server per test and stand-ins for the Celery worker."""
from __future__ import annotations

import os
import threading

import pytest
from django.db import connection

from tests.support.browser import chromium
from tests.support.extras import TORCH, require_extra
from tests.support.openai_server import Behaviour, OpenAIServer
from tests.support.tiny_model import build_tiny_model


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
        fields.setdefault("owner", researcher)
        return Judge.objects.create(name=name, **fields)

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


@pytest.fixture
def browser_page(monkeypatch):
    with chromium() as browser:
        # Playwright's sync API runs its own event loop; pytest-django's async-unsafe check would
        # otherwise refuse the ORM calls this test makes around it.
        monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield browser.new_page()


@pytest.fixture
def live_url(transactional_db):
    """A live server for this test only: pytest-django's session-wide one still holds a database
    connection when the test database is dropped at the end of the session."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    thread = LiveServerThread("localhost", StaticFilesHandler)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://localhost:{thread.port}"
    thread.terminate()


@pytest.fixture
def worker_threads(monkeypatch):
    """Stand-in for a Celery worker: each enqueued chunk runs in a thread of the test process."""
    from llmjudge import tasks
    from llmjudge.runs import chunks

    threads: list[threading.Thread] = []

    def work(run_id: int, ids: list[int]) -> None:
        try:
            chunks.run_chunk(run_id=run_id, rating_ids=ids)
        finally:
            connection.close()

    def apply_async(args, queue):  # noqa: ANN001
        thread = threading.Thread(target=work, args=tuple(args), daemon=True)
        threads.append(thread)
        thread.start()

    monkeypatch.setattr(tasks.judge_chunk, "apply_async", apply_async)
    yield threads
    for thread in threads:
        thread.join(timeout=30)


@pytest.fixture
def inline_chunks(monkeypatch):
    """Stand-in for a Celery worker on SQLite: each enqueued chunk runs at once, in the thread that enqueued
    it (the live server's, once the run's transaction has committed), so only one thread writes at a time."""
    from llmjudge import tasks

    done: list[tuple[int, list[int]]] = []

    def apply_async(args, queue):  # noqa: ANN001
        tasks.judge_chunk(*args)
        done.append(tuple(args))

    monkeypatch.setattr(tasks.judge_chunk, "apply_async", apply_async)
    return done


@pytest.fixture
def sent(monkeypatch):
    """Chunks enqueued by the pages, captured instead of sent to the broker (run them with work_off)."""
    from llmjudge import tasks

    captured: list[tuple[int, list[int]]] = []
    monkeypatch.setattr(tasks.judge_chunk, "apply_async", lambda args, queue: captured.append(tuple(args)))
    return captured


def work_off(sent: list[tuple[int, list[int]]]) -> None:
    """What a worker does with the chunks captured by ``sent``: call the task with the same arguments."""
    from llmjudge import tasks

    while sent:
        run_id, ids = sent.pop(0)
        tasks.judge_chunk(run_id, ids)


@pytest.fixture
def owner_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def chunk_worker(request):
    """Threads on a database server (the browser watches the run progress), inline chunks on SQLite."""
    return request.getfixturevalue("inline_chunks" if connection.vendor == "sqlite" else "worker_threads")


@pytest.fixture(scope="session")  # built once: the local-model and transformers-backend tests share it
def tiny_model_path(tmp_path_factory):
    require_extra(TORCH, why="the local transformers backend")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny-gpt2")))
