"""How many new raters one address may create through open links in a window.

Anyone holding a study's open link can make up participant ids; each one becomes a rater. The count is
per client address (annotations.guards.client_address) in the Django cache (Redis in production, shared by all
workers). A returning participant (a known id) is never counted or refused.
"""

from __future__ import annotations

import hashlib

from django.conf import settings

from annotations.guards.window_counter import window_count


def new_open_rater_allowed(*, address: str) -> bool:
    """Count one new open-link rater for ``address``; False once OPEN_LINK_RATERS_PER_ADDRESS are used up."""
    key = "open-link-raters:" + hashlib.sha256(address.encode()).hexdigest()
    return window_count(key, seconds=settings.OPEN_LINK_WINDOW_SECONDS) <= settings.OPEN_LINK_RATERS_PER_ADDRESS
