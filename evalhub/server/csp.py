"""Content-Security-Policy on every response, with a fresh nonce for the few inline scripts.

Scripts run only from this site or from an inline ``<script nonce="{{ csp_nonce }}">``: an injected
``<script>`` or event handler (an XSS that slipped past template escaping) does not run. Styles allow
inline ``style=""`` attributes (the progress bars and SVG charts use them; CSS cannot run code).
Forms post only to this site, nothing embeds the pages (as X-Frame-Options DENY), and no plugin loads.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

POLICY = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        nonce = secrets.token_urlsafe(18)
        # An attribute of this request only, which HttpRequest does not declare; csp_nonce() below reads it back.
        request.csp_nonce = nonce  # type: ignore[attr-defined]
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", POLICY.format(nonce=nonce))
        return response


def csp_nonce(request: HttpRequest) -> dict[str, str]:
    """Template context: ``csp_nonce`` for inline scripts."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
