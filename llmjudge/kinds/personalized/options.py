"""A personalized (PERSE) judge's settings; each default is written once, in the dataclass."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmjudge.kinds.common.option_values import check_keys, int_option, required_int_option, str_option

KIND = "personalized"


@dataclass(frozen=True)
class PersonalizedOptions:
    profile_size: int = 3  # k
    split_seed: int = 0
    held_out: int | None = None  # at most this many held-out items per rater (None: all the rest)
    noun: str = "story"
    noun_plural: str = "stories"


def personalized_options(raw: Mapping[str, Any] | None) -> PersonalizedOptions:
    raw = dict(raw or {})
    cls = PersonalizedOptions
    check_keys(KIND, raw, cls)
    return PersonalizedOptions(
        profile_size=required_int_option(KIND, raw, cls, "profile_size", minimum=1),
        split_seed=required_int_option(KIND, raw, cls, "split_seed", minimum=0),
        held_out=int_option(KIND, raw, cls, "held_out", minimum=1),
        noun=str_option(KIND, raw, cls, "noun"),
        noun_plural=str_option(KIND, raw, cls, "noun_plural"),
    )
