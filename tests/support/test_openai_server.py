"""The test server must look like OpenAI to the real SDK, faults included."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.support.openai_answers import (
    cut_at_length,
    decoy_score,
    default_answer,
    default_reasoning,
)
from tests.support.openai_server import (
    MISSING,
    REFUSAL_TEXT,
    Ask,
    Behaviour,
    OpenAIServer,
    adversarial_answer,
    expected_score,
    huge_answer,
    nul_answer,
    surrogate_answer,
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


# --- Hostile and modern servers -----------------------------------------------------------------


def _wait_until(condition, timeout: float) -> float:
    """Seconds until ``condition()`` held; fails the test past ``timeout``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - started


def _open_dripping_answer(server: OpenAIServer) -> socket.socket:
    """A raw connection whose request got its headers back and none of its body read."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": PROMPT}]}).encode()
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 200")
    return sock


def _streamed(chunks) -> tuple[list[object], str]:
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    return deltas, "".join(delta.content or "" for delta in deltas)


def test_drip_sends_the_headers_at_once_then_a_byte_per_interval(server):
    server.behaviour = Behaviour(drip_interval=0.4)
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": PROMPT}]})

    started = time.monotonic()
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    reply = connection.getresponse()
    headers_after = time.monotonic() - started
    first = reply.read(5)
    five_bytes_after = time.monotonic() - started
    connection.close()

    assert reply.status == 200
    # The whole length is declared up front, so the client cannot tell a drip from a big answer.
    assert int(reply.getheader("Content-Length")) > 300
    assert headers_after < 0.4
    assert first == b'{"id"'
    assert 2.0 <= five_bytes_after < 3.5
    assert server.stats.drips == 1


def test_sdk_timeout_is_per_read_so_a_drip_of_a_byte_per_half_second_outlives_it():
    # Measured with this SDK (httpx2 underneath): timeout=2 bounds each read, not the call. Every
    # byte comes within 0.5 s, so the call is still reading at 3x its timeout; run to the end, the
    # ~400-byte answer arrives whole after ~200 s. Only the connection's end stops it here.
    running = OpenAIServer(Behaviour(drip_interval=0.5)).start()
    outcome: dict[str, object] = {}

    def call() -> None:
        try:
            outcome["response"] = _chat(_client(running, timeout=2))
        except openai.APIError as exc:
            outcome["error"] = exc

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(6)
    still_reading = caller.is_alive()
    stopped = time.monotonic()
    running.stop()
    caller.join(2)

    assert still_reading
    assert not caller.is_alive() and time.monotonic() - stopped < 2
    assert isinstance(outcome.get("error"), openai.APIConnectionError)


def test_a_byte_slower_than_the_read_timeout_does_time_out(server):
    server.behaviour = Behaviour(drip_interval=1.5)

    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        _chat(_client(server, timeout=0.5))

    assert time.monotonic() - started < 1.4


@pytest.mark.parametrize("stream", [False, True])
def test_a_finite_drip_delivers_the_whole_answer(server, stream):
    server.behaviour = Behaviour(drip_interval=0.002, drip_bytes=16)
    client = _client(server)

    if stream:
        _, text = _streamed(_chat(client, stream=True))
    else:
        text = _chat(client).choices[0].message.content

    assert text == f"I would rate it {expected_score(PROMPT)} out of 5. The sentences fit together."
    assert (server.stats.drips, server.stats.drip_hangups) == (1, 0)


def test_rate_drip_picks_the_requests_that_drip(server):
    server.behaviour = Behaviour(drip_interval=0.0, rate_drip=0.5, seed=1)
    client = _client(server)

    for i in range(20):
        _chat(client, f"story {i}")

    assert 0 < server.stats.drips < 20


@pytest.mark.parametrize(("stream", "filler"), [(False, b" "), (True, b": keep-alive\n\n")])
def test_a_wall_clock_deadline_in_the_read_loop_gives_up_on_an_endless_drip(server, stream, filler):
    # The way out that the per-read timeout is not: read the raw body and check the clock between reads.
    server.behaviour = Behaviour(drip_interval=0.1, drip_forever=True)
    client = _client(server, timeout=2)
    received = b""

    started = time.monotonic()
    with client.chat.completions.with_streaming_response.create(
        model="gpt-3.5-turbo", messages=[{"role": "user", "content": PROMPT}], stream=stream
    ) as response:
        for piece in response.iter_bytes():
            received += piece
            if time.monotonic() - started > 1.0:
                break
    elapsed = time.monotonic() - started

    assert 1.0 <= elapsed < 2.0
    # Only filler, which every parser skips: JSON whitespace, or SSE comment lines.
    assert len(received) >= 5 and (filler * len(received)).startswith(received)
    _wait_until(lambda: server.stats.in_flight == 0, 1.0)
    assert server.stats.drip_hangups == 1


def test_a_dripping_handler_stops_soon_after_the_client_hangs_up(server):
    # 5 s between bytes: a handler that only learnt of the hang-up by writing would hold on for 5 s or more.
    server.behaviour = Behaviour(drip_interval=5.0)
    sock = _open_dripping_answer(server)
    assert server.stats.in_flight == 1

    sock.close()

    assert _wait_until(lambda: server.stats.in_flight == 0, 2.0) < 0.5
    assert server.stats.drip_hangups == 1


def test_stop_does_not_wait_for_a_drip_that_never_ends():
    running = OpenAIServer(Behaviour(drip_interval=0.2, drip_forever=True)).start()
    sock = _open_dripping_answer(running)

    started = time.monotonic()
    running.stop()
    stop_took = time.monotonic() - started
    ended_after = _wait_until(lambda: running.stats.in_flight == 0, 2.0)
    sock.close()

    assert stop_took < 1
    assert ended_after < 0.5


def test_async_client_under_wait_for_gives_up_on_a_drip(server):
    server.behaviour = Behaviour(drip_interval=0.5)

    async def call() -> None:
        client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=0, timeout=2)
        try:
            await asyncio.wait_for(
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}]), 1.0
            )
        finally:
            await client.close()

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(call())

    assert 1.0 <= time.monotonic() - started < 2.0
    _wait_until(lambda: server.stats.drip_hangups == 1, 1.0)


def test_closing_the_sync_client_ends_a_call_stuck_in_a_drip(server):
    # A sync call in a worker thread cannot be cancelled; closing its client from outside does end it.
    server.behaviour = Behaviour(drip_interval=0.5)
    client = _client(server, timeout=2)
    errors: list[Exception] = []
    caller = threading.Thread(target=lambda: errors.extend(_capture(lambda: _chat(client))), daemon=True)

    caller.start()
    time.sleep(1.0)
    client.close()
    caller.join(2)

    assert not caller.is_alive()
    assert [type(e) for e in errors] == [openai.APIConnectionError]


def _capture(call) -> list[Exception]:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test reads which one
        return [exc]
    return []


def test_stream_is_parsed_by_the_sdk_into_chunks_that_spell_the_answer(server):
    client = _client(server)

    chunks = list(_chat(client, stream=True, stream_options={"include_usage": True}))
    plain = list(_chat(client, "another prompt", stream=True))

    deltas, text = _streamed(chunks)
    finishes = [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices]
    assert {chunk.object for chunk in chunks} == {"chat.completion.chunk"}
    assert len({chunk.id for chunk in chunks}) == 1
    assert deltas[0].role == "assistant"
    assert text == f"I would rate it {expected_score(PROMPT)} out of 5. The sentences fit together."
    assert finishes[-1] == "stop" and set(finishes[:-1]) == {None}
    # As OpenAI: with include_usage every chunk has usage null and a last one with no choices has it.
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    assert all(chunk.usage is None for chunk in chunks[:-1])
    assert all(chunk.choices and chunk.usage is None for chunk in plain)
    assert server.stats.streams == 2


def test_stream_carries_logprobs_per_delta(server):
    chunks = list(_chat(_client(server), stream=True, logprobs=True))

    tokens = [entry.token for chunk in chunks if chunk.choices and chunk.choices[0].logprobs for entry in chunk.choices[0].logprobs.content]

    assert "".join(tokens) == _streamed(chunks)[1]
    assert tokens[:3] == ["I", " would", " rate"]


@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning"])
def test_stream_sends_reasoning_deltas_before_the_answer(server, field_name):
    server.behaviour = Behaviour(reasoning_field=field_name)

    deltas, text = _streamed(_chat(_client(server), stream=True))

    thoughts = [getattr(delta, field_name, None) for delta in deltas]
    assert "".join(t for t in thoughts if t) == default_reasoning(PROMPT, {})
    assert text == default_answer(PROMPT, {})
    last_thought = max(i for i, t in enumerate(thoughts) if t)
    first_word = min(i for i, delta in enumerate(deltas) if delta.content)
    assert last_thought < first_word


def test_a_megabyte_answer_streams_in_at_most_2000_deltas(server):
    server.behaviour = Behaviour(rate_hostile=1.0, hostile_kind="huge")

    deltas, text = _streamed(_chat(_client(server), stream=True))

    assert len(text) == 1_000_000
    assert text.startswith(default_answer(PROMPT, {}))
    assert len([d for d in deltas if d.content]) <= 2000


def test_legacy_completion_stream_spells_the_answer(server):
    chunks = list(_client(server).completions.create(model="m", prompt=PROMPT, stream=True))

    assert "".join(chunk.choices[0].text for chunk in chunks) == default_answer(PROMPT, {})
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_nul_answer_reaches_the_sdk_as_a_str_with_a_nul(server):
    server.behaviour = Behaviour(answer=nul_answer)
    raw = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
    )

    content = _chat(_client(server)).choices[0].message.content

    assert b"\\u0000" in raw.content
    assert content == f"I would rate it {expected_score(PROMPT)} out of 5.\x00 The sentences fit together."


def test_surrogate_answer_reaches_the_sdk_as_a_str_that_utf8_cannot_encode(server):
    server.behaviour = Behaviour(answer=surrogate_answer)
    raw = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
    )

    content = _chat(_client(server)).choices[0].message.content

    # On the wire it is the JSON escape a real server may send; the body itself is plain ASCII.
    assert b'5. \\ud800 The' in raw.content and raw.content.isascii()
    assert isinstance(content, str) and "\ud800" in content
    with pytest.raises(UnicodeEncodeError):
        content.encode("utf-8")


def test_huge_hostile_answer_is_answer_bytes_long_with_the_verdict_first(server):
    server.behaviour = Behaviour(rate_hostile=1.0, hostile_kind="huge")

    content = _chat(_client(server)).choices[0].message.content

    assert len(content.encode("utf-8")) == 1_000_000
    assert content.startswith(f"I would rate it {expected_score(PROMPT)} out of 5.")
    assert huge_answer(35)(PROMPT, {}) == f"I would rate it {expected_score(PROMPT)} out of 5. The sen"
    assert server.stats.hostile == 1


def test_adversarial_answer_is_a_megabyte_of_parser_bait_without_a_verdict(server):
    server.behaviour = Behaviour(answer=adversarial_answer(1_000_000))

    content = _chat(_client(server)).choices[0].message.content

    assert len(content) == 1_000_000
    digits = re.search(r"\d{4301,}", content)
    with pytest.raises(ValueError):
        int(digits.group())  # past Python's limit on int() of a digit string
    assert content.count("<think>") > 100 and "</think>" not in content
    assert "Score: Score: " in content and "[[[[" in content and "[RESULT] [RESULT]" in content
    assert "out of 5" not in content


def test_hostile_text_and_forced_length_are_drawn_per_choice_and_reproducibly():
    behaviour = Behaviour(rate_hostile=0.5, rate_length=0.3, answer_bytes=3000, seed=5)
    runs = []
    for _ in range(2):
        with OpenAIServer(behaviour) as running:
            choices = _chat(_client(running), n=24).choices
            runs.append([(choice.message.content, choice.finish_reason) for choice in choices])
            counted = (running.stats.hostile, running.stats.cut_for_length)

    contents = [content for content, _ in runs[0]]
    assert runs[0] == runs[1]
    assert {finish for _, finish in runs[0]} == {"stop", "length"}
    assert any("\x00" in c for c in contents) and any("\ud800" in c for c in contents)
    assert any(len(c) == 3000 for c in contents)
    assert any(c.startswith("I would rate it") and c.isprintable() and len(c) < 200 for c in contents)
    assert 0 < counted[0] < 24 and 0 < counted[1] < 24


def test_turning_on_the_new_draws_leaves_the_fault_and_refusal_draws_unchanged():
    def run(behaviour: Behaviour) -> tuple[list[str], int]:
        with OpenAIServer(behaviour) as running:
            client = _client(running)
            outcomes = []
            for i in range(12):
                try:
                    _chat(client, f"item {i}", n=2)
                    outcomes.append("ok")
                except openai.InternalServerError:
                    outcomes.append("500")
            return outcomes, running.stats.refusals

    plain = run(Behaviour(rate_500=0.5, rate_refusal=0.5, seed=7))
    hostile = run(
        Behaviour(
            rate_500=0.5, rate_refusal=0.5, seed=7, rate_hostile=0.5, rate_length=0.5, answer_bytes=100,
            drip_interval=0.0, rate_drip=0.5,
        )
    )

    assert plain == hostile
    assert "ok" in plain[0] and "500" in plain[0] and plain[1] > 0


HOSTILE_USAGE = [10**20, 1e308, "abc", -5, None, MISSING]


@pytest.mark.parametrize("value", HOSTILE_USAGE, ids=repr)
def test_the_default_sdk_client_hands_hostile_usage_back_unchecked(server, value):
    # The SDK builds its models without validation by default: whatever the server sent comes back.
    server.behaviour = Behaviour(usage_fields={"prompt_tokens": value})

    usage = _chat(_client(server)).usage

    expected = None if value is MISSING else value
    assert usage.prompt_tokens == expected and type(usage.prompt_tokens) is type(expected)
    assert usage.completion_tokens == 12


@pytest.mark.parametrize(
    ("value", "accepted"),
    [(10**20, True), (-5, True), (1e308, False), ("abc", False), (None, False), (MISSING, False)],
    ids=repr,
)
def test_strict_sdk_validation_takes_any_integer_in_usage_and_nothing_else(server, value, accepted):
    # 10**20 and -5 pass (pydantic ints are unbounded and unsigned is not checked); 1e308 fails as
    # an integer too large to parse, "abc" as not an integer, null and a missing key as such.
    server.behaviour = Behaviour(usage_fields={"prompt_tokens": value})
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=0, _strict_response_validation=True)

    if accepted:
        assert _chat(client).usage.prompt_tokens == value
    else:
        with pytest.raises(openai.APIResponseValidationError):
            _chat(client)


@pytest.mark.parametrize("usage", [None, MISSING], ids=repr)
@pytest.mark.parametrize("strict", [False, True])
def test_usage_null_or_absent_comes_back_as_none(server, usage, strict):
    server.behaviour = Behaviour(usage_fields=usage)
    client = openai.OpenAI(
        base_url=f"{server.url}/v1", api_key="test", max_retries=0, _strict_response_validation=strict
    )
    raw = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
    ).json()

    assert _chat(client).usage is None
    assert ("usage" in raw) == (usage is None)


@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning"])
def test_reasoning_field_carries_the_trace_beside_an_unchanged_answer(server, field_name):
    server.behaviour = Behaviour(reasoning_field=field_name)

    message = _chat(_client(server)).choices[0].message

    other = {"reasoning_content": "reasoning", "reasoning": "reasoning_content"}[field_name]
    assert getattr(message, field_name) == default_reasoning(PROMPT, {})
    assert getattr(message, other, None) is None
    assert message.content == f"I would rate it {expected_score(PROMPT)} out of 5. The sentences fit together."
    # The trace weighs another score, so reading it as the answer gives a wrong one.
    assert f"Score: {decoy_score(PROMPT)}," in getattr(message, field_name)
    assert decoy_score(PROMPT) != expected_score(PROMPT)


@pytest.mark.parametrize(
    ("style", "shape"),
    [
        ("think", "<think>\n{trace}\n</think>\n\n{answer}"),
        ("close_only", "{trace}\n</think>\n\n{answer}"),
        (
            "harmony",
            "<|channel|>analysis<|message|>{trace}<|end|><|start|>assistant<|channel|>final<|message|>{answer}<|return|>",
        ),
        ("harmony_stripped", "analysis{trace}assistantfinal{answer}"),
    ],
)
def test_inline_reasoning_puts_the_trace_in_the_content(server, style, shape):
    server.behaviour = Behaviour(reasoning_inline=style)

    content = _chat(_client(server)).choices[0].message.content

    trace = default_reasoning(PROMPT, {})
    assert content == shape.format(trace=trace, answer=default_answer(PROMPT, {}))


def test_a_budget_spent_in_the_trace_leaves_the_content_null(server):
    server.behaviour = Behaviour(reasoning_field="reasoning_content")
    client = _client(server)
    trace_words = len(default_reasoning(PROMPT, {}).split())

    in_trace = _chat(client, max_tokens=5).choices[0]
    in_answer = _chat(client, max_tokens=trace_words + 4).choices[0]

    assert (in_trace.finish_reason, in_trace.message.content) == ("length", None)
    assert in_trace.message.reasoning_content == "The user wants a score"
    assert (in_answer.finish_reason, in_answer.message.content) == ("length", "I would rate it")
    assert in_answer.message.reasoning_content == default_reasoning(PROMPT, {})


def test_forced_length_cuts_at_max_tokens_and_rambles_past_a_short_answer(server):
    server.behaviour = Behaviour(rate_length=1.0)
    client = _client(server)

    short = _chat(client, max_tokens=3).choices[0]
    long = _chat(client, max_tokens=20).choices[0]
    unset = _chat(client).choices[0]

    assert (short.message.content, short.finish_reason) == ("I would rate", "length")
    assert long.finish_reason == "length" and len(long.message.content.split()) == 20
    assert long.message.content.startswith(default_answer(PROMPT, {}) + " and")
    assert unset.message.content == cut_at_length(default_answer(PROMPT, {}), 16)
    assert len(unset.message.content.split()) == 16
    assert server.stats.cut_for_length == 3


def test_asked_twice_names_a_prompt_answered_twice_but_not_a_retry_or_another_seed(server):
    client = _client(server)
    _chat(client, "once")
    _chat(client, "twice")
    _chat(client, "twice")
    _chat(client, "seeded", seed=1)
    _chat(client, "seeded", seed=2)
    server.behaviour = Behaviour(rate_429=1.0)
    with pytest.raises(openai.RateLimitError):
        _chat(client, "retried")
    server.behaviour = Behaviour()
    _chat(client, "retried")

    assert server.asked_twice() == [Ask("twice", 1, None)]
    assert server.asked_twice(answered=False) == [Ask("retried", 1, None), Ask("twice", 1, None)]
    assert [server.times_asked(p) for p in ("once", "twice", "seeded", "retried")] == [1, 2, 2, 1]
    assert server.times_asked("retried", answered=False) == 2
    server.reset_stats()
    assert server.asked_twice(answered=False) == []
