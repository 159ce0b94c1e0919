"""Backends: the real openai SDK against a real local server, every failure classified."""
from __future__ import annotations

import asyncio

import httpx
import openai
import pytest

from llmjudge.backends.registry import (
    BACKENDS,
    BackendConfig,
    BackendError,
    BackendRequest,
    FakeBackend,
    backend_for,
    classify_sdk_error,
)
from tests.support.openai_server import Behaviour, OpenAIServer, expected_score

PROMPT = "How well do the sentences in the story fragment fit together? (on a scale of 1-5, with 1 being the lowest)"


def _request(**kwargs) -> BackendRequest:
    values = {
        "model": "test-model",
        "messages": [{"role": "user", "content": PROMPT}],
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 64,
    }
    values.update(kwargs)
    return BackendRequest(**values)


def _complete(server: OpenAIServer, request: BackendRequest | None = None, **config):
    async def go():
        backend = backend_for(
            BackendConfig(backend="openai-compatible", model="test-model", base_url=f"{server.url}/v1", timeout=1.0, **config)
        )
        try:
            return await backend.complete(request or _request())
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_registry_names_the_four_callable_backends():
    assert set(BACKENDS) == {"fake", "openai", "openai-compatible", "transformers"}


def test_unknown_backend_is_a_fatal_error_naming_the_known_ones():
    with pytest.raises(BackendError) as caught:
        backend_for(BackendConfig(backend="imported", model="x"))
    assert caught.value.fatal and not caught.value.transient
    assert "fake, openai, openai-compatible, transformers" in str(caught.value)


def test_fake_backend_is_deterministic_per_attempt_and_differs_between_samples():
    backend = FakeBackend(BackendConfig(backend="fake", model="m"))
    first = [asyncio.run(backend.complete(_request(sample=s))).text for s in range(6)]
    again = [asyncio.run(backend.complete(_request(sample=s))).text for s in range(6)]
    assert first == again
    assert len(set(first)) > 1


def test_fake_backend_answers_on_the_requested_scale_and_can_refuse():
    backend = FakeBackend(BackendConfig(backend="fake", model="m", options={"fake_refusal_rate": 1.0}))
    answer = asyncio.run(backend.complete(_request(scale=(1, 7))))
    assert answer.text.startswith("As an AI language model, I cannot")
    assert answer.tokens_completion == len(answer.text.split())


def test_openai_compatible_backend_returns_the_servers_answer_with_usage_and_latency(openai_server):
    openai_server.behaviour = Behaviour(latency=0.05)
    answer = _complete(openai_server)
    assert answer.text == f"I would rate it {expected_score(PROMPT)} out of 5. The sentences fit together."
    assert answer.model == "test-model"
    assert answer.tokens_prompt == len(PROMPT.split())
    assert answer.tokens_completion == len(answer.text.split())
    assert answer.finish_reason == "stop"
    assert answer.latency_ms >= 50
    body = openai_server.stats.bodies[-1]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (1.0, 0.9, 64)


def test_seed_is_sent_only_when_set(openai_server):
    _complete(openai_server, _request(seed=7))
    _complete(openai_server, _request(seed=None))
    assert openai_server.stats.bodies[0]["seed"] == 7
    assert "seed" not in openai_server.stats.bodies[1]


def test_legacy_completions_endpoint_sends_the_prompt(openai_server):
    answer = _complete(openai_server, _request(endpoint="completions"))
    assert answer.text.startswith(f"I would rate it {expected_score(PROMPT)}")
    assert openai_server.stats.bodies[-1]["prompt"] == PROMPT


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (Behaviour(rate_429=1.0, retry_after=2.5), "HTTP 429"),
        (Behaviour(rate_500=1.0), "HTTP 500"),
        (Behaviour(rate_timeout=1.0, timeout_seconds=3.0), "timeout"),
        (Behaviour(rate_garbage=1.0, garbage_kind="html"), "invalid response body"),
        (Behaviour(rate_garbage=1.0, garbage_kind="truncated"), "invalid response body"),
        (Behaviour(rate_garbage=1.0, garbage_kind="no_choices"), "invalid response body"),
    ],
    ids=["429", "500", "timeout", "html-200", "truncated-json-200", "no-choices-200"],
)
def test_server_faults_are_transient_errors(openai_server, behaviour, message):
    openai_server.behaviour = behaviour
    with pytest.raises(BackendError) as caught:
        _complete(openai_server)
    assert caught.value.transient is True
    assert caught.value.fatal is False
    assert message in str(caught.value)


def test_429_carries_the_servers_retry_after(openai_server):
    openai_server.behaviour = Behaviour(rate_429=1.0, retry_after=2.5)
    with pytest.raises(BackendError) as caught:
        _complete(openai_server)
    assert caught.value.retry_after == 2.5


def test_unknown_path_404_is_fatal_for_the_run(openai_server):
    async def go():
        backend = backend_for(BackendConfig(backend="openai-compatible", model="m", base_url=f"{openai_server.url}/nope"))
        try:
            await backend.complete(_request())
        finally:
            await backend.aclose()

    with pytest.raises(BackendError) as caught:
        asyncio.run(go())
    assert caught.value.fatal and not caught.value.transient
    assert "HTTP 404" in str(caught.value)


def test_connection_refused_is_transient():
    with OpenAIServer() as server:
        url = server.url
    async def go():
        backend = backend_for(BackendConfig(backend="openai-compatible", model="m", base_url=f"{url}/v1", timeout=1.0))
        try:
            await backend.complete(_request())
        finally:
            await backend.aclose()

    with pytest.raises(BackendError) as caught:
        asyncio.run(go())
    assert caught.value.transient is True


def _status_error(cls, status: int):
    response = httpx.Response(status, request=httpx.Request("POST", "http://x/v1/chat/completions"))
    return cls(f"status {status}", response=response, body=None)


@pytest.mark.parametrize(
    ("error", "transient", "fatal"),
    [
        (_status_error(openai.BadRequestError, 400), False, False),
        (_status_error(openai.UnprocessableEntityError, 422), False, False),
        (_status_error(openai.AuthenticationError, 401), False, True),
        (_status_error(openai.PermissionDeniedError, 403), False, True),
        (_status_error(openai.NotFoundError, 404), False, True),
        (_status_error(openai.RateLimitError, 429), True, False),
        (_status_error(openai.InternalServerError, 503), True, False),
        (_status_error(openai.APIStatusError, 408), True, False),
        (openai.APITimeoutError(request=httpx.Request("POST", "http://x")), True, False),
        (ValueError("Expecting value"), False, False),
    ],
    ids=["400", "422", "401", "403", "404", "429", "503", "408", "timeout", "unknown"],
)
def test_sdk_errors_are_classified(error, transient, fatal):
    classified = classify_sdk_error(error)
    assert (classified.transient, classified.fatal) == (transient, fatal)


def test_openai_backend_without_its_key_is_fatal_and_names_only_the_variable(monkeypatch):
    monkeypatch.delenv("EVALHUB_JUDGE_KEY_TEST", raising=False)
    monkeypatch.delenv("EVALHUB_JUDGE_KEY_TEST_FILE", raising=False)
    with pytest.raises(BackendError) as caught:
        backend_for(BackendConfig(backend="openai", model="gpt-4o-mini", api_key_env="EVALHUB_JUDGE_KEY_TEST"))
    assert caught.value.fatal
    assert "EVALHUB_JUDGE_KEY_TEST" in str(caught.value)


def test_api_key_may_come_from_a_file(monkeypatch, tmp_path, openai_server):
    secret = tmp_path / "key"
    secret.write_text("sk-from-file\n")
    monkeypatch.delenv("EVALHUB_JUDGE_KEY_TEST", raising=False)
    monkeypatch.setenv("EVALHUB_JUDGE_KEY_TEST_FILE", str(secret))
    backend = backend_for(
        BackendConfig(backend="openai", model="m", base_url=f"{openai_server.url}/v1", api_key_env="EVALHUB_JUDGE_KEY_TEST")
    )
    assert backend.client.api_key == "sk-from-file"
    asyncio.run(backend.aclose())


def test_the_sdks_own_transport_errors_are_classified_against_a_real_server():
    """The openai SDK's transport is httpx2 (not httpx, a dev-only package): a connection refused and a read
    timeout raised by the very client class the backend hands the SDK are classified transient."""
    import httpx2

    from llmjudge.backends.registry import classify_sdk_error

    with OpenAIServer() as server:
        closed = server.url
    with openai.DefaultHttpxClient(timeout=1.0) as http, pytest.raises(httpx2.ConnectError) as refused:
        http.post(f"{closed}/v1/chat/completions", json={})
    error = classify_sdk_error(refused.value)
    assert (error.transient, error.fatal, str(error).startswith("connection error")) == (True, False, True)

    with OpenAIServer(Behaviour(latency=2.0)) as server, openai.DefaultHttpxClient(timeout=0.2) as http:
        with pytest.raises(httpx2.TimeoutException) as slow:
            http.post(f"{server.url}/v1/chat/completions", json={"model": "m", "messages": []})
    error = classify_sdk_error(slow.value)
    assert (error.transient, str(error)) == (True, "timeout")
