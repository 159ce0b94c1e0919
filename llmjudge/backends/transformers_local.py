"""The `transformers` backend: a local Hugging Face model on the `gpu` queue, batching concurrent calls.

The engine issues up to `concurrency` calls at once, each through `complete`. Generating them one
by one would leave a GPU mostly idle, so calls are gathered for a few milliseconds into batches of
up to `batch_size` prompts with the same sampling parameters, and each batch is one `generate`.
The model is loaded once per worker process (LocalModel.get) and kept for the next chunk.
"""
from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import Future

from django.conf import settings

from llmjudge.backends.protocol import BackendAnswer, BackendConfig, BackendError, BackendRequest


class TransformersBackend:
    def __init__(self, config: BackendConfig) -> None:
        self.model_name = config.model or getattr(settings, "TRANSFORMERS_MODEL", "")
        if not self.model_name:
            raise BackendError("backend transformers needs a model (the judge's model or TRANSFORMERS_MODEL)",
                               transient=False, fatal=True)
        self.batch_size = int(config.options.get("batch_size", 16))
        self.batch_wait = float(config.options.get("batch_wait", 0.01))
        try:
            from llmjudge.backends.local_model import LocalModel

            self.model = LocalModel.get(self.model_name, allow_download=settings.TRANSFORMERS_ALLOW_DOWNLOAD)
        except ImportError:
            raise BackendError("backend transformers needs torch and transformers (make install-gpu)",
                               transient=False, fatal=True) from None
        except OSError as exc:  # no such path / model files missing
            raise BackendError(f"cannot load model {self.model_name!r}: {exc}"[:500], transient=False,
                               fatal=True) from None
        self.requests: queue.Queue[tuple[BackendRequest, Future[BackendAnswer]] | None] = queue.Queue()
        self.worker = threading.Thread(target=self._serve, name="transformers-batcher", daemon=True)
        self.worker.start()

    async def complete(self, request: BackendRequest) -> BackendAnswer:
        future: Future[BackendAnswer] = Future()
        self.requests.put((request, future))
        return await asyncio.wrap_future(future)

    def _serve(self) -> None:
        while True:
            first = self.requests.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.batch_wait
            while len(batch) < self.batch_size:
                try:
                    entry = self.requests.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    break
                if entry is None:
                    self.requests.put(None)  # finish this batch, then stop
                    break
                batch.append(entry)
            for group in _by_sampling(batch):
                self._generate(group)

    def _generate(self, group: list[tuple[BackendRequest, Future[BackendAnswer]]]) -> None:
        request = group[0][0]
        try:
            prompts = [self.model.format_conversation(r.messages) for r, _ in group]
            outputs = self.model.generate(prompts, max_new_tokens=request.max_tokens,
                                          temperature=request.temperature, top_p=request.top_p, seed=request.seed)
        except Exception as exc:  # noqa: BLE001 - reported per call; a CUDA OOM may pass with a smaller batch
            error = BackendError(f"generation failed: {type(exc).__name__}: {exc}"[:500], transient=True)
            for _, future in group:
                future.set_exception(error)
            return
        for (_, future), output in zip(group, outputs, strict=True):
            future.set_result(BackendAnswer(text=output.text, model=self.model_name, latency_ms=output.latency_ms,
                                            tokens_prompt=output.prompt_tokens,
                                            tokens_completion=output.completion_tokens, finish_reason="stop"))

    async def aclose(self) -> None:
        self.requests.put(None)


def _by_sampling(
    batch: list[tuple[BackendRequest, Future[BackendAnswer]]],
) -> list[list[tuple[BackendRequest, Future[BackendAnswer]]]]:
    """Split a batch so that each `generate` call has one set of sampling parameters."""
    groups: dict[tuple[float, float, int, int | None], list[tuple[BackendRequest, Future[BackendAnswer]]]] = {}
    for entry in batch:
        r = entry[0]
        groups.setdefault((r.temperature, r.top_p, r.max_tokens, r.seed), []).append(entry)
    return list(groups.values())
