"""The panel's roles (DRPE): the study's static, objective roles from a judge's options or a preset, and the
dynamic, subjective roles read from the model's answer to ``dynamic_roles_prompt`` (llmjudge.kinds.roleplay.prompts).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from llmjudge.kinds.common.templates import as_mapping, load_json

PROMPT_FILE = "drpe_v1"  # the presets live beside the prompts (llmjudge/prompting/data/drpe_v1.json)
DEFAULT_PRESET = "story"


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    kind: str = "dynamic"  # "static" (objective, curated per study) | "dynamic" (generated per item)

    def text(self) -> str:
        return f"{self.name}: {self.description}"


def _role_list(value: object, what: str, kind: str) -> list[Role]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of {{'name': ..., 'description': ...}}")
    roles = []
    for i, entry in enumerate(value):
        obj = as_mapping(entry, f"{what}[{i}]")
        name, description = obj.get("name"), obj.get("description")
        if not isinstance(name, str) or not name.strip() or not isinstance(description, str) or not description.strip():
            raise ValueError(f"{what}[{i}] needs a non-empty 'name' and 'description'")
        roles.append(Role(name.strip(), description.strip(), kind))
    names = [r.name.casefold() for r in roles]
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has two roles with the same name")
    return roles


def static_roles(options: Mapping[str, object]) -> list[Role]:
    """The study's objective roles from a judge's options (see the module docstring)."""
    if "static_roles" in options:
        return _role_list(options["static_roles"], "static_roles", "static")
    preset = str(options.get("static_roles_preset", DEFAULT_PRESET))
    presets = as_mapping(load_json(PROMPT_FILE)["static_presets"], "static_presets")
    if preset not in presets:
        raise ValueError(f"unknown static role preset {preset!r} (known: {', '.join(presets)})")
    return _role_list(presets[preset], f"static role preset {preset!r}", "static")


_PAIR_TYPE = re.compile(
    r"user\s*type\s*[*_]*\s*:\s*[*_]*\s*(?P<name>[^\n]+?)\s*[*_]*\s*\n\s*[*_]*\s*(?:-\s*)?user\s*description\s*[*_]*\s*:"
    r"\s*[*_]*\s*(?P<desc>[^\n]+)",
    re.IGNORECASE,
)
_ROLE_LINE = re.compile(
    r"^[ \t]*(?:\d+[.)]|[-*\u2022])?[ \t]*[*_]*(?P<name>[^:\n*_]{2,80}?)[*_]*[ \t]*(?::|\s[-\u2013\u2014])[*_]*[ \t]*"
    r"(?P<desc>\S[^\n]*)$",
    re.MULTILINE,
)


def parse_roles(text: str) -> list[Role]:
    """Dynamic roles from ``1. <type>: <description>`` lines (or ``User type:``/``User description:``
    pairs), in order; a repeated name is dropped. Intro lines without a description are skipped."""
    text = text or ""
    pairs = [(m.group("name"), m.group("desc")) for m in _PAIR_TYPE.finditer(text)]
    if not pairs:
        pairs = [(m.group("name"), m.group("desc")) for m in _ROLE_LINE.finditer(text)]
    roles: list[Role] = []
    for name, desc in pairs:
        name = name.strip().strip("*_[]<>\"' ").strip()
        desc = desc.strip().strip("*_").strip()
        if not name or not desc or name.casefold() in ("user type", "user description", "note"):
            continue
        if any(r.name.casefold() == name.casefold() for r in roles):
            continue
        roles.append(Role(name, desc, "dynamic"))
    return roles
