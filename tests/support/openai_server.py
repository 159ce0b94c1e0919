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
drawn per choice, because with ``n=3`` a real model may refuse in one sample only. The newer
draws (drip, hostile text, forced length) come from their own generators seeded from the same key
plus a name, so turning them on changes none of the draws above.

The default answer depends only on the last user message, so a test can predict it with
``expected_score(prompt_text)``. ``stream: true`` is answered with server-sent events as OpenAI and
vLLM send them (chunked transfer encoding, ``data: {chunk}`` events, ``data: [DONE]``).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
import select
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

from tests.support.openai_answers import (
    DEFAULT_MAX_TOKENS,
    HOSTILE_KINDS,
    INLINE_STYLES,
    REASONING_FIELDS,
    REFUSAL_TEXT,
    AnswerFn,
    chat_logprobs,
    completion_logprobs,
    content_text,
    count_tokens,
    default_answer,
    default_reasoning,
    generate,
    hostile_answer,
    stream_events,
    with_inline_reasoning,
)

# Re-exported: tests import the answer helpers from here as well.
from tests.support.openai_answers import adversarial_answer as adversarial_answer
from tests.support.openai_answers import answer_tokens as answer_tokens
from tests.support.openai_answers import expected_score as expected_score
from tests.support.openai_answers import first_position_answer as first_position_answer
from tests.support.openai_answers import huge_answer as huge_answer
from tests.support.openai_answers import nul_answer as nul_answer
from tests.support.openai_answers import prompt_text_of as prompt_text_of
from tests.support.openai_answers import surrogate_answer as surrogate_answer

SYSTEM_FINGERPRINT = "fp_evalhub_test"
# What a broken proxy or provider sends with status 200: an HTML error page, JSON cut off in the
# middle, or valid JSON without choices. The SDK reacts differently to each (see the tests).
GARBAGE_KINDS = ("html", "truncated", "no_choices")
# What a forever drip sends instead of the answer: bytes each parser skips (JSON whitespace, SSE comments).
_JSON_FILLER = b" "
_SSE_FILLER = b": keep-alive\n\n"
# How often a dripping handler looks for a client hang-up or a server stop.
_HANGUP_POLL = 0.05


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


# In Behaviour.usage_fields: leave this key (or the whole usage object) out of the answer.
MISSING = _Missing()


class RawNumber(str):
    """In Behaviour.usage_fields: a JSON number written verbatim, such as 5,000 digits, which Python's own
    ``int`` refuses to print (and so ``json.dumps`` cannot write)."""


def json_bytes(payload: object) -> bytes:
    """``payload`` as JSON, each RawNumber written as the bare number it spells."""
    text = json.dumps(payload)
    usage = payload.get("usage") if isinstance(payload, dict) else None
    for value in (usage.values() if isinstance(usage, dict) else ()):
        if isinstance(value, RawNumber):
            text = text.replace(json.dumps(str(value)), str(value))
    return text.encode("utf-8")


def default_logprob(text: str, offset: int, token: str) -> float:
    """Every answer token's log-probability by default: a confident model (p ~ 0.95)."""
    return -0.05


@dataclass
class Behaviour:
    """What the server does; replace ``server.behaviour`` at runtime to change it. The drip, hostile
    text, usage, reasoning and length behaviours below are all off by default.

    ``latency`` is seconds added to every answer, fixed or a uniform ``(low, high)`` range.
    ``timeout_seconds`` is how long a "timeout" request hangs before the connection is closed
    without a response; make it longer than the client's timeout. ``garbage_kind`` is one of
    ``GARBAGE_KINDS`` or "any" (drawn per request).

    Drip (a server that answers, slowly): with ``drip_interval`` set, a 200 answer (JSON or stream)
    sends its headers at once, then ``drip_bytes`` bytes of body every ``drip_interval`` seconds. The
    draw ``rate_drip`` picks which requests drip. With ``drip_forever`` the body never comes: JSON
    whitespace or SSE comment lines follow the headers without end. A dripping handler stops within
    ``_HANGUP_POLL`` seconds of the client closing the connection or ``stop()``.

    Hostile text: ``rate_hostile`` is drawn per choice; a hit answers with ``hostile_kind`` ("nul",
    "surrogate", "huge", "adversarial", or "any" drawn per choice), the last two ``answer_bytes``
    characters long. For every answer to be hostile, set ``answer`` to one of ``nul_answer``,
    ``surrogate_answer``, ``huge_answer(size)``, ``adversarial_answer(size)`` instead.

    Usage: ``usage_fields`` replaces fields of the computed usage (``{"prompt_tokens": 10**20}``,
    ``"abc"``, ``1e308``, ``-5``, ``None`` for JSON null, ``MISSING`` to leave the key out); set it to
    ``None`` for ``"usage": null`` or to ``MISSING`` for no usage at all.

    Reasoning: ``reasoning_field`` ("reasoning_content" or "reasoning") puts the trace
    ``reasoning_text(prompt, request)`` in that message field (and streams it as such deltas);
    ``reasoning_inline`` (one of ``INLINE_STYLES``) puts it in the content instead, as
    ``<think>…</think>answer``, ``…</think>answer`` or gpt-oss channels. The answer after the trace
    is unchanged, so ``expected_score`` still predicts the verdict; the default trace names a decoy
    score. The trace counts against max_tokens: a budget spent in the trace leaves content null.

    Length: ``rate_length`` is drawn per choice; a hit is cut at max_tokens (16 when the request sets
    none) with ``finish_reason`` "length": the content is exactly that many words, the answer followed
    by the model rambling on if it was shorter.
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
    answer: AnswerFn = default_answer
    # (answer text, token offset, token) -> that token's log-probability, when a client asks for them.
    logprob: Callable[[str, int, str], float] = default_logprob
    drip_interval: float | None = None
    drip_bytes: int = 1
    drip_forever: bool = False
    rate_drip: float = 1.0
    rate_hostile: float = 0.0
    hostile_kind: str = "any"
    answer_bytes: int = 1_000_000
    usage_fields: dict[str, Any] | _Missing | None = field(default_factory=dict)
    reasoning_field: str | None = None
    reasoning_inline: str | None = None
    reasoning_text: AnswerFn = default_reasoning
    rate_length: float = 0.0

    def __post_init__(self) -> None:
        rates = (self.rate_429, self.rate_500, self.rate_timeout, self.rate_garbage)
        others = (self.rate_refusal, self.rate_drip, self.rate_hostile, self.rate_length)
        if any(not 0 <= r <= 1 for r in (*rates, *others)):
            raise ValueError("every rate must be a probability in [0, 1]")
        if self.garbage_kind not in ("any", *GARBAGE_KINDS):
            raise ValueError(f"garbage_kind must be 'any' or one of {GARBAGE_KINDS}")
        if sum(rates) > 1:
            raise ValueError("rate_429 + rate_500 + rate_timeout + rate_garbage must be <= 1")
        if self.drip_interval is not None and (self.drip_interval < 0 or self.drip_bytes < 1):
            raise ValueError("drip_interval must be >= 0 and drip_bytes >= 1")
        if self.hostile_kind not in ("any", *HOSTILE_KINDS):
            raise ValueError(f"hostile_kind must be 'any' or one of {HOSTILE_KINDS}")
        if self.reasoning_field not in (None, *REASONING_FIELDS):
            raise ValueError(f"reasoning_field must be None or one of {REASONING_FIELDS}")
        if self.reasoning_inline not in (None, *INLINE_STYLES):
            raise ValueError(f"reasoning_inline must be None or one of {INLINE_STYLES}")


class Ask(NamedTuple):
    """What makes two requests the same question: the prompt text (last user message), n and seed."""

    prompt: str
    n: int
    seed: Any


@dataclass
class Stats:
    """Counters the tests and benchmarks read; ``requests`` counts every request received.

    ``asks`` counts every well-formed completion request by ``Ask`` (retries after a fault
    included); ``answered`` only those that got a completion, not a fault or garbage (a drip the
    client gave up on included: a provider bills it). ``drips`` counts answers that dripped, ``drip_hangups`` those that ended
    before their last byte (client gone or server stopped).
    """

    requests: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    timeouts: int = 0
    garbage: int = 0
    refusals: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    bodies: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=1000))
    streams: int = 0
    drips: int = 0
    drip_hangups: int = 0
    hostile: int = 0
    cut_for_length: int = 0
    asks: Counter[Ask] = field(default_factory=Counter)
    answered: Counter[Ask] = field(default_factory=Counter)


def ask_of(request_json: dict[str, Any]) -> Ask:
    """The ``Ask`` a request body puts (n as the server reads it: 1 unless a positive int)."""
    n = request_json.get("n")
    seed = request_json.get("seed")
    # A seed that is not a JSON scalar is kept as its JSON text, so the key stays hashable.
    if isinstance(seed, (dict, list)):
        seed = json.dumps(seed, sort_keys=True)
    return Ask(prompt_text_of(request_json), n if isinstance(n, int) and n > 0 else 1, seed)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Handlers may be parked in a timeout sleep or a drip; stop() must not wait for them.
    block_on_close = False
    # The listen backlog: benchmarks open hundreds of connections at once.
    request_queue_size = 1024

    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a timeout, a closed pool at exit) is what these tests provoke, not
        # a server bug: only other errors get socketserver's traceback on stderr.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so the SDK's connection pool reuses connections; every reply has Content-Length
    # or chunked transfer encoding.
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
        request = self._read_request(owner)
        if request is None:
            return
        path, raw, request_json = request
        owner._record_body(request_json)
        behaviour = owner.behaviour
        key = owner._draw_key(raw, behaviour.seed)
        rng = random.Random(key)
        fault = rng.random()
        delay = _latency(behaviour.latency, rng)
        if self._send_fault(owner, behaviour, fault, delay, rng):
            return
        # Built before the status is counted: a malformed field (n="x") raises here and is a 400.
        completion = owner._completion(request_json, path, rng, behaviour, key)
        owner._record_status(200)
        owner._record_answer(request_json)
        drip = behaviour.drip_interval is not None and random.Random(f"{key}:drip").random() < behaviour.rate_drip
        if request_json.get("stream"):
            owner._count("streams")
            events = stream_events(completion, path.endswith("/chat/completions"), request_json)
            self._send_stream(owner, behaviour, events, drip)
        elif drip:
            self._drip(owner, behaviour, json_bytes(completion), "application/json", _JSON_FILLER)
        else:
            self._send_json(200, completion)

    def _read_request(self, owner: OpenAIServer) -> tuple[str, bytes, dict[str, Any]] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/v1/completions"):
            owner._record_status(404)
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")
            return None
        try:
            request_json = json.loads(raw or b"null")
        except ValueError:
            request_json = None
        if not isinstance(request_json, dict):
            owner._record_status(400)
            self._send_error(400, "Request body must be a JSON object", "invalid_request_error")
            return None
        return path, raw, request_json

    def _send_fault(
        self, owner: OpenAIServer, behaviour: Behaviour, fault: float, delay: float, rng: random.Random
    ) -> bool:
        """Send the request-level fault ``fault`` falls on, if any; after the latency either way."""
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
            return True
        edge += behaviour.rate_500
        if fault < edge:
            owner._sleep(delay)
            owner._record_status(500)
            self._send_error(500, "The server had an error (simulated).", "server_error")
            return True
        edge += behaviour.rate_timeout
        if fault < edge:
            owner._count("timeouts")
            owner._sleep(behaviour.timeout_seconds)
            # Hang up without a response, as a proxy that gave up would.
            self.close_connection = True
            return True
        edge += behaviour.rate_garbage
        owner._sleep(delay)
        if fault >= edge:
            return False
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
        return True

    def _send_stream(self, owner: OpenAIServer, behaviour: Behaviour, events: list[bytes], drip: bool) -> None:
        if drip:
            self._drip(owner, behaviour, b"".join(events), "text/event-stream", _SSE_FILLER)
            return
        # One write: the SDK reads the events whatever the packet boundaries, and a 1 MB answer
        # streamed one write per delta would spend its time in syscalls.
        self._send_pieces(200, "text/event-stream", [b"".join(events)], length=None, pace=None)

    def _drip(self, owner: OpenAIServer, behaviour: Behaviour, data: bytes, content_type: str, filler: bytes) -> None:
        owner._count("drips")
        size = behaviour.drip_bytes
        pieces: Iterable[bytes]
        if behaviour.drip_forever:
            pieces, length = _endless(filler, size), None
        else:
            pieces = (data[i : i + size] for i in range(0, len(data), size))
            # A JSON answer declares its whole length up front, as a buffering server would.
            length = len(data) if content_type == "application/json" else None
        if not self._send_pieces(200, content_type, pieces, length=length, pace=behaviour.drip_interval):
            owner._count("drip_hangups")

    def _send_pieces(
        self, status: int, content_type: str, pieces: Iterable[bytes], *, length: int | None, pace: float | None
    ) -> bool:
        """Send the headers, then each piece (``pace`` seconds apart if set), framed as chunks when
        ``length`` is None. False if the client hung up or the server stopped before the end."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        try:
            for piece in pieces:
                if pace is not None and not self._wait_unless_hung_up(pace):
                    self.close_connection = True
                    return False
                self.wfile.write(piece if length is not None else b"%x\r\n%b\r\n" % (len(piece), piece))
            if length is None:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True
            return False
        return True

    def _wait_unless_hung_up(self, seconds: float) -> bool:
        """Wait ``seconds``, watching the socket: False as soon as the client closes its end or the
        server stops, so a drip for ever holds its thread only as long as someone listens."""
        owner = self.server.owner
        deadline = time.monotonic() + seconds
        while not owner._stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            readable, _, _ = select.select([self.connection], [], [], min(left, _HANGUP_POLL))
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
                # The client sent more (a pipelined request): it is still there; don't spin on it.
                owner._stopping.wait(min(left, _HANGUP_POLL))
        return False

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
        self._send_bytes(status, json_bytes(payload), "application/json", headers)

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


def _endless(filler: bytes, size: int) -> Iterator[bytes]:
    stream = itertools.cycle(filler)
    while True:
        yield bytes(itertools.islice(stream, size))


def _latency(latency: float | tuple[float, float], rng: random.Random) -> float:
    if isinstance(latency, tuple):
        low, high = latency
        return rng.uniform(low, high)
    return float(latency)


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
        if isinstance(host, bytes):  # only for AF_UNIX addresses, never here; keeps mypy honest
            host = host.decode()
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
        # Wake handlers parked in latency, timeout or drip waits so they end with the server.
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

    def asked_twice(self, *, answered: bool = True) -> list[Ask]:
        """The questions (prompt, n, seed) answered more than once, or with ``answered=False`` asked
        more than once counting retries after faults: a judge that pays twice for one rating."""
        with self._lock:
            counts = self.stats.answered if answered else self.stats.asks
            # By repr: seeds may mix None and numbers, which do not compare.
            return sorted((ask for ask, count in counts.items() if count > 1), key=repr)

    def times_asked(self, prompt_text: str, *, answered: bool = True) -> int:
        """How often ``prompt_text`` (the last user message) was answered, or asked, whatever n and seed."""
        with self._lock:
            counts = self.stats.answered if answered else self.stats.asks
            return sum(count for ask, count in counts.items() if ask.prompt == prompt_text)

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
        ask = ask_of(request_json)
        with self._lock:
            self.stats.bodies.append(request_json)
            self.stats.asks[ask] += 1

    def _record_answer(self, request_json: dict[str, Any]) -> None:
        ask = ask_of(request_json)
        with self._lock:
            self.stats.answered[ask] += 1

    def _count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + amount)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _draw_key(self, raw: bytes, seed: int) -> str:
        """The seed of this request's draws: the same body on its k-th arrival always gets the same key."""
        digest = hashlib.sha256(raw).hexdigest()
        with self._lock:
            attempt = self._attempts.get(digest, 0)
            self._attempts[digest] = attempt + 1
        # str seeds are hashed with SHA-512 by random, so this is stable across processes.
        return f"{seed}:{digest}:{attempt}"

    def _completion(
        self,
        request_json: dict[str, Any],
        path: str,
        rng: random.Random,
        behaviour: Behaviour,
        key: str,
    ) -> dict[str, Any]:
        chat = path.endswith("/chat/completions")
        prompt_text = prompt_text_of(request_json)
        n = request_json.get("n") or 1
        n = max(1, min(int(n), 128))
        max_tokens = request_json.get("max_completion_tokens") or request_json.get("max_tokens")
        budget = int(max_tokens) if max_tokens else None
        # Its own generator, three draws per choice, so these never shift the refusal draws.
        extra = random.Random(f"{key}:choices")
        choices = []
        completion_tokens = 0
        for index in range(n):
            hostile, kind_draw, length = extra.random(), extra.random(), extra.random()
            if rng.random() < behaviour.rate_refusal:
                self._count("refusals")
                text = REFUSAL_TEXT
            elif hostile < behaviour.rate_hostile:
                self._count("hostile")
                kind = behaviour.hostile_kind
                if kind == "any":
                    kind = HOSTILE_KINDS[int(kind_draw * len(HOSTILE_KINDS))]
                text = hostile_answer(kind, behaviour.answer_bytes)(prompt_text, request_json)
            else:
                text = behaviour.answer(prompt_text, request_json)
            said, thought = self._with_reasoning(chat, text, prompt_text, request_json, behaviour)
            force = length < behaviour.rate_length
            if force:
                self._count("cut_for_length")
            content, trace, finish_reason = generate(
                said, thought, (budget or DEFAULT_MAX_TOKENS) if force else budget, force
            )
            completion_tokens += count_tokens(content or "") + count_tokens(trace or "")
            choices.append(self._choice(chat, index, content, trace, finish_reason, request_json, behaviour))
        prompt_tokens = sum(
            count_tokens(content_text(m.get("content")))
            for m in request_json.get("messages") or []
            if isinstance(m, dict)
        ) or count_tokens(prompt_text)
        completion: dict[str, Any] = {
            "id": f"{'chatcmpl' if chat else 'cmpl'}-{next(self._ids):012d}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": request_json.get("model") or self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": choices,
        }
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        fields = behaviour.usage_fields
        if fields is None:
            completion["usage"] = None
        elif not isinstance(fields, _Missing):
            usage.update(fields)
            completion["usage"] = {name: value for name, value in usage.items() if not isinstance(value, _Missing)}
        return completion

    @staticmethod
    def _with_reasoning(
        chat: bool, text: str, prompt_text: str, request_json: dict[str, Any], behaviour: Behaviour
    ) -> tuple[str, str | None]:
        """(content, separate trace or None) for a model that reasons before ``text``. The legacy
        endpoint has no field for a trace: there a model reasons only inline, or not at all."""
        if behaviour.reasoning_inline is not None:
            trace = behaviour.reasoning_text(prompt_text, request_json)
            return with_inline_reasoning(behaviour.reasoning_inline, trace, text), None
        if behaviour.reasoning_field is not None and chat:
            return text, behaviour.reasoning_text(prompt_text, request_json)
        return text, None

    @staticmethod
    def _choice(
        chat: bool,
        index: int,
        text: str | None,
        trace: str | None,
        finish_reason: str,
        request_json: dict[str, Any],
        behaviour: Behaviour,
    ) -> dict[str, Any]:
        if chat:
            logprobs = None
            if request_json.get("logprobs"):
                top = int(request_json.get("top_logprobs") or 0)
                logprobs = chat_logprobs(text or "", top, behaviour.logprob)
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
            if behaviour.reasoning_field is not None and trace is not None:
                message[behaviour.reasoning_field] = trace
            return {"index": index, "message": message, "finish_reason": finish_reason, "logprobs": logprobs}
        wanted = request_json.get("logprobs")
        return {
            "index": index,
            "text": text or "",
            "finish_reason": finish_reason,
            "logprobs": completion_logprobs(text or "", int(wanted)) if wanted is not None else None,
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
    parser.add_argument("--drip-interval", type=float, default=None, help="seconds between body bytes")
    parser.add_argument("--drip-forever", action="store_true")
    parser.add_argument("--rate-hostile", type=float, default=0.0)
    parser.add_argument("--rate-length", type=float, default=0.0)
    parser.add_argument("--reasoning-field", choices=REASONING_FIELDS, default=None)
    parser.add_argument("--reasoning-inline", choices=INLINE_STYLES, default=None)
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
        drip_interval=args.drip_interval,
        drip_forever=args.drip_forever,
        rate_hostile=args.rate_hostile,
        rate_length=args.rate_length,
        reasoning_field=args.reasoning_field,
        reasoning_inline=args.reasoning_inline,
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
            f"drips={stats.drips} hostile={stats.hostile} max_in_flight={stats.max_in_flight}",
            flush=True,
        )


if __name__ == "__main__":
    main()
