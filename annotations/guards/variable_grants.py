"""Which environment variables a user may name: the one reading of an operator's grants, for judge keys
(``JUDGE_KEY_VARIABLES``, llmjudge/backends/endpoint_rules.py) and Prolific tokens (``PROLIFIC_TOKEN_VARIABLES``,
annotations/prolific/tokens.py).

An entry is a name or an ``fnmatch`` pattern (``PREFIX_*``), optionally followed by ``=`` and scopes separated by
``|``: ``superusers``, ``user:NAME``, ``group:NAME``. An entry without ``=`` is granted to everyone.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

Grant = tuple[str, frozenset[str] | None]  # (pattern, scopes; None: everyone)


def variable_grants(entries: Iterable[str]) -> list[Grant]:
    """The setting's entries as (pattern, scopes)."""
    grants: list[Grant] = []
    for entry in entries:
        pattern, sep, scopes = entry.strip().partition("=")
        grants.append((pattern.strip(), frozenset(s.strip() for s in scopes.split("|") if s.strip()) if sep else None))
    return grants


def matching_scopes(name: str, grants: list[Grant]) -> list[frozenset[str] | None]:
    """The scopes of every entry whose pattern matches ``name`` (case-sensitive, as environment names are)."""
    return [scopes for pattern, scopes in grants if fnmatch.fnmatchcase(name, pattern)]


@dataclass(frozen=True)
class KeyHolder:
    """Whoever asks to use a variable, as the grants read them: plain values, so a backend needs no ORM."""

    username: str
    groups: frozenset[str] = frozenset()
    superuser: bool = False

    @classmethod
    def of(cls, user: User | AnonymousUser | None) -> KeyHolder:
        """A user's grants; no user (a judge whose owner was deleted) holds only the unscoped entries."""
        if user is None:
            return cls(username="")
        return cls(username=user.get_username(), groups=frozenset(user.groups.values_list("name", flat=True)),
                   superuser=bool(user.is_superuser))

    def granted(self, scopes: frozenset[str] | None) -> bool:
        if scopes is None:
            return True
        return bool(
            (self.superuser and "superusers" in scopes)
            or (self.username and f"user:{self.username}" in scopes)
            or any(f"group:{group}" in scopes for group in self.groups)
        )
