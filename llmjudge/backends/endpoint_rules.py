"""Which secrets a judge may send, and where: the one rule for the model, the admin, the API, the
commands, the judge-creation service and the backend at call time (docs/judges.md, "Keys and addresses").

A judge names the environment variable that holds its API key and the server it calls. Both are
chosen by whoever creates the judge (a researcher, a staff member), but the worker's environment also
holds the deployment's own secrets, and the worker can reach internal ports. So:

- a key variable must be listed in ``settings.JUDGE_KEY_VARIABLES`` (names, or ``PREFIX_*``
  patterns), and the deployment's secrets can never be named, even if listed (``FORBIDDEN_*``);
- a base URL's host must be listed in ``settings.JUDGE_BASE_URL_HOSTS`` (names, IP addresses, CIDR
  networks, or ``*.domain`` wildcards); link-local and cloud-metadata addresses are always refused,
  by name, by literal address and, at call time, after DNS resolution. A host matched only by a
  wildcard must resolve to public addresses: loopback and private addresses need the exact name or
  address listed, so a public name cannot be pointed at an internal port.

Errors are ``EndpointRefused`` (a ValueError) with a one-line message naming the rule and the setting.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from django.conf import settings

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


def check_key_variable(name: str) -> None:
    """Refuse a key variable that is a deployment secret or is not in JUDGE_KEY_VARIABLES ("" passes)."""
    if not name:
        return
    if _forbidden_key(name):
        raise EndpointRefused(
            f"key variable {name!r} is refused: the deployment's secrets (SECRET_KEY, DATABASE_URL, *_PASSWORD, "
            "*_TOKEN, *_URL ...) can never be sent to a judge"
        )
    allowed = list(settings.JUDGE_KEY_VARIABLES)
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in allowed):
        raise EndpointRefused(
            f"key variable {name!r} is not allowed: JUDGE_KEY_VARIABLES lists {', '.join(allowed) or 'nothing'}"
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


def _listed_exactly(host: str, address: Address | None) -> bool:
    """Whether the host is in JUDGE_BASE_URL_HOSTS by its exact name, its address or a listed network."""
    for entry in settings.JUDGE_BASE_URL_HOSTS:
        entry = entry.strip().lower()
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


def _listed_by_wildcard(host: str) -> bool:
    return any(
        entry.startswith("*.") and fnmatch.fnmatchcase(host, entry.lower())
        for entry in (e.strip() for e in settings.JUDGE_BASE_URL_HOSTS)
    )


def _host(url: str) -> str:
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise EndpointRefused(f"{url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1")
    return parsed.hostname.lower().rstrip(".")


def check_base_url(url: str) -> None:
    """Refuse a base URL whose host is a metadata or link-local address or is not in JUDGE_BASE_URL_HOSTS.

    No network access: this is the check at creation. ``check_base_url_resolved`` repeats it at call time.
    """
    if not url:
        return
    host = _host(url)
    address = _address(host)
    if host in METADATA_HOSTS or (address is not None and _always_refused(address)):
        raise EndpointRefused(f"base URL host {host!r} is refused: link-local and cloud-metadata addresses never are")
    if not (_listed_exactly(host, address) or (address is None and _listed_by_wildcard(host))):
        listed = ", ".join(settings.JUDGE_BASE_URL_HOSTS) or "nothing"
        raise EndpointRefused(f"base URL host {host!r} is not allowed: JUDGE_BASE_URL_HOSTS lists {listed}")


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
    host = _host(url)
    try:
        resolved = [a for a in (_address(r) for r in resolve(host)) if a is not None]
    except (OSError, UnicodeError):
        return
    exact = _listed_exactly(host, _address(host))
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
