"""The backend interface, free of any SDK: a request, an answer, a classified error, a backend's
configuration and the ``Backend`` protocol. ``llmjudge/backends/registry.py`` holds the registry and the
OpenAI and fake backends; ``llmjudge/backends/transformers_local.py`` the local-model one; the engine
needs only these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


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


class BackendError(Exception):
    """A failed call. ``transient``: retrying may help; ``fatal``: no call of this judge can succeed."""

    def __init__(
        self, message: str, *, transient: bool, fatal: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.fatal = fatal
        self.retry_after = retry_after


class Backend(Protocol):
    async def complete(self, request: BackendRequest) -> BackendAnswer: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BackendConfig:
    backend: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    timeout: float = 60.0
    concurrency: int = 64
    options: dict[str, Any] = field(default_factory=dict)
