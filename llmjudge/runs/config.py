"""A judge's settings frozen at run start (JudgeRun.params), so editing a judge never changes a run.

Experiments vary temperature and variant per run without creating a judge per cell: the overrides
live in the run's params, which is what every rating of the run was produced with.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from llmjudge.models import TEMPERATURE_MAX, TEMPERATURE_MIN, Judge


def temperature_in_range(value: float) -> bool:
    """The temperature rule (models.TEMPERATURE_MIN..MAX, also the database's check constraint)."""
    return TEMPERATURE_MIN <= value <= TEMPERATURE_MAX


OVERRIDABLE = ("temperature", "top_p", "max_tokens", "samples", "seed", "variant", "mode", "swap_share")


# Settings a run has and a judge does not (the judge's id; the swap share is chosen per run).
_RUN_ONLY = ("judge_id", "swap_share")


@dataclass(frozen=True)
class JudgeConfig:
    judge_id: int
    name: str
    kind: str
    backend: str
    model: str
    base_url: str = ""
    api_key_env: str = ""  # the variable's name only; the key is read by the backend at call time
    temperature: float = 1.0
    top_p: float = 0.9
    max_tokens: int = 256
    samples: int = 3
    seed: int | None = None
    variant: str = "original"
    instruction_prefix: str = ""
    question_suffix: str = ""
    mode: str = "completion"
    concurrency: int = 64
    rpm: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    # The share of a pairwise study's items asked once more with A and B swapped (llmjudge/runs/swapping.py).
    swap_share: float = 0.0

    @classmethod
    def from_judge(cls, judge: Judge, overrides: dict[str, Any] | None = None) -> JudgeConfig:
        values = {f.name: getattr(judge, f.name) for f in fields(cls) if f.name not in _RUN_ONLY}
        values["judge_id"] = judge.pk
        values["options"] = dict(judge.options or {})
        for key, value in (overrides or {}).items():
            if key not in OVERRIDABLE:
                raise ValueError(f"{key!r} cannot be overridden per run (allowed: {', '.join(OVERRIDABLE)})")
            values[key] = value
        return cls(**values)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> JudgeConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in known})

    def to_params(self) -> dict[str, Any]:
        return asdict(self)

    def rating_params(self, sample: int) -> dict[str, Any]:
        """What LLMRating.params records: the sampling parameters of this one sample."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.sample_seed(sample),
            "variant": self.variant,
            "mode": self.mode,
        }

    def sample_seed(self, sample: int) -> int | None:
        # The same seed for all samples would make them one sample repeated (at any temperature, for
        # providers that honour seeds); the paper's samples simulate different raters.
        return None if self.seed is None else self.seed + sample
