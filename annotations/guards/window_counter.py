"""A count per key in a fixed window, in the Django cache (Redis in production, shared by all workers).

Used by the per-address and per-name limits (log-in failures, new open-link raters).
"""

from __future__ import annotations

from django.core.cache import cache


def window_count(key: str, *, seconds: int) -> int:
    """Add one to ``key``'s count and return it; the window starts at the key's first count."""
    # add() starts the window at the first count; incr() keeps its expiry.
    cache.add(key, 0, timeout=seconds)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=seconds)
        return 1
