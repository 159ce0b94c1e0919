"""Which secrets a judge may send, and where: the one rule for the model, the admin, the API, the
commands, the judge-creation service and the backend at call time (docs/judges.md, "Keys and addresses").

A judge names the environment variable that holds its API key and the server it calls. Both are
chosen by whoever creates the judge (a researcher, a staff member), but the worker's environment also
holds the deployment's own secrets, and the worker can reach internal ports. So:

- a key variable must be listed in ``settings.JUDGE_KEY_VARIABLES`` (names, or ``PREFIX_*``
  patterns), and the deployment's secrets can never be named, even if listed (``FORBIDDEN_*``). An
  entry may carry an owner scope, ``NAME=user:alice|group:lab-2|superusers``: only judges whose owner
  it names may send that key (issue 23, finding 9: any researcher could name ``OPENAI_API_KEY`` and
  spend the operator's key). The grant is the operator's, in the environment: there is no admin page
  that hands keys out. It is checked for the judge's owner at creation and again at call time;
- a base URL's host must be listed in ``settings.JUDGE_BASE_URL_HOSTS`` (names, IP addresses, CIDR
  networks, or ``*.domain`` wildcards, each optionally with ``:port``); link-local and cloud-metadata
  addresses are always refused, by name, by literal address and, at call time, after DNS resolution.
  A host matched only by a wildcard must resolve to public addresses: loopback and private addresses
  need the exact name or address listed, so a public name cannot be pointed at an internal port. An
  entry with a port allows only that port (the default lists vLLM's 8000, not Redis's 6379 or
  PostgreSQL's 5432 on the same host); one without allows every port of that host.

Errors are ``EndpointRefused`` (a ValueError) with a one-line message naming the rule and the setting.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from django.conf import settings

from annotations.guards.variable_grants import KeyHolder, matching_scopes, variable_grants

# The deployment's own secrets (evalhub/settings.py, docker-compose.yml) and every name shaped like a
# credential of something other than an LLM provider. Checked after the allow-list, so an operator who
# lists SECRET_KEY or writes a pattern such as "*" still cannot hand these to a judge.
FORBIDDEN_KEY_NAMES = frozenset({
    "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "POSTGRES_PASSWORD", "POSTGRES_USER",
    "FLOWER_PASSWORD", "FLOWER_BASIC_AUTH", "FLOWER_USER", "DJANGO_SUPERUSER_PASSWORD",
})
FORBIDDEN_KEY_PREFIXES = ("DJANGO_", "POSTGRES_", "PG", "FLOWER_", "CELERY_", "AWS_", "GOOGLE_APPLICATION_")
FORBIDDEN_KEY_SUFFIXES = ("_PASSWORD", "_SECRET", "_SECRET_KEY", "_TOKEN", "_URL", "_FILE")

# Cloud metadata services, by name and by address; link-local networks are refused whole.
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "metadata.goog", "instance-data"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
LINK_LOCAL_NETWORKS = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Iterable[str]]


class EndpointRefused(ValueError):
    """A judge's key variable or base URL breaks the rule; the message names the rule and the setting."""


def _forbidden_key(name: str) -> bool:
    upper = name.upper()
    return (
        upper in FORBIDDEN_KEY_NAMES
        or upper.startswith(FORBIDDEN_KEY_PREFIXES)
        or upper.endswith(FORBIDDEN_KEY_SUFFIXES)
    )


def key_grants() -> list[tuple[str, frozenset[str] | None]]:
    """``JUDGE_KEY_VARIABLES`` as (pattern, scopes): None for an entry without ``=`` (every owner)."""
    return variable_grants(settings.JUDGE_KEY_VARIABLES)


def check_key_variable(name: str, holder: KeyHolder | None = None) -> None:
    """Refuse a key variable that is a deployment secret, is not in JUDGE_KEY_VARIABLES, or (``holder`` given:
    the judge's owner) is not granted to that owner. "" passes."""
    if not name:
        return
    if _forbidden_key(name):
        raise EndpointRefused(
            f"key variable {name!r} is refused: the deployment's secrets (SECRET_KEY, DATABASE_URL, *_PASSWORD, "
            "*_TOKEN, *_URL ...) can never be sent to a judge"
        )
    grants = key_grants()
    matching = matching_scopes(name, grants)
    if not matching:
        listed = ", ".join(pattern for pattern, _ in grants) or "nothing"
        raise EndpointRefused(f"key variable {name!r} is not allowed: JUDGE_KEY_VARIABLES lists {listed}")
    if holder is not None and not any(holder.granted(scopes) for scopes in matching):
        # Who else holds it is the operator's business: the words name only the owner asking.
        raise EndpointRefused(
            f"key variable {name!r} is not granted to {holder.username or 'a judge without an owner'}: the operator "
            "grants keys per user or group in JUDGE_KEY_VARIABLES (docs/judges.md)"
        )


def _address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def _always_refused(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address in METADATA_ADDRESSES or any(address in net for net in LINK_LOCAL_NETWORKS)


_BRACKETED = re.compile(r"\[(?P<host>[^\]]+)\](?::(?P<port>\d+))?")


def host_entries() -> list[tuple[str, int | None]]:
    """``JUDGE_BASE_URL_HOSTS`` as (host, port or None for every port). ``vllm:8000``, ``10.0.5.0/24:8000``,
    ``[::1]:8000``; a bare IPv6 address (``::1``) has no port."""
    entries = []
    for raw in settings.JUDGE_BASE_URL_HOSTS:
        entry = raw.strip().lower()
        bracketed = _BRACKETED.fullmatch(entry)
        if bracketed:
            port = bracketed.group("port")
            entries.append((bracketed.group("host"), int(port) if port else None))
            continue
        host, sep, port = entry.rpartition(":")
        if sep and port.isdigit() and ":" not in host:
            entries.append((host, int(port)))
        else:
            entries.append((entry, None))
    return entries


def _listed_exactly(host: str, address: Address | None, port: int) -> bool:
    """Whether host and port are in JUDGE_BASE_URL_HOSTS by the exact name, the address or a listed network."""
    for entry, entry_port in host_entries():
        if entry_port is not None and entry_port != port:
            continue
        if entry == host:
            return True
        if address is not None and "/" in entry:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
        elif address is not None and _address(entry) == address:
            return True
    return False


def _listed_by_wildcard(host: str, port: int) -> bool:
    return any(
        entry.startswith("*.") and fnmatch.fnmatchcase(host, entry) and entry_port in (None, port)
        for entry, entry_port in host_entries()
    )


def _host(url: str) -> tuple[str, int]:
    """The URL's host (lower case, no trailing dot) and port (the scheme's default when none is written)."""
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise EndpointRefused(f"{url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1")
    try:
        port = parsed.port
    except ValueError:
        raise EndpointRefused(f"{url!r} has no valid port") from None
    return parsed.hostname.lower().rstrip("."), port or (443 if parsed.scheme == "https" else 80)


def check_base_url(url: str) -> None:
    """Refuse a base URL whose host is a metadata or link-local address, or whose host and port are not in
    JUDGE_BASE_URL_HOSTS.

    No network access: this is the check at creation. ``check_base_url_resolved`` repeats it at call time.
    """
    if not url:
        return
    host, port = _host(url)
    address = _address(host)
    if host in METADATA_HOSTS or (address is not None and _always_refused(address)):
        raise EndpointRefused(f"base URL host {host!r} is refused: link-local and cloud-metadata addresses never are")
    if not (_listed_exactly(host, address, port) or (address is None and _listed_by_wildcard(host, port))):
        listed = ", ".join(settings.JUDGE_BASE_URL_HOSTS) or "nothing"
        raise EndpointRefused(f"base URL host {host!r} port {port} is not allowed: JUDGE_BASE_URL_HOSTS lists {listed}")


def _system_resolver(host: str) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)]


def check_base_url_resolved(url: str, *, resolve: Resolver = _system_resolver) -> None:
    """``check_base_url``, then the host's addresses now: none may be link-local or metadata; loopback and
    private ones only for a host listed by exact name or address (not by a wildcard).

    A host that does not resolve passes: the call then fails as a connection error, as before.
    """
    check_base_url(url)
    if not url:
        return
    host, port = _host(url)
    try:
        resolved = [a for a in (_address(r) for r in resolve(host)) if a is not None]
    except (OSError, UnicodeError):
        return
    exact = _listed_exactly(host, _address(host), port)
    for address in resolved:
        if _always_refused(address):
            raise EndpointRefused(
                f"base URL host {host!r} resolves to {address}, a link-local or cloud-metadata address: refused"
            )
        if not exact and not address.is_global:
            raise EndpointRefused(
                f"base URL host {host!r} resolves to the internal address {address}: list the host itself "
                "in JUDGE_BASE_URL_HOSTS to allow it"
            )
