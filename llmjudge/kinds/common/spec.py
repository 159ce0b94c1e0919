"""What the registry (llmjudge/kinds/__init__.py) holds of one kind; each kind states it in its
package's ``kind.py``."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llmjudge.engine.conversation import PromptBuilder
from llmjudge.kinds.common.plan import Row, every_item_rows, no_steps, no_study_check, nothing_to_prepare
from llmjudge.parsing import ParsedScore


@dataclass(frozen=True)
class JudgeKind:
    """Everything the pipeline needs of one kind; the callables take keyword arguments."""

    name: str
    # Validated options (a frozen dataclass, or None for a kind without options); ValueError names the option.
    options: Callable[[Mapping[str, Any]], object]
    builder: PromptBuilder
    # False for a kind without options: the judge command refuses options for it, a run ignores any the
    # admin left in Judge.options (e.g. after changing a judge's kind), as before the registry.
    has_options: bool = True
    # Whether each rating predicts one human rater (``LLMRating.target_rater``); such kinds need a Likert study.
    per_rater: bool = False
    # (study=, config=, options=) -> None; raises KindError when the study cannot be judged by this kind.
    study_check: Callable[..., None] = no_study_check
    # (study=, config=, options=, items=, questions=) -> (rows, what the run's params record).
    planned_rows: Callable[..., tuple[list[Row], dict[str, Any]]] = every_item_rows
    # (options=, rows=) -> the (step, key) calls known before any answer, created with the ratings.
    planned_steps: Callable[..., list[tuple[str, str]]] = no_steps
    # (run=, config=, pending=, on_progress=) -> a fatal error or "": the calls asked before the ratings.
    prepare: Callable[..., str] = nothing_to_prepare
    # (study=, question=) -> the parser the builder gives a question's turns, so ``llmjudge.runs.reparse``
    # re-reads a stored answer exactly as the judge read it; None when an answer cannot be re-read alone
    # (a panel's votes depend on its roles and on log-probabilities that are not stored).
    answer_parser: Callable[..., Callable[[str], ParsedScore]] | None = None
