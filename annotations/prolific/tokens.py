"""Which Prolific token a study may use, and the client that carries it.

The rule is the judge keys' (llmjudge/backends/endpoint_rules.py, docs/judges.md): the operator lists in
``PROLIFIC_TOKEN_VARIABLES`` the environment variables a researcher may name (``NAME`` or ``PREFIX_*``,
optionally ``=superusers|user:NAME|group:NAME``); the database stores only the variable's name; the token
itself is read from the environment (or ``NAME_FILE``) at call time, inside the client, and never written to
a page, a log line, an export or an API answer. The deployment's own secrets can never be named.
The grants are read as the judges' are, by annotations/guards/variable_grants.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from annotations.guards.env_secrets import SecretFileError, env_or_file
from annotations.guards.variable_grants import Grant, KeyHolder, matching_scopes, variable_grants
from annotations.prolific.client import ProlificClient

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

# The deployment's secrets: never a Prolific token, even if an operator's pattern matches them.
FORBIDDEN_NAMES = frozenset({
    "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "POSTGRES_PASSWORD", "POSTGRES_USER",
    "FLOWER_PASSWORD", "FLOWER_BASIC_AUTH", "FLOWER_USER", "DJANGO_SUPERUSER_PASSWORD", "PROLIFIC_WEBHOOK_SECRET",
})
FORBIDDEN_PREFIXES = ("DJANGO_", "POSTGRES_", "PG", "FLOWER_", "CELERY_", "AWS_", "GOOGLE_APPLICATION_")
FORBIDDEN_SUFFIXES = ("_PASSWORD", "_URL", "_FILE")


class TokenRefused(ValueError):
    """The variable is not one this researcher may name, or it holds no token; the message never holds a value."""


def _grants() -> list[Grant]:
    return variable_grants(settings.PROLIFIC_TOKEN_VARIABLES)


def token_variable_check(*, name: str, user: User | AnonymousUser | None) -> None:
    """Refuse a name that is a deployment secret, is not in PROLIFIC_TOKEN_VARIABLES, or is not granted to ``user``."""
    upper = name.upper()
    forbidden = upper in FORBIDDEN_NAMES or upper.startswith(FORBIDDEN_PREFIXES) or upper.endswith(FORBIDDEN_SUFFIXES)
    if not name or forbidden:
        raise TokenRefused(f"{name!r} cannot hold a Prolific token: the deployment's secrets are never sent anywhere")
    matching = matching_scopes(name, _grants())
    if not matching:
        raise TokenRefused(f"{name!r} is not allowed: PROLIFIC_TOKEN_VARIABLES lists "
                           f"{', '.join(p for p, _ in _grants()) or 'nothing'}")
    holder = KeyHolder.of(user)
    if user is None or not any(holder.granted(scopes) for scopes in matching):
        raise TokenRefused(f"{name!r} is not granted to {getattr(user, 'username', 'nobody')}: the operator grants "
                           "Prolific tokens per user or group in PROLIFIC_TOKEN_VARIABLES (docs/raters.md)")


def granted_token_variables(*, user: User | AnonymousUser | None) -> list[str]:
    """The plain names (not patterns) granted to ``user``: what the page offers to pick from."""
    names = []
    for pattern, _ in _grants():
        if "*" in pattern or "?" in pattern or "[" in pattern:
            continue
        try:
            token_variable_check(name=pattern, user=user)
        except TokenRefused:
            continue
        names.append(pattern)
    return names


def prolific_client(*, token_env: str) -> ProlificClient:
    """A client carrying the token the variable holds; TokenRefused when it holds none."""
    try:
        token = env_or_file(token_env)
    except SecretFileError:
        raise TokenRefused(f"{token_env}_FILE names no readable file") from None
    if not token:
        raise TokenRefused(f"the environment variable {token_env} holds no Prolific token")
    return ProlificClient(token=token, base_url=settings.PROLIFIC_API_URL, timeout=float(settings.PROLIFIC_TIMEOUT))
