"""The rows a persona run predicts (each rater's held-out items, one sample per character) and the
preparation calls known before any answer (the first proposal round per rater and question)."""
from __future__ import annotations

from typing import Any

from annotations.models import Study
from llmjudge.kinds.common.errors import KindError
from llmjudge.kinds.common.plan import Row
from llmjudge.kinds.common.split import held_out_rows, run_split, split_params
from llmjudge.kinds.persona.options import PersonaOptions
from llmjudge.kinds.persona.prompts import method
from llmjudge.runs.config import JudgeConfig


def persona_rows(
    *, study: Study, config: JudgeConfig, options: PersonaOptions, items: list[int], questions: list[int]
) -> tuple[list[Row], dict[str, Any]]:
    split = run_split(
        study, "persona", profile_size=options.training_examples, seed=options.split_seed, held_out=options.held_out
    )
    spec = method(options.method)
    if spec.demographics:
        missing = sorted(
            name or str(pk)
            for pk, name, demographics in study.raters.filter(pk__in=[int(r) for r in split]).values_list(
                "pk", "external_id", "demographics"
            )
            if not demographics
        )
        if missing:
            raise KindError(
                f"persona judge ({options.method}) needs demographics of every rater; none for: "
                f"{', '.join(missing)} (rater form or an imported demographics file)"
            )
    # A persona row's sample is the index of the character that role-plays the rater.
    samples = options.characters_used if spec.characters else 1
    rows = held_out_rows(study=study, split=split, items=items, questions=questions, samples=samples)
    return rows, split_params(options, split)


def persona_steps(*, options: PersonaOptions, rows: list[Row]) -> list[tuple[str, str]]:
    """The first proposal round per (rater, question); later rounds and verifications come as they arise."""
    if not method(options.method).characters:
        return []
    return [("propose", f"{r}:{q}:0") for r, q in sorted({(t, q) for _, q, _, t in rows})]
