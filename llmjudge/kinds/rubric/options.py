"""A rubric (Prometheus) judge's settings; each default is written once, in the dataclass."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmjudge.kinds.common.option_values import bool_option, check_keys, str_option
from llmjudge.kinds.rubric.prompts import ABSOLUTE_VERSIONS, DEFAULT_ABSOLUTE_VERSION, ItemMapping

KIND = "rubric"


@dataclass(frozen=True)
class RubricOptions:
    version: str = DEFAULT_ABSOLUTE_VERSION  # absolute template version; relative uses v2
    # The item-field mapping's defaults are ItemMapping's ({prompt} -> instruction, {story} -> response).
    instruction: str = ItemMapping.instruction
    response: str = ItemMapping.response
    reference_field: str = ItemMapping.reference_field  # item field holding a score-5 reference answer
    system_prompt: bool = True  # send prometheus-eval's system message on chat backends


def rubric_options(raw: Mapping[str, Any] | None) -> RubricOptions:
    raw = dict(raw or {})
    check_keys(KIND, raw, RubricOptions)
    version = str_option(KIND, raw, RubricOptions, "version", ABSOLUTE_VERSIONS)
    mapping = ItemMapping.from_options(raw)
    return RubricOptions(
        version=version,
        instruction=mapping.instruction,
        response=mapping.response,
        reference_field=mapping.reference_field,
        system_prompt=bool_option(KIND, raw, RubricOptions, "system_prompt"),
    )
