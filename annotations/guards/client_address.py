"""The address a request comes from, for per-address limits (log-in failures, open-link raters).

REMOTE_ADDR is the peer. Behind a reverse proxy the peer is the proxy, so every visitor would share one
address and one visitor could lock out everyone. When the peer is listed in TRUSTED_PROXIES, the client
is the rightmost X-Forwarded-For address that is not itself a trusted proxy: each proxy appends the
address it received from, so addresses left of the last untrusted hop may be forged by the client and
are never used. With TRUSTED_PROXIES empty (the default) X-Forwarded-For is ignored entirely.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(configured: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(value, strict=False) for value in configured)


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(request: HttpRequest) -> str:
    peer = request.META.get("REMOTE_ADDR", "")
    networks = _networks(tuple(settings.TRUSTED_PROXIES))
    if not networks or not _trusted(peer, networks):
        return peer
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:  # a garbled hop: the proxy chain cannot be read past it
                return peer
    return peer
