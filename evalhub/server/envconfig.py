"""Strict readers for environment variables.

django-environ parses URLs well but accepts anything as a boolean ("maybe" is False). A typo in
production settings must stop the start-up with a message naming the variable, so these helpers
validate and raise ImproperlyConfigured. Secrets may also come from NAME_FILE (Docker secrets):
the rule is annotations.guards.env_secrets.env_or_file's, the same as for the judges' API keys.
"""
from __future__ import annotations

import re
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from annotations.guards.env_secrets import SecretFileError, env_or_file

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    # One rule for NAME and NAME_FILE, shared with the judge backends' API keys (annotations.guards.env_secrets).
    try:
        return env_or_file(name)
    except SecretFileError as exc:
        raise ImproperlyConfigured(str(exc)) from None


def env_str(name: str, default: str | None = None, *, required: bool = False) -> str | None:
    value = _raw(name)
    if value is None or value == "":
        if required:
            raise ImproperlyConfigured(f"{name} must be set (or {name}_FILE)")
        return default
    return value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true/false, 1/0, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be at least {minimum}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


def env_database(name: str, default: str) -> dict[str, Any]:
    url = env_str(name, default)
    assert url is not None
    if not url.startswith(("sqlite:", "postgres:", "postgresql:", "pgsql:")):
        raise ImproperlyConfigured(f"{name}={url!r}: only sqlite:/// and postgresql:// URLs are supported")
    try:
        config = environ.Env.db_url_config(url)
    except Exception as exc:  # django-environ raises several types for malformed URLs
        raise ImproperlyConfigured(f"{name}={url!r} is not a valid database URL: {exc}") from None
    return config


def env_redis_url(name: str) -> str | None:
    url = env_str(name)
    if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(f"{name}={url!r} must start with redis://, rediss:// or unix://")
    return url


_SCOPE = re.compile(r"superusers|user:[^|=,\s]+|group:[^|=,]+")
_ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def env_key_grants(name: str, default: list[str]) -> list[str]:
    """Key variables a judge may name, each ``NAME`` or ``PREFIX_*``, optionally ``=scope|scope`` with scopes
    ``superusers``, ``user:NAME``, ``group:NAME`` (llmjudge/backends/endpoint_rules.py)."""
    entries = env_list(name, default)
    for entry in entries:
        pattern, sep, scopes = entry.partition("=")
        if not _ENV_PATTERN.fullmatch(pattern.strip()):
            raise ImproperlyConfigured(f"{name}: {pattern!r} is not a variable name or a PREFIX_* pattern")
        if sep and not all(_SCOPE.fullmatch(s.strip()) for s in scopes.split("|")):
            raise ImproperlyConfigured(f"{name}: {entry!r}: scopes are superusers, user:NAME or group:NAME, "
                                       "separated by |")
    return entries


def env_hosts(name: str, default: list[str]) -> list[str]:
    """Hosts, each optionally with ``:port`` (``[v6]:port`` for IPv6); a port must be 1-65535."""
    entries = env_list(name, default)
    for entry in entries:
        bracketed = re.fullmatch(r"\[[^\]]+\](?::(\d+))?", entry)
        if entry.startswith("[") and bracketed is None:
            raise ImproperlyConfigured(f"{name}: {entry!r}: write an IPv6 address with a port as [address]:port")
        host, sep, port = entry.rpartition(":")
        port_text = bracketed.group(1) if bracketed else (port if sep and ":" not in host else None)
        if port_text is not None and not (port_text.isdigit() and 1 <= int(port_text) <= 65535):
            raise ImproperlyConfigured(f"{name}: {entry!r} has no valid port (1-65535)")
    return entries
