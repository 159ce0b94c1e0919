"""Checking a judge kind's settings (``Judge.options``): each kind's options are a frozen dataclass
whose field defaults are the only place a default is written; these helpers read them from there.

Unknown keys are errors (a typo such as ``profile_sise`` must not silently fall back to the default).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, fields, is_dataclass
from typing import Any

# Judge.options keys read by the backends or the pricing, not by a kind.
BACKEND_OPTION_KEYS = frozenset(
    {"endpoint", "fake_refusal_rate", "fake_latency", "logprobs", "price_per_mtok", "batch_size", "batch_wait"}
)


def without_backend_keys(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """A judge's options minus those the backends read: what its kind validates."""
    return {k: v for k, v in (raw or {}).items() if k not in BACKEND_OPTION_KEYS}


def default(cls: type, key: str) -> object:
    """The default of option ``key``, as the options dataclass ``cls`` states it."""
    for f in fields(cls):
        if f.name == key:
            if f.default is not MISSING:
                return f.default
            if f.default_factory is not MISSING:
                return f.default_factory()
            break
    raise KeyError(key)


def check_keys(kind: str, raw: Mapping[str, Any], cls: type) -> None:
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(
            f"unknown option(s) for a {kind} judge: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def int_option(kind: str, raw: Mapping[str, Any], cls: type, key: str, *, minimum: int) -> int | None:
    value = raw.get(key, default(cls, key))
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{kind} judge option {key!r} must be an integer >= {minimum}, got {value!r}")
    return value


def required_int_option(kind: str, raw: Mapping[str, Any], cls: type, key: str, *, minimum: int) -> int:
    """An integer option whose default is a number (never None)."""
    value = int_option(kind, raw, cls, key, minimum=minimum)
    if value is None:
        raise ValueError(f"{kind} judge option {key!r} must be an integer >= {minimum}, got None")
    return value


def str_option(kind: str, raw: Mapping[str, Any], cls: type, key: str, choices: tuple[str, ...] = ()) -> str:
    value = raw.get(key, default(cls, key))
    if not isinstance(value, str):
        raise ValueError(f"{kind} judge option {key!r} must be a text, got {value!r}")
    if choices and value not in choices:
        raise ValueError(f"{kind} judge option {key!r} must be one of {', '.join(choices)}, got {value!r}")
    return value


def bool_option(kind: str, raw: Mapping[str, Any], cls: type, key: str) -> bool:
    value = raw.get(key, default(cls, key))
    if not isinstance(value, bool):
        raise ValueError(f"{kind} judge option {key!r} must be true or false, got {value!r}")
    return value


def to_json(options: object | None) -> dict[str, Any]:
    """The options as stored in ``Judge.options`` / ``JudgeRun.params`` (defaults written out)."""
    if options is None:
        return {}
    assert is_dataclass(options) and not isinstance(options, type)
    data = asdict(options)
    if "static_roles" in data:
        data["static_roles"] = list(data["static_roles"])
        if not data["static_roles"]:
            del data["static_roles"]
    return data
