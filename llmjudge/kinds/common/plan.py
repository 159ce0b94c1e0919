"""Planning shared by the kinds: rows, steps and preparation of a kind that has none of its own."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

from annotations.models import Study
from llmjudge.runs.config import JudgeConfig

if TYPE_CHECKING:
    from llmjudge.models import JudgeRun

Row = tuple[int, int, int, int | None]  # (item, question, sample, target rater)
Pending = tuple[int, int, int | None]  # (item, question, target rater or None) of a rating still to ask
Progress = Callable[[], None] | None


def every_item_rows(
    *, study: Study, config: JudgeConfig, options: object, items: list[int], questions: list[int]
) -> tuple[list[Row], dict[str, Any]]:
    """One row per item, sample and question (the protocol's order), and the options as run params."""
    rows: list[Row] = [(i, q, s, None) for i in items for s in range(config.samples) for q in questions]
    kind_options = asdict(options) if is_dataclass(options) and not isinstance(options, type) else {}
    return rows, {"kind_options": kind_options}


def no_steps(*, options: object, rows: list[Row]) -> list[tuple[str, str]]:
    return []


def nothing_to_prepare(
    *, run: JudgeRun, config: JudgeConfig, pending: list[Pending], on_progress: Progress = None
) -> str:
    return ""


def no_study_check(*, study: Study, config: JudgeConfig, options: object) -> None:
    return None
