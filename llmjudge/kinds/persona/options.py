"""A persona (CINEMETRIC) judge's settings; each default is written once, in the dataclass."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmjudge.kinds.common.option_values import check_keys, int_option, required_int_option, str_option
from llmjudge.kinds.persona.prompts import CHARACTERS_PROPOSED, CHARACTERS_USED, METHODS

KIND = "persona"


@dataclass(frozen=True)
class PersonaOptions:
    method: str = "cinemetric"
    training_examples: int = 5  # the paper's 5 training ratings per rater
    split_seed: int = 0
    held_out: int | None = 10  # the paper's 10 test items per rater
    characters_proposed: int = CHARACTERS_PROPOSED
    characters_used: int = CHARACTERS_USED
    proposal_attempts: int = 3  # proposal rounds before a rater is reported as lacking characters
    noun: str = "story"
    noun_plural: str = "stories"


def persona_options(raw: Mapping[str, Any] | None) -> PersonaOptions:
    raw = dict(raw or {})
    cls = PersonaOptions
    check_keys(KIND, raw, cls)
    used = required_int_option(KIND, raw, cls, "characters_used", minimum=1)
    proposed = required_int_option(KIND, raw, cls, "characters_proposed", minimum=1)
    if proposed < used:
        raise ValueError(f"persona judge proposes {proposed} characters but needs {used}")
    return PersonaOptions(
        method=str_option(KIND, raw, cls, "method", tuple(METHODS)),
        training_examples=required_int_option(KIND, raw, cls, "training_examples", minimum=1),
        split_seed=required_int_option(KIND, raw, cls, "split_seed", minimum=0),
        held_out=int_option(KIND, raw, cls, "held_out", minimum=1),
        characters_proposed=proposed,
        characters_used=used,
        proposal_attempts=required_int_option(KIND, raw, cls, "proposal_attempts", minimum=1),
        noun=str_option(KIND, raw, cls, "noun"),
        noun_plural=str_option(KIND, raw, cls, "noun_plural"),
    )
