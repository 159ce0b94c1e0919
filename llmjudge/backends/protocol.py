"""The backend interface, free of any SDK: a request, an answer, a classified error, a backend's
configuration and the ``Backend`` protocol. ``llmjudge/backends/registry.py`` holds the registry and the
OpenAI and fake backends; ``llmjudge/backends/transformers_local.py`` the local-model one; the engine
needs only these types.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from annotations.guards.variable_grants import KeyHolder

# Token counts are stored in 32-bit columns; a server may send anything in ``usage`` (10**20, 1e308, "abc").
TOKENS_MAX = 2**31 - 1
# How much of a judge server's error body a message quotes (on the run page, to the judge's owner only).
ERROR_BODY_CHARS = 200


def token_count(value: object) -> int | None:
    """A server's token count as a database column holds it: None when not reported, 0 when not a
    number (a string, a bool, NaN), otherwise clamped to 0..TOKENS_MAX (a float is truncated)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return TOKENS_MAX if value > 0 else 0
    return int(min(max(value, 0), TOKENS_MAX))


@dataclass(frozen=True)
class BackendRequest:
    model: str
    messages: list[dict[str, str]]  # role/content pairs, oldest first; the last one is a user turn
    temperature: float
    top_p: float
    max_tokens: int
    seed: int | None = None
    # "chat" (chat/completions) or "completions" (legacy endpoint, the last user turn is the prompt).
    endpoint: str = "chat"
    # Only the fake backend reads these: it answers on the study's scale, deterministically per attempt.
    scale: tuple[int, int] = (1, 5)
    sample: int = 0
    attempt: int = 1
    choices: tuple[str, ...] = ()  # a pairwise question's choices ("A", "B"[, "tie"]): answer with one
    # Ask for the answer tokens' log-probabilities (chat endpoint; backends without them return None).
    logprobs: bool = False


@dataclass(frozen=True)
class BackendAnswer:
    text: str
    model: str
    latency_ms: int
    tokens_prompt: int | None = None
    tokens_completion: int | None = None
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    # What was done to the answer on its way in, kept in the rating's history ("cut at 262144 bytes ...").
    note: str = ""
    # The reasoning trace a server sent beside the answer (``reasoning_content``, ``reasoning``): stored apart
    # from the answer, never parsed.
    reasoning: str = ""


class BackendError(Exception):
    """A failed call. ``transient``: retrying may help; ``fatal``: no call of this judge can succeed;
    ``timed_out``: the call reached its deadline (a server that drips is retried once, not ``max_attempts`` times)."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        fatal: bool = False,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.fatal = fatal
        self.retry_after = retry_after
        self.timed_out = timed_out


class Backend(Protocol):
    async def complete(self, request: BackendRequest) -> BackendAnswer: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BackendConfig:
    backend: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    timeout: float = 60.0  # seconds for a whole call: connecting, sending and reading every byte
    concurrency: int = 64
    options: dict[str, Any] = field(default_factory=dict)
    # A longer answer is cut to this many bytes of UTF-8 (LLM_ANSWER_MAX_BYTES, docs/judges.md).
    answer_max_bytes: int = 262144
    # The judge owner's key grants (llmjudge.backends.endpoint_rules.KeyHolder), checked again before the key is
    # read; None outside a run (a benchmark's backend), which checks the name against the list only.
    key_holder: KeyHolder | None = None
