"""A role-player panel (DRPE) judge's settings; each default is written once, in the dataclass."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmjudge.kinds.common.option_values import bool_option, check_keys, required_int_option, str_option
from llmjudge.kinds.roleplay.clustering import DEFAULT_EPS
from llmjudge.kinds.roleplay.prompts import DYNAMIC_ROLES
from llmjudge.kinds.roleplay.roles import DEFAULT_PRESET, static_roles

KIND = "roleplay"


@dataclass(frozen=True)
class RoleplayOptions:
    static_roles_preset: str = DEFAULT_PRESET
    static_roles: tuple[dict[str, str], ...] = ()  # overrides the preset when given
    dynamic_roles: int = DYNAMIC_ROLES
    dynamic_style: str = "coarse"
    eps: float = DEFAULT_EPS
    min_samples: int = 1
    mode: str = "pointwise"  # "pointwise" (a score per role) | "pairwise" (votes between two items)
    use_logprobs: bool = True  # weight by confidence when the backend returns log-probabilities
    context_field: str = ""  # item field shown before the item (e.g. "prompt" or a source article)
    noun: str = "story"
    noun_plural: str = "stories"


def roleplay_options(raw: Mapping[str, Any] | None) -> RoleplayOptions:
    raw = dict(raw or {})
    cls = RoleplayOptions
    check_keys(KIND, raw, cls)
    # Validates the preset name or the explicit list (clear message on a bad one).
    static_roles({k: raw[k] for k in ("static_roles", "static_roles_preset") if k in raw})
    eps = raw.get("eps", cls.eps)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 2:
        raise ValueError(f"roleplay judge option 'eps' must be a cosine distance in (0, 2), got {eps!r}")
    return RoleplayOptions(
        static_roles_preset=str_option(KIND, raw, cls, "static_roles_preset"),
        static_roles=tuple(dict(r) for r in raw.get("static_roles", ())),
        dynamic_roles=required_int_option(KIND, raw, cls, "dynamic_roles", minimum=0),
        dynamic_style=str_option(KIND, raw, cls, "dynamic_style", ("coarse", "fine")),
        eps=float(eps),
        min_samples=required_int_option(KIND, raw, cls, "min_samples", minimum=1),
        mode=str_option(KIND, raw, cls, "mode", ("pointwise", "pairwise")),
        use_logprobs=bool_option(KIND, raw, cls, "use_logprobs"),
        context_field=str_option(KIND, raw, cls, "context_field"),
        noun=str_option(KIND, raw, cls, "noun"),
        noun_plural=str_option(KIND, raw, cls, "noun_plural"),
    )


def static_role_options(options: RoleplayOptions) -> dict[str, Any]:
    """The options ``prompts.static_roles`` reads: the preset, or the explicit list when given."""
    raw: dict[str, Any] = {"static_roles_preset": options.static_roles_preset}
    if options.static_roles:
        raw["static_roles"] = list(options.static_roles)
    return raw
