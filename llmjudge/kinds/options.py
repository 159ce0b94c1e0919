"""Each judge kind's settings (``Judge.options``), typed and validated in one place.

``create_judge --kind ...`` and the admin form call ``options_for(kind, raw)`` to refuse bad
settings with a message naming the option; the pipeline calls it again when a run starts and
stores ``to_json()`` in ``JudgeRun.params`` so a run records exactly what it used. Unknown keys are
errors (a typo such as ``profile_sise`` must not silently fall back to the default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from llmjudge.kinds import persona, rubric
from llmjudge.kinds.roleplay import DEFAULT_EPS, DYNAMIC_ROLES, static_roles


def _check_keys(kind: str, raw: Mapping[str, Any], cls: type) -> None:
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(
            f"unknown option(s) for a {kind} judge: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def _int(kind: str, raw: Mapping[str, Any], key: str, default: int | None, *, minimum: int) -> int | None:
    value = raw.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{kind} judge option {key!r} must be an integer >= {minimum}, got {value!r}")
    return value


def _str(kind: str, raw: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...] = ()) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{kind} judge option {key!r} must be a text, got {value!r}")
    if choices and value not in choices:
        raise ValueError(f"{kind} judge option {key!r} must be one of {', '.join(choices)}, got {value!r}")
    return value


@dataclass(frozen=True)
class RubricOptions:
    version: str = rubric.DEFAULT_ABSOLUTE_VERSION  # absolute template version; relative uses v2
    instruction: str = "{prompt}"  # item-field template -> Prometheus' instruction
    response: str = "{story}"  # item-field template -> the response graded
    reference_field: str = ""  # item field holding a score-5 reference answer
    system_prompt: bool = True  # send prometheus-eval's system message on chat backends


@dataclass(frozen=True)
class PersonalizedOptions:
    profile_size: int = 3  # k
    split_seed: int = 0
    held_out: int | None = None  # at most this many held-out items per rater (None: all the rest)
    noun: str = "story"
    noun_plural: str = "stories"


@dataclass(frozen=True)
class PersonaOptions:
    method: str = "cinemetric"
    training_examples: int = 5  # the paper's 5 training ratings per rater
    split_seed: int = 0
    held_out: int | None = 10  # the paper's 10 test items per rater
    characters_proposed: int = persona.CHARACTERS_PROPOSED
    characters_used: int = persona.CHARACTERS_USED
    proposal_attempts: int = 3  # proposal rounds before a rater is reported as lacking characters
    noun: str = "story"
    noun_plural: str = "stories"


@dataclass(frozen=True)
class RoleplayOptions:
    static_roles_preset: str = "story"
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


KindOptions = RubricOptions | PersonalizedOptions | PersonaOptions | RoleplayOptions


def _bool(kind: str, raw: Mapping[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{kind} judge option {key!r} must be true or false, got {value!r}")
    return value


def options_for(kind: str, raw: Mapping[str, Any] | None) -> KindOptions | None:
    """Validated options of a judge kind; None for the plain judge (it has none)."""
    raw = dict(raw or {})
    if kind == "plain":
        if raw:
            raise ValueError(f"a plain judge takes no options, got {', '.join(sorted(raw))}")
        return None
    if kind == "rubric":
        _check_keys(kind, raw, RubricOptions)
        version = _str(kind, raw, "version", RubricOptions.version, rubric.ABSOLUTE_VERSIONS)
        mapping = rubric.ItemMapping.from_options(raw)
        return RubricOptions(
            version=version,
            instruction=mapping.instruction,
            response=mapping.response,
            reference_field=mapping.reference_field,
            system_prompt=_bool(kind, raw, "system_prompt", True),
        )
    if kind == "personalized":
        _check_keys(kind, raw, PersonalizedOptions)
        return PersonalizedOptions(
            profile_size=_int(kind, raw, "profile_size", 3, minimum=1),  # type: ignore[arg-type]
            split_seed=_int(kind, raw, "split_seed", 0, minimum=0),  # type: ignore[arg-type]
            held_out=_int(kind, raw, "held_out", None, minimum=1),
            noun=_str(kind, raw, "noun", "story"),
            noun_plural=_str(kind, raw, "noun_plural", "stories"),
        )
    if kind == "persona":
        _check_keys(kind, raw, PersonaOptions)
        used = _int(kind, raw, "characters_used", persona.CHARACTERS_USED, minimum=1)
        proposed = _int(kind, raw, "characters_proposed", persona.CHARACTERS_PROPOSED, minimum=1)
        if proposed < used:  # type: ignore[operator]
            raise ValueError(f"persona judge proposes {proposed} characters but needs {used}")
        return PersonaOptions(
            method=_str(kind, raw, "method", "cinemetric", tuple(persona.METHODS)),
            training_examples=_int(kind, raw, "training_examples", 5, minimum=1),  # type: ignore[arg-type]
            split_seed=_int(kind, raw, "split_seed", 0, minimum=0),  # type: ignore[arg-type]
            held_out=_int(kind, raw, "held_out", 10, minimum=1),
            characters_proposed=proposed,  # type: ignore[arg-type]
            characters_used=used,  # type: ignore[arg-type]
            proposal_attempts=_int(kind, raw, "proposal_attempts", 3, minimum=1),  # type: ignore[arg-type]
            noun=_str(kind, raw, "noun", "story"),
            noun_plural=_str(kind, raw, "noun_plural", "stories"),
        )
    if kind == "roleplay":
        _check_keys(kind, raw, RoleplayOptions)
        # Validates the preset name or the explicit list (clear message on a bad one).
        static_roles({k: raw[k] for k in ("static_roles", "static_roles_preset") if k in raw})
        eps = raw.get("eps", DEFAULT_EPS)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 2:
            raise ValueError(f"roleplay judge option 'eps' must be a cosine distance in (0, 2), got {eps!r}")
        return RoleplayOptions(
            static_roles_preset=_str(kind, raw, "static_roles_preset", "story"),
            static_roles=tuple(dict(r) for r in raw.get("static_roles", ())),
            dynamic_roles=_int(kind, raw, "dynamic_roles", DYNAMIC_ROLES, minimum=0),  # type: ignore[arg-type]
            dynamic_style=_str(kind, raw, "dynamic_style", "coarse", ("coarse", "fine")),
            eps=float(eps),
            min_samples=_int(kind, raw, "min_samples", 1, minimum=1),  # type: ignore[arg-type]
            mode=_str(kind, raw, "mode", "pointwise", ("pointwise", "pairwise")),
            use_logprobs=_bool(kind, raw, "use_logprobs", True),
            context_field=_str(kind, raw, "context_field", ""),
            noun=_str(kind, raw, "noun", "story"),
            noun_plural=_str(kind, raw, "noun_plural", "stories"),
        )
    raise ValueError(f"unknown judge kind {kind!r} (known: plain, rubric, personalized, persona, roleplay)")


def to_json(options: KindOptions | None) -> dict[str, Any]:
    """The options as stored in ``Judge.options`` / ``JudgeRun.params`` (defaults written out)."""
    if options is None:
        return {}
    data = asdict(options)
    if "static_roles" in data:
        data["static_roles"] = list(data["static_roles"])
        if not data["static_roles"]:
            del data["static_roles"]
    return data
