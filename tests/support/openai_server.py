"""A real HTTP server that speaks enough of the OpenAI protocol for tests and benchmarks.

Why a real server rather than mocking the SDK: the judging code must survive what the network does
(429 with Retry-After, 500, hung connections, bodies that are not JSON, slow answers, many
concurrent calls), and only a socket exercises the SDK's own retry, timeout and parsing paths.
Standard library only, so it runs wherever the tests run.

Faults are decided per request by a random generator seeded with
``(Behaviour.seed, sha256 of the request body, attempt number)``, where the attempt number counts
how often this exact body has been received. So the same workload meets the same faults on every
run whatever the thread interleaving, and a retry of a failed request gets a fresh draw (it may
succeed next time, as with a real provider). One draw picks at most one request-level fault, in
the order 429, 500, timeout, garbage, so the rates add up (their sum must be <= 1). Refusals are
drawn per choice, because with ``n=3`` a real model may refuse in one sample only.

The default answer depends only on the last user message, so a test can predict it with
``expected_score(prompt_text)``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL_TEXT = (
    "As an AI language model, I cannot rate the story fragment because I do not have "
    "personal preferences or the ability to experience enjoyment."
)
SYSTEM_FINGERPRINT = "fp_evalhub_test"
# What a broken proxy or provider sends with status 200: an HTML error page, JSON cut off in the
# middle, or valid JSON without choices. The SDK reacts differently to each (see the tests).
GARBAGE_KINDS = ("html", "truncated", "no_choices")


def expected_score(prompt_text: str) -> int:
    """The score 1..5 the default answer gives for ``prompt_text`` (the last user message)."""
    return hashlib.sha256(prompt_text.encode("utf-8")).digest()[0] % 5 + 1


def default_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """A ChatGPT-like answer whose score tests can predict with ``expected_score``."""
    return f"I would rate it {expected_score(prompt_text)} out of 5. The sentences fit together."


def first_position_answer(prompt_text: str, request_json: dict[str, Any]) -> str:
    """A pairwise judge with pure position bias: it picks the response shown first (A), whatever it says."""
    return "Both are fine; I prefer the first one.\nAnswer: A"


def default_logprob(text: str, offset: int, token: str) -> float:
    """Every answer token's log-probability by default: a confident model (p ~ 0.95)."""
    return -0.05


@dataclass
class Behaviour:
    """What the server does; replace ``server.behaviour`` at runtime to change it.

    ``latency`` is seconds added to every answer, fixed or a uniform ``(low, high)`` range.
    ``timeout_seconds`` is how long a "timeout" request hangs before the connection is closed
    without a response; make it longer than the client's timeout. ``garbage_kind`` is one of
    ``GARBAGE_KINDS`` or "any" (drawn per request).
    """

    latency: float | tuple[float, float] = 0.0
    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    rate_garbage: float = 0.0
    rate_refusal: float = 0.0
    timeout_seconds: float = 5.0
    garbage_kind: str = "any"
    retry_after: float = 1.0
    seed: int = 0
    answer: Callable[[str, dict[str, Any]], str] = default_answer
    # (answer text, token offset, token) -> that token's log-probability, when a client asks for them.
    logprob: Callable[[str, int, str], float] = default_logprob

    def __post_init__(self) -> None:
        rates = (self.rate_429, self.rate_500, self.rate_timeout, self.rate_garbage)
        if any(not 0 <= r <= 1 for r in (*rates, self.rate_refusal)):
            raise ValueError("every rate must be a probability in [0, 1]")
        if self.garbage_kind not in ("any", *GARBAGE_KINDS):
            raise ValueError(f"garbage_kind must be 'any' or one of {GARBAGE_KINDS}")
        if sum(rates) > 1:
            raise ValueError("rate_429 + rate_500 + rate_timeout + rate_garbage must be <= 1")


@dataclass
class Stats:
    """Counters the tests and benchmarks read; ``requests`` counts every request received."""

    requests: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    timeouts: int = 0
    garbage: int = 0
    refusals: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    bodies: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=1000))


def prompt_text_of(request_json: dict[str, Any]) -> str:
    """The text the default answer is keyed on: the last user message, or the prompt."""
    if "messages" in request_json:
        for message in reversed(request_json.get("messages") or []):
            if isinstance(message, dict) and message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""
    prompt = request_json.get("prompt", "")
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    return prompt if isinstance(prompt, str) else json.dumps(prompt)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _count_tokens(text: str) -> int:
    return len(text.split())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Handlers may be parked in a timeout sleep; stop() must not wait for them.
    block_on_close = False
    # The listen backlog: benchmarks open hundreds of connections at once.
    request_queue_size = 1024

    owner: OpenAIServer


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so the SDK's connection pool reuses connections; every reply has Content-Length.
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes; with Nagle's algorithm the body waits for the client's
    # delayed ACK (40 ms on Linux), which would add to every answer's latency.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        # Quiet: benchmarks send thousands of requests.
        return

    def do_GET(self) -> None:
        owner = self.server.owner
        if self.path.rstrip("/") == "/v1/models":
            owner._record_status(200)
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": owner.model,
                            "object": "model",
                            "created": owner.created,
                            "owned_by": "evalhub-test",
                        }
                    ],
                },
            )
        else:
            owner._record_status(404)
            self._send_error(404, "Not found", "invalid_request_error")

    def do_POST(self) -> None:
        owner = self.server.owner
        owner._enter()
        try:
            self._handle_post(owner)
        except (TypeError, ValueError) as exc:
            # A malformed field (n="x") is the client's fault, as with the real API.
            owner._record_status(400)
            self._send_error(400, f"Invalid request: {exc}", "invalid_request_error")
        finally:
            owner._leave()

    def _handle_post(self, owner: OpenAIServer) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/v1/completions"):
            owner._record_status(404)
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")
            return
        try:
            request_json = json.loads(raw or b"null")
        except ValueError:
            request_json = None
        if not isinstance(request_json, dict):
            owner._record_status(400)
            self._send_error(400, "Request body must be a JSON object", "invalid_request_error")
            return
        if request_json.get("stream"):
            owner._record_status(400)
            self._send_error(400, "stream=true is not supported", "invalid_request_error")
            return
        owner._record_body(request_json)

        behaviour = owner.behaviour
        rng = owner._rng_for(raw, behaviour.seed)
        fault = rng.random()
        delay = _latency(behaviour.latency, rng)

        edge = behaviour.rate_429
        if fault < edge:
            owner._sleep(delay)
            owner._record_status(429)
            seconds = behaviour.retry_after
            self._send_error(
                429,
                "Rate limit reached (simulated).",
                "requests",
                code="rate_limit_exceeded",
                headers={
                    "Retry-After": str(max(0, math.ceil(seconds))),
                    "retry-after-ms": str(int(seconds * 1000)),
                },
            )
            return
        edge += behaviour.rate_500
        if fault < edge:
            owner._sleep(delay)
            owner._record_status(500)
            self._send_error(500, "The server had an error (simulated).", "server_error")
            return
        edge += behaviour.rate_timeout
        if fault < edge:
            owner._count("timeouts")
            owner._sleep(behaviour.timeout_seconds)
            # Hang up without a response, as a proxy that gave up would.
            self.close_connection = True
            return
        edge += behaviour.rate_garbage
        owner._sleep(delay)
        if fault < edge:
            owner._count("garbage")
            owner._record_status(200)
            kind = behaviour.garbage_kind
            if kind == "any":
                kind = GARBAGE_KINDS[rng.randrange(len(GARBAGE_KINDS))]
            if kind == "html":
                self._send_bytes(200, b"<html>502 Bad Gateway</html>", "text/html")
            elif kind == "truncated":
                self._send_bytes(200, b'{"id": "truncated", "choi', "application/json")
            else:
                self._send_json(200, {"id": "garbage", "object": "chat.completion"})
            return

        owner._record_status(200)
        self._send_json(200, owner._completion(request_json, path, rng, behaviour))

    def _send_error(
        self,
        status: int,
        message: str,
        kind: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        self._send_json(status, payload, headers)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _latency(latency: float | tuple[float, float], rng: random.Random) -> float:
    if isinstance(latency, tuple):
        low, high = latency
        return rng.uniform(low, high)
    return float(latency)


_TOKENS = re.compile(r"\s*\S+|\s+")


def answer_tokens(text: str) -> list[tuple[int, str]]:
    """(offset, token) pieces that spell ``text`` exactly, leading whitespace attached to the word as
    BPE tokenizers do (" rate"), so concatenating the tokens gives the answer back, as with OpenAI."""
    return [(m.start(), m.group()) for m in _TOKENS.finditer(text)]


def _chat_logprobs(text: str, top: int, logprob: Callable[[str, int, str], float]) -> dict[str, Any]:
    entries = []
    for offset, token in answer_tokens(text):
        value = float(logprob(text, offset, token))
        alternatives = [{"token": token, "logprob": value, "bytes": list(token.encode())}]
        word = token.strip()
        if word.isdigit():
            # Other scale points as less likely alternatives, for probability-weighted scoring.
            lead = token[: len(token) - len(word)]
            alternatives += [
                {"token": f"{lead}{d}", "logprob": -3.0 - abs(d - int(word)), "bytes": list(f"{lead}{d}".encode())}
                for d in range(1, 6)
                if str(d) != word
            ]
        entries.append({**alternatives[0], "top_logprobs": alternatives[: max(top, 0)]})
    return {"content": entries, "refusal": None}


def _completion_logprobs(text: str, top: int) -> dict[str, Any]:
    tokens = text.split(" ")
    offsets = list(itertools.accumulate([0] + [len(t) + 1 for t in tokens[:-1]]))
    return {
        "tokens": tokens,
        "token_logprobs": [-0.05] * len(tokens),
        "top_logprobs": [{t: -0.05} for t in tokens] if top else None,
        "text_offset": offsets,
    }


class OpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1; ``port=0`` picks a free port.

    Use as a context manager or call ``start()``/``stop()``. ``url`` has no ``/v1`` suffix:
    ``openai.OpenAI(base_url=f"{server.url}/v1", api_key="test")``.
    """

    def __init__(
        self,
        behaviour: Behaviour | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "evalhub-test-model",
        keep_bodies: int = 1000,
    ) -> None:
        self.behaviour = behaviour or Behaviour()
        self.model = model
        self.created = int(time.time())
        self._host = host
        self._port = port
        self._keep_bodies = keep_bodies
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._attempts: dict[str, int] = {}
        self._ids = itertools.count(1)
        self.stats = Stats(bodies=deque(maxlen=keep_bodies))
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> OpenAIServer:
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._port), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        # Wake handlers parked in latency or timeout sleeps so they end with the server.
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset_stats(self) -> None:
        """Clear counters and attempt numbers, so the next workload draws faults afresh."""
        with self._lock:
            in_flight = self.stats.in_flight
            self.stats = Stats(bodies=deque(maxlen=self._keep_bodies), in_flight=in_flight)
            self._attempts.clear()

    # The methods below are called from handler threads.

    def _enter(self) -> None:
        with self._lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.stats.in_flight -= 1

    def _record_status(self, status: int) -> None:
        with self._lock:
            self.stats.by_status[status] += 1

    def _record_body(self, request_json: dict[str, Any]) -> None:
        with self._lock:
            self.stats.bodies.append(request_json)

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _rng_for(self, raw: bytes, seed: int) -> random.Random:
        digest = hashlib.sha256(raw).hexdigest()
        with self._lock:
            attempt = self._attempts.get(digest, 0)
            self._attempts[digest] = attempt + 1
        # str seeds are hashed with SHA-512 by random, so this is stable across processes.
        return random.Random(f"{seed}:{digest}:{attempt}")

    def _completion(
        self,
        request_json: dict[str, Any],
        path: str,
        rng: random.Random,
        behaviour: Behaviour,
    ) -> dict[str, Any]:
        chat = path.endswith("/chat/completions")
        prompt_text = prompt_text_of(request_json)
        n = request_json.get("n") or 1
        n = max(1, min(int(n), 128))
        max_tokens = request_json.get("max_completion_tokens") or request_json.get("max_tokens")
        choices = []
        completion_tokens = 0
        for index in range(n):
            if rng.random() < behaviour.rate_refusal:
                self._count("refusals")
                text = REFUSAL_TEXT
            else:
                text = behaviour.answer(prompt_text, request_json)
            finish_reason = "stop"
            if max_tokens and _count_tokens(text) > int(max_tokens):
                text = " ".join(text.split()[: int(max_tokens)])
                finish_reason = "length"
            completion_tokens += _count_tokens(text)
            choices.append(self._choice(chat, index, text, finish_reason, request_json, behaviour.logprob))
        prompt_tokens = sum(
            _count_tokens(_content_text(m.get("content")))
            for m in request_json.get("messages") or []
            if isinstance(m, dict)
        ) or _count_tokens(prompt_text)
        return {
            "id": f"{'chatcmpl' if chat else 'cmpl'}-{next(self._ids):012d}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": request_json.get("model") or self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    @staticmethod
    def _choice(
        chat: bool,
        index: int,
        text: str,
        finish_reason: str,
        request_json: dict[str, Any],
        logprob: Callable[[str, int, str], float],
    ) -> dict[str, Any]:
        if chat:
            logprobs = None
            if request_json.get("logprobs"):
                logprobs = _chat_logprobs(text, int(request_json.get("top_logprobs") or 0), logprob)
            return {
                "index": index,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": finish_reason,
                "logprobs": logprobs,
            }
        wanted = request_json.get("logprobs")
        return {
            "index": index,
            "text": text,
            "finish_reason": finish_reason,
            "logprobs": _completion_logprobs(text, int(wanted)) if wanted is not None else None,
        }


def _parse_latency(value: str) -> float | tuple[float, float]:
    if "," in value:
        low, high = (float(v) for v in value.split(",", 1))
        return (low, high)
    return float(value)


def main(argv: list[str] | None = None) -> None:
    """Serve until Ctrl-C, for benchmarks: ``python -m tests.support.openai_server --port 8089``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--latency", type=_parse_latency, default=0.0, help="seconds, or LOW,HIGH for uniform")
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--rate-500", type=float, default=0.0)
    parser.add_argument("--rate-timeout", type=float, default=0.0)
    parser.add_argument("--rate-garbage", type=float, default=0.0)
    parser.add_argument("--rate-refusal", type=float, default=0.0)
    parser.add_argument("--timeout-seconds", type=float, default=30.0)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--garbage-kind", choices=("any", *GARBAGE_KINDS), default="any")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="evalhub-test-model")
    args = parser.parse_args(argv)
    behaviour = Behaviour(
        latency=args.latency,
        rate_429=args.rate_429,
        rate_500=args.rate_500,
        rate_timeout=args.rate_timeout,
        rate_garbage=args.rate_garbage,
        rate_refusal=args.rate_refusal,
        timeout_seconds=args.timeout_seconds,
        retry_after=args.retry_after,
        garbage_kind=args.garbage_kind,
        seed=args.seed,
    )
    server = OpenAIServer(behaviour, host=args.host, port=args.port, model=args.model).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        stats = server.stats
        print(
            f"requests={stats.requests} by_status={dict(stats.by_status)} "
            f"timeouts={stats.timeouts} garbage={stats.garbage} refusals={stats.refusals} "
            f"max_in_flight={stats.max_in_flight}",
            flush=True,
        )


if __name__ == "__main__":
    main()
