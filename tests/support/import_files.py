"""Helpers shared by the import tests of annotations and evalhub: writing a file, counting what is stored."""
from __future__ import annotations

from pathlib import Path

from annotations.models import HumanRating, Item, Rater
from llmjudge.models import Judge, JudgeRun, LLMRating


def snapshot() -> tuple:
    return tuple(m.objects.count() for m in (Item, Rater, HumanRating, Judge, JudgeRun, LLMRating)) + (
        tuple(HumanRating.objects.order_by("pk").values_list("pk", "score")),
    )


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path
