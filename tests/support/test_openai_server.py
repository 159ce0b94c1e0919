"""The test server must look like OpenAI to the real SDK, faults included."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.support.openai_server import (
    REFUSAL_TEXT,
    Behaviour,
    OpenAIServer,
    expected_score,
)

PROMPT = "How well do the sentences in the story fragment fit together?"


def _client(server: OpenAIServer, *, timeout: float = 10.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=0, timeout=timeout)


def _chat(client: openai.OpenAI, prompt: str = PROMPT, **kwargs: object) -> object:
    return client.chat.completions.create(
        model="gpt-3.5-turbo",
        messages=[{"role": "user", "content": prompt}],
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture
def server():
    with OpenAIServer() as running:
        yield running


def test_chat_completion_is_parsed_by_the_sdk_with_the_predicted_answer(server):
    response = _chat(_client(server), temperature=1.0, top_p=0.9)

    assert response.object == "chat.completion"
    assert response.model == "gpt-3.5-turbo"
    assert len(response.choices) == 1
    choice = response.choices[0]
    assert choice.index == 0
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == (f"I would rate it {expected_score(PROMPT)} out of 5. The sentences fit together.")
    assert response.usage.total_tokens == (response.usage.prompt_tokens + response.usage.completion_tokens)
    assert server.stats.by_status[200] == 1
    assert server.stats.bodies[-1]["top_p"] == 0.9


def test_legacy_completion_is_parsed_by_the_sdk(server):
    response = _client(server).completions.create(model="text-davinci-003", prompt=PROMPT, max_tokens=50)

    assert response.object == "text_completion"
    assert response.choices[0].text.startswith(f"I would rate it {expected_score(PROMPT)}")
    assert response.choices[0].finish_reason == "stop"


def test_n_returns_that_many_choices(server):
    response = _chat(_client(server), n=3)

    assert [c.index for c in response.choices] == [0, 1, 2]


def test_max_tokens_truncates_with_finish_reason_length(server):
    response = _chat(_client(server), max_tokens=3)

    assert response.choices[0].message.content == "I would rate"
    assert response.choices[0].finish_reason == "length"


def test_chat_logprobs_are_returned_when_asked(server):
    response = _chat(_client(server), logprobs=True, top_logprobs=3)

    content = response.choices[0].logprobs.content
    # As from OpenAI: word pieces with their leading space, which spell the answer exactly.
    assert [t.token for t in content][:4] == ["I", " would", " rate", " it"]
    assert "".join(t.token for t in content) == response.choices[0].message.content
    assert all(t.logprob == -0.05 for t in content)
    assert len(content[4].top_logprobs) == 3
    assert content[4].top_logprobs[1].token.startswith(" ") and content[4].top_logprobs[1].logprob < -3


def test_chat_logprobs_follow_the_behaviours_logprob_function(server):
    server.behaviour = Behaviour(answer=lambda prompt, body: "Vote: Story 2", logprob=lambda text, offset, token: -offset / 10)

    content = _chat(_client(server), logprobs=True).choices[0].logprobs.content

    assert [(t.token, t.logprob) for t in content] == [("Vote:", 0.0), (" Story", -0.5), (" 2", -1.1)]


def test_models_endpoint_lists_the_server_model(server):
    models = _client(server).models.list()

    assert [m.id for m in models.data] == ["evalhub-test-model"]


def test_different_prompts_get_their_own_predicted_score(server):
    client = _client(server)
    prompts = [f"story {i}" for i in range(20)]

    contents = [_chat(client, p).choices[0].message.content for p in prompts]

    assert contents == [f"I would rate it {expected_score(p)} out of 5. The sentences fit together." for p in prompts]
    assert len({expected_score(p) for p in prompts}) > 1


def test_custom_answer_callable_receives_prompt_and_request(server):
    server.behaviour = Behaviour(answer=lambda prompt, req: f"[RESULT] {len(prompt)} {req['model']}")

    response = _chat(_client(server), "abc")

    assert response.choices[0].message.content == "[RESULT] 3 gpt-3.5-turbo"


def test_429_surfaces_as_rate_limit_error_with_retry_after(server):
    server.behaviour = Behaviour(rate_429=1.0, retry_after=2)

    with pytest.raises(openai.RateLimitError) as caught:
        _chat(_client(server))

    assert caught.value.response.headers["Retry-After"] == "2"
    assert server.stats.by_status[429] == 1


def test_500_surfaces_as_internal_server_error(server):
    server.behaviour = Behaviour(rate_500=1.0)

    with pytest.raises(openai.InternalServerError):
        _chat(_client(server))


def test_hung_request_surfaces_as_timeout(server):
    server.behaviour = Behaviour(rate_timeout=1.0, timeout_seconds=2.0)

    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        _chat(_client(server, timeout=0.3))

    assert time.monotonic() - started < 1.5
    assert server.stats.timeouts == 1


# What the SDK does with a 200 that is not a completion; backends must turn all of these into a
# classified error. The default client does not validate: HTML comes back as a str and JSON
# without choices as a ChatCompletion whose choices is None. Truncated JSON raises the raw
# json.JSONDecodeError even with strict validation.
@pytest.mark.parametrize(
    ("kind", "strict", "expected"),
    [
        ("html", True, openai.APIResponseValidationError),
        ("no_choices", True, openai.APIResponseValidationError),
        ("truncated", True, json.JSONDecodeError),
        ("truncated", False, json.JSONDecodeError),
    ],
)
def test_garbage_surfaces_as_an_error(server, kind, strict, expected):
    server.behaviour = Behaviour(rate_garbage=1.0, garbage_kind=kind)
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key="test",
        max_retries=0,
        _strict_response_validation=strict,
    )

    with pytest.raises(expected):
        _chat(client)

    assert server.stats.garbage == 1


def test_garbage_without_strict_validation_comes_back_unusable(server):
    client = _client(server)
    server.behaviour = Behaviour(rate_garbage=1.0, garbage_kind="html")
    html = _chat(client)
    server.behaviour = Behaviour(rate_garbage=1.0, garbage_kind="no_choices")
    no_choices = _chat(client, "another prompt")

    assert html == "<html>502 Bad Gateway</html>"
    assert no_choices.choices is None


def test_any_garbage_kind_is_drawn_per_request(server):
    server.behaviour = Behaviour(rate_garbage=1.0, seed=3)
    client = _client(server)

    outcomes = set()
    for i in range(12):
        try:
            outcomes.add(type(_chat(client, f"p{i}")).__name__)
        except json.JSONDecodeError:
            outcomes.add("JSONDecodeError")

    assert outcomes == {"str", "ChatCompletion", "JSONDecodeError"}


def test_refusal_rate_one_returns_the_refusal_text(server):
    server.behaviour = Behaviour(rate_refusal=1.0)

    response = _chat(_client(server), n=2)

    assert [c.message.content for c in response.choices] == [REFUSAL_TEXT, REFUSAL_TEXT]
    assert server.stats.refusals == 2


def test_faults_are_reproducible_and_retries_draw_again():
    outcomes = []
    for _ in range(2):
        with OpenAIServer(Behaviour(rate_500=0.5, seed=7)) as running:
            client = _client(running)
            run = []
            for i in range(10):
                for _attempt in range(3):
                    try:
                        _chat(client, f"item {i}")
                        run.append("ok")
                    except openai.InternalServerError:
                        run.append("500")
            outcomes.append(run)

    assert outcomes[0] == outcomes[1]
    assert "ok" in outcomes[0] and "500" in outcomes[0]


def test_sdk_retries_a_429_and_then_succeeds(server):
    # Rate 0.5 with a fixed seed: some attempt within 8 succeeds; Retry-After kept tiny.
    server.behaviour = Behaviour(rate_429=0.5, retry_after=0.01)
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=8)

    response = _chat(client)

    assert response.choices[0].message.content.startswith("I would rate it")


def test_latency_is_respected(server):
    server.behaviour = Behaviour(latency=0.3)
    client = _client(server)

    started = time.monotonic()
    _chat(client)

    assert 0.3 <= time.monotonic() - started < 2.0


def test_latency_range_stays_within_bounds(server):
    server.behaviour = Behaviour(latency=(0.1, 0.2))
    client = _client(server)

    started = time.monotonic()
    _chat(client)

    assert 0.1 <= time.monotonic() - started < 1.5


def test_64_concurrent_requests_all_succeed_and_overlap(server):
    # A latency long enough that every client thread has started before the first answer, even on a
    # loaded 2-core machine (1 s was not always: 46 of 64 in flight once, with a full suite running
    # beside it): the test is about the server holding many requests at once.
    server.behaviour = Behaviour(latency=3.0)
    client = openai.OpenAI(
        base_url=f"{server.url}/v1",
        api_key="test",
        max_retries=0,
        timeout=20,
        http_client=openai.DefaultHttpxClient(limits=httpx.Limits(max_connections=128)),
    )
    prompts = [f"story {i}" for i in range(64)]

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=64) as pool:
        contents = list(pool.map(lambda p: _chat(client, p).choices[0].message.content, prompts))
    elapsed = time.monotonic() - started

    assert all(c.startswith(f"I would rate it {expected_score(p)}") for c, p in zip(contents, prompts, strict=True))
    assert server.stats.by_status[200] == 64
    assert server.stats.max_in_flight >= 48
    assert elapsed < 64 * 3.0 / 4


def test_raw_http_keep_alive_serves_two_requests_on_one_connection(server):
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    for _ in range(2):
        connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        reply = connection.getresponse()
        payload = json.loads(reply.read())
        assert reply.status == 200
        assert payload["choices"][0]["message"]["role"] == "assistant"
    connection.close()


def test_unknown_path_is_404_and_bad_json_is_400(server):
    request = urllib.request.Request(f"{server.url}/v1/nothing", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as not_found:
        urllib.request.urlopen(request, timeout=5)
    request = urllib.request.Request(f"{server.url}/v1/chat/completions", data=b"not json", method="POST")
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(request, timeout=5)

    assert not_found.value.code == 404
    assert bad.value.code == 400


def test_rates_that_cannot_be_probabilities_are_rejected():
    with pytest.raises(ValueError):
        Behaviour(rate_429=0.6, rate_500=0.6)
    with pytest.raises(ValueError):
        Behaviour(rate_refusal=1.5)


def test_256_concurrent_connections_are_all_served(server):
    server.behaviour = Behaviour(latency=3.0)
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    limits = httpx.Limits(max_connections=300, max_keepalive_connections=300)

    with httpx.Client(limits=limits, timeout=30) as http, ThreadPoolExecutor(256) as pool:
        statuses = list(
            pool.map(
                lambda _: http.post(f"{server.url}/v1/chat/completions", json=body).status_code,
                range(256),
            )
        )

    assert statuses == [200] * 256
    # The client side (thread start-up, httpx's pool lock) limits how many overlap, not the server.
    assert server.stats.max_in_flight >= 128


def test_stop_does_not_wait_for_a_hung_request():
    running = OpenAIServer(Behaviour(rate_timeout=1.0, timeout_seconds=60)).start()
    client = _client(running, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        _chat(client)

    started = time.monotonic()
    running.stop()

    assert time.monotonic() - started < 2


def test_command_line_serves_until_interrupted():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--port", "0", "--latency", "0.01"],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        reply = httpx.get(f"{url}/v1/models", timeout=5)
        assert reply.json()["data"][0]["id"] == "evalhub-test-model"
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=10)

    assert "requests=" in out
