"""Where judge prompts go: one small async interface, a registry of backends, classified errors.

A backend turns one ``BackendRequest`` (a chat conversation, or a bare prompt for a completions
endpoint) into one ``BackendAnswer`` or raises ``BackendError``. It never retries: the SDK's own
retries are off (``max_retries=0``) so every attempt is ours, counted and kept in the rating's
history (llmjudge/engine/runner.py does the backoff). Backends know nothing of Django.

Errors are classified here, once, because only the backend knows what its failures mean:

- transient (may succeed next time): 429, 408, 409, 5xx, timeouts, connection errors, and "garbage"
  200 answers (an HTML page, JSON cut off, JSON without choices);
- permanent (the same request will fail again): 400, 422 and other 4xx;
- fatal for the whole run (no request of this judge can succeed): 401, 403, 404 and a missing
  API key, so a run stops after one call instead of failing thousands.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from annotations.guards.env_secrets import SecretFileError, env_or_file
from llmjudge.backends.call_guard import CallGuard, guard_transports, guarding
from llmjudge.backends.endpoint_rules import EndpointRefused, KeyHolder, check_base_url_resolved, check_key_variable
from llmjudge.backends.protocol import (
    ERROR_BODY_CHARS,
    Backend,
    BackendAnswer,
    BackendConfig,
    BackendError,
    BackendRequest,
    token_count,
)

if TYPE_CHECKING:
    import httpx2


class _AnswerFields(TypedDict):
    """A BackendAnswer's fields as one call reads them, before its latency is known."""

    text: str
    model: str
    tokens_prompt: int | None
    tokens_completion: int | None
    finish_reason: str | None
    logprobs: list[dict[str, Any]] | None  # the server's token entries, JSON
    note: str
    reasoning: NotRequired[str]


def api_key_from_env(name: str, holder: KeyHolder | None = None) -> str | None:
    """The key in $NAME, or in the file $NAME_FILE names (annotations.guards.env_secrets: the settings' rule).

    Read at call time, never stored or logged. A name the key rule refuses (llmjudge.backends.endpoint_rules:
    a deployment secret, or not in JUDGE_KEY_VARIABLES) stops the run before anything is read, so a
    judge saved before the rule, or written straight into the database, sends nothing; so does a
    $NAME_FILE that names no file.
    """
    if not name:
        return None
    try:
        check_key_variable(name, holder)
    except EndpointRefused as exc:
        raise BackendError(str(exc), transient=False, fatal=True) from None
    try:
        return env_or_file(name)
    except SecretFileError as exc:
        raise BackendError(str(exc), transient=False, fatal=True) from None


def checked_base_url(url: str) -> str:
    """The base URL once the address rule holds for it now, after DNS resolution (fatal otherwise)."""
    try:
        check_base_url_resolved(url)
    except EndpointRefused as exc:
        raise BackendError(str(exc), transient=False, fatal=True) from None
    return url


# --- fake: deterministic offline answers -------------------------------------------------------

_FAKE_FORMATS = (
    "I would rate it {score} out of {hi}. The text reads well overall.",
    "Rating: {score}/{hi}",
    "{score}. The sentences are mostly clear, with a few awkward transitions.",
    "I'd give it a {score}.",
)
_FAKE_CHOICE_FORMATS = (
    "Feedback: Both follow the prompt; one is tighter. [RESULT] {choice}",
    "[[{choice}]]",
    "Winner: {choice}",
    "{choice}",
)
_FAKE_REFUSAL = (
    "As an AI language model, I cannot rate this because I do not have personal preferences "
    "or the ability to experience enjoyment."
)


class FakeBackend:
    """Answers from a hash of (model, conversation, seed, attempt): no network, no key, repeatable.

    ``options``: ``fake_refusal_rate`` (share of refusals, default 0), ``fake_latency`` (seconds).
    """

    def __init__(self, config: BackendConfig) -> None:
        self.refusal_rate = float(config.options.get("fake_refusal_rate", 0.0))
        self.latency = float(config.options.get("fake_latency", 0.0))

    async def complete(self, request: BackendRequest) -> BackendAnswer:
        started = time.monotonic()
        if self.latency:
            await asyncio.sleep(self.latency)
        key = json.dumps([request.model, request.messages, request.seed, request.sample, request.attempt])
        rng = random.Random(hashlib.sha256(key.encode("utf-8")).hexdigest())
        lo, hi = request.scale
        if rng.random() < self.refusal_rate:
            text = _FAKE_REFUSAL
        elif request.choices:
            template = _FAKE_CHOICE_FORMATS[rng.randrange(len(_FAKE_CHOICE_FORMATS))]
            text = template.format(choice=rng.choice(request.choices))
        else:
            template = _FAKE_FORMATS[rng.randrange(len(_FAKE_FORMATS))]
            text = template.format(score=rng.randint(lo, hi), hi=hi)
        prompt_tokens = sum(len(m["content"].split()) for m in request.messages)
        return BackendAnswer(
            text=text,
            model=request.model or "fake",
            latency_ms=int((time.monotonic() - started) * 1000),
            tokens_prompt=prompt_tokens,
            tokens_completion=len(text.split()),
            finish_reason="stop",
        )

    async def aclose(self) -> None:
        return None


# --- openai and openai-compatible: the openai SDK ----------------------------------------------


def _retry_after(response: httpx2.Response | None) -> float | None:
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) / scale
            except ValueError:
                continue
    return None


def _bounded_int(digits: str) -> int | float:
    """A JSON integer as the answer's reader needs it: a count beyond any column (a 5,000-digit ``usage`` value,
    which ``int()`` refuses above 4,300 digits) becomes infinity, which ``token_count`` clamps, so that a good
    answer is never lost to its token count (issue 23 review)."""
    return int(digits) if len(digits) <= 30 else float("-inf" if digits.startswith("-") else "inf")


def classify_sdk_error(exc: BaseException) -> BackendError:
    """Map whatever the SDK (or the JSON decoder under it) raised to a classified BackendError."""
    import httpx2  # on use, with the SDK it serves (STYLE 15)
    import openai  # on use: importing the SDK takes 0.7 s that every process would pay (STYLE 15)

    if isinstance(exc, BackendError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return BackendError("timeout", transient=True, timed_out=True)
    if isinstance(exc, openai.APIConnectionError):
        return BackendError(f"connection error: {exc}", transient=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        # The server's own words, cut: they are shown on the run page, to the judge's owner only.
        words = " ".join(str(exc.message).split())  # one line: a line break must not split what is hidden
        message = f"HTTP {status}: {words}"[: len(f"HTTP {status}: ") + ERROR_BODY_CHARS]
        if status in (401, 403, 404):
            return BackendError(message, transient=False, fatal=True)
        if status in (408, 409, 429) or status >= 500:
            return BackendError(message, transient=True, retry_after=_retry_after(exc.response))
        return BackendError(message, transient=False)
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError)):
        return BackendError(f"invalid response body: {type(exc).__name__}", transient=True)
    # The SDK's transport is httpx2 (openai.DefaultHttpxClient is an httpx2.Client): reading a body after
    # the SDK returned (response.json() below) can still raise its errors unwrapped.
    if isinstance(exc, httpx2.TimeoutException):
        return BackendError("timeout", transient=True, timed_out=True)
    if isinstance(exc, httpx2.HTTPError):
        return BackendError(f"connection error: {exc}", transient=True)
    return BackendError(f"{type(exc).__name__}: {exc}"[:ERROR_BODY_CHARS], transient=False)


class OpenAIBackend:
    """The openai SDK; ``base_url`` makes it any OpenAI-compatible server.

    The engine is asyncio, but the calls go through the SDK's *sync* client in a thread pool of the
    judge's concurrency, with an HTTP connection pool of the same size. Requests are sent with the
    SDK's ``client.post(path, body=..., cast_to=httpx2.Response)`` (its documented way to call any
    endpoint): auth, base URL, timeouts and the SDK's error classes are the SDK's, but the request
    is not run through its TypedDict transform and the answer is read as plain JSON instead of
    pydantic models. Measured on this SDK version (tests/bench/bench_judge.py, docs/judges.md): that
    path spends about two thirds of the CPU of ``chat.completions.create``, the async client about
    as much per call but it kept fewer calls in flight at 64 (0.8 of the ideal wall time against
    0.9 for the thread pool). The JSON is checked here as the models would have been: a 200 answer
    without choices or content is an invalid body (transient).

    Every call has a deadline and can be stopped (llmjudge/backends/call_guard.py): the whole call ends
    at ``config.timeout`` however slowly the server drips, and a call whose ``complete`` is cancelled
    (pause, cancel, the engine's deadline) has its socket shut down at once. The body is read up to a
    cap (``_body_cap``); an answer above ``config.answer_max_bytes`` is kept cut, with a note.
    """

    default_key_env = "OPENAI_API_KEY"
    key_required = True

    def __init__(self, config: BackendConfig) -> None:
        import httpx2  # on use, with the SDK it serves (STYLE 15)
        import openai  # on use: importing the SDK takes 0.7 s that every process would pay (STYLE 15)

        # The address first: a refused host never gets the key. Resolved here, before any connection;
        # the SDK resolves again when it connects, so a name whose DNS answer changes within seconds
        # (rebinding) is not covered: list addresses, not names, where that matters (docs/judges.md).
        base_url = checked_base_url(config.base_url) if config.base_url else None
        env = config.api_key_env or self.default_key_env
        key = api_key_from_env(env, config.key_holder)
        # A named variable must be set even for a local server: a typo should stop the run, not 401 later.
        if key is None and (self.key_required or config.api_key_env):
            raise BackendError(f"no API key: set {env} (or {env}_FILE)", transient=False, fatal=True)
        size = max(config.concurrency, 1)
        # Keep-alive for every concurrent call: the SDK's default keeps 100, so a judge above that
        # would reconnect on most calls.
        # No redirects (the SDK's client follows them by default): the address rule checked this host,
        # and a 307 from it must not carry the call to one it never checked (a metadata address).
        http_client = openai.DefaultHttpxClient(
            limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size), follow_redirects=False
        )
        if not guard_transports(http_client):
            raise BackendError("the HTTP client has no connection pool to guard", transient=False, fatal=True)
        self.client = openai.OpenAI(
            api_key=key or "not-needed",
            base_url=base_url,
            max_retries=0,
            timeout=config.timeout,
            http_client=http_client,
        )
        self.pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="llm-call")
        self.logprobs = bool(config.options.get("logprobs", False))
        self.timeout = config.timeout
        self.answer_max_bytes = config.answer_max_bytes
        self.in_flight: set[CallGuard] = set()

    def _body_cap(self, request: BackendRequest) -> int:
        # The answer plus its envelope (id, usage, ...); log-probabilities add a few hundred bytes per token.
        room = 8 if (self.logprobs or request.logprobs) else 1
        return self.answer_max_bytes * room + 65536

    async def complete(self, request: BackendRequest) -> BackendAnswer:
        cap = self._body_cap(request)
        # The guard's byte budget bounds what the SDK may read whole (an error body), beyond the body cap.
        guard = CallGuard(deadline=time.monotonic() + self.timeout, max_bytes=2 * cap + 65536)
        self.in_flight.add(guard)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.pool, self._complete_sync, request, guard, cap)
        except asyncio.CancelledError:
            guard.abort()  # the thread's blocked read returns now; its result is dropped
            raise
        finally:
            self.in_flight.discard(guard)

    def _complete_sync(self, request: BackendRequest, guard: CallGuard, cap: int) -> BackendAnswer:
        started = time.monotonic()
        try:
            with guarding(guard):
                if request.endpoint == "completions":
                    answer = self._completions(request, cap)
                else:
                    answer = self._chat(request, cap)
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is classified, none escapes unlabelled
            raise classify_sdk_error(exc) from exc
        return BackendAnswer(**answer, latency_ms=int((time.monotonic() - started) * 1000))

    def _body(self, request: BackendRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        return body

    def _post(self, path: str, body: dict[str, Any], cap: int) -> tuple[dict[str, Any] | None, bytes]:
        """The answer's JSON, or (None, the first ``cap`` bytes) when the body is longer than that."""
        import httpx2  # on use, with the SDK it serves (STYLE 15)

        response = self.client.post(path, body=body, cast_to=httpx2.Response, stream=True)
        try:
            raw, cut = read_capped(response, cap)
        finally:
            response.close()  # an unread rest closes the connection instead of returning it to the pool
        if cut:
            return None, raw
        try:
            data = json.loads(raw, parse_int=_bounded_int)
        except ValueError as exc:  # an HTML page, a body cut off
            raise BackendError(f"invalid response body: {type(exc).__name__}", transient=True) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise BackendError("invalid response body: no choices", transient=True)
        return data, raw

    def _chat(self, request: BackendRequest, cap: int) -> _AnswerFields:
        body = {**self._body(request), "messages": request.messages}
        if self.logprobs:
            body.update(logprobs=True, top_logprobs=5)
        elif request.logprobs:
            body.update(logprobs=True)
        data, raw = self._post("/chat/completions", body, cap)
        if data is None:
            return self._cut_answer(raw, "content", cap)
        choice = data["choices"][0]
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        reasoning = message_reasoning(message)
        if not isinstance(text, str):
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if isinstance(refusal, str) and refusal:
                text = refusal  # the API's structured refusal is a refusal answer, parsed as such
            elif reasoning:
                text = ""  # vLLM sends null content when max_tokens ran out in the trace: the parser says so
            else:
                raise BackendError("invalid response body: no message content", transient=True)
        logprobs = choice.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        answer = self._answer(data, text, choice.get("finish_reason"), content or None)
        answer["reasoning"] = cut_text(reasoning, self.answer_max_bytes)[0]
        return answer

    def _completions(self, request: BackendRequest, cap: int) -> _AnswerFields:
        body = {**self._body(request), "prompt": request.messages[-1]["content"]}
        data, raw = self._post("/completions", body, cap)
        if data is None:
            return self._cut_answer(raw, "text", cap)
        choice = data["choices"][0]
        if not isinstance(choice.get("text"), str):
            raise BackendError("invalid response body: no choices", transient=True)
        return self._answer(data, choice["text"], choice.get("finish_reason"), None)

    def _answer(self, data: dict[str, Any], text: str, finish_reason: Any, logprobs: Any) -> _AnswerFields:
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        text, note = cut_text(text, self.answer_max_bytes)
        return {
            "text": text,
            "model": str(data.get("model") or "")[:200],
            "tokens_prompt": token_count(usage.get("prompt_tokens")),
            "tokens_completion": token_count(usage.get("completion_tokens")),
            "finish_reason": finish_reason if isinstance(finish_reason, str) else None,
            "logprobs": logprobs if isinstance(logprobs, list) else None,
            "note": note,
        }

    def _cut_answer(self, raw: bytes, key: str, cap: int) -> _AnswerFields:
        """The answer's text from a body cut at ``cap`` bytes: its ``key`` string, up to the cut."""
        text = text_before_cut(raw, key)
        if text is None:
            raise BackendError(f"the response is longer than {cap} bytes and no answer text starts before that",
                               transient=False)
        text, _ = cut_text(text, self.answer_max_bytes)
        return {"text": text, "model": "", "tokens_prompt": None, "tokens_completion": None, "finish_reason": None,
                "logprobs": None, "note": f"answer cut at {len(text.encode('utf-8', 'surrogatepass'))} bytes: "
                                         f"the response was longer than {cap} bytes"}

    async def aclose(self) -> None:
        # Calls still in flight are stopped (their sockets shut down); queued ones are dropped.
        for guard in list(self.in_flight):
            guard.abort()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()


# Where OpenAI-protocol servers put a reasoning model's trace beside the answer: vLLM's reasoning parsers and
# DeepSeek's API say "reasoning_content", newer vLLM, OpenRouter and others "reasoning".
REASONING_FIELDS = ("reasoning_content", "reasoning")


def message_reasoning(message: object) -> str:
    """The trace a chat message carries beside its content ("" when it has none or it is not text)."""
    if not isinstance(message, dict):
        return ""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def read_capped(response: httpx2.Response, cap: int) -> tuple[bytes, bool]:
    """At most ``cap`` bytes of a streamed body, and whether there was more."""
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(parts)[:cap], True
    return b"".join(parts), False


def cut_text(text: str, max_bytes: int) -> tuple[str, str]:
    """``text`` cut to ``max_bytes`` bytes of UTF-8 (at a character), and a note when it was cut."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text, ""
    cut = encoded[:max_bytes]
    kept = ""
    for trim in range(4):  # a character split by the cut (up to 3 of its bytes kept) is dropped
        try:
            kept = cut[: len(cut) - trim].decode("utf-8", "surrogatepass")
            break
        except UnicodeDecodeError:
            continue
    return kept, f"answer cut at {max_bytes} bytes (LLM_ANSWER_MAX_BYTES): it was {len(encoded)} bytes"


# A JSON string value of a key, up to the end of the text if it is cut before the closing quote.
_STRING_VALUE = r'"{key}"\s*:\s*"((?:[^"\\]|\\.)*)'


def text_before_cut(raw: bytes, key: str) -> str | None:
    """The first string value of ``key`` in a JSON body cut anywhere (None when none starts before the cut)."""
    body = raw.decode("utf-8", "ignore")
    match = re.search(_STRING_VALUE.format(key=re.escape(key)), body)
    if match is None:
        return None
    value = match.group(1)
    # The cut may split an escape ("\\u00" of "\\u00e9"): drop up to five characters until it reads.
    for trim in range(6):
        try:
            return str(json.loads(f'"{value[: len(value) - trim]}"'))
        except ValueError:
            continue
    return None


class OpenAICompatibleBackend(OpenAIBackend):
    """vLLM, llama.cpp server, Ollama, TGI: a key is optional (local servers usually take none)."""

    default_key_env = ""
    key_required = False


def _transformers(config: BackendConfig) -> Backend:
    # Imported on use: it needs Django settings and, when called, torch (the gpu extra).
    from llmjudge.backends.transformers_local import TransformersBackend

    return TransformersBackend(config)


BACKENDS: dict[str, Callable[[BackendConfig], Backend]] = {
    "fake": FakeBackend,
    "openai": OpenAIBackend,
    "openai-compatible": OpenAICompatibleBackend,
    "transformers": _transformers,
}

# Which Celery queue a backend's chunks go to: local models need the machine with the GPU.
QUEUES: dict[str, str] = {"transformers": "gpu"}


def backend_for(config: BackendConfig) -> Backend:
    try:
        factory = BACKENDS[config.backend]
    except KeyError:
        raise BackendError(
            f"backend {config.backend!r} cannot be called from a judge run (known: {', '.join(BACKENDS)})",
            transient=False,
            fatal=True,
        ) from None
    if config.backend == "openai-compatible" and not config.base_url:
        raise BackendError("backend openai-compatible needs a base URL", transient=False, fatal=True)
    return factory(config)
