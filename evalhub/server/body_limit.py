"""Request bodies bounded before they are read: 413 from the Content-Length header alone.

A rater page (/r/<token>/, /s/<token>/) or an anonymous visitor never needs more than a form's few
kilobytes, so above ANONYMOUS_BODY_MAX_BYTES the request is answered 413 before Django parses (and
spools to disk) a single byte of it; the attack read a 300 MB multipart POST to a rater URL in full.

The larger limit, IMPORT_MAX_BYTES plus room for the multipart envelope, goes by identity, never by a
header's presence (issue 23, finding 6: an anonymous POST to /accounts/login/ with ``Authorization: x``
sent 209 MB, spooled to 365 MB of temporary files): a session the authentication middleware has
validated, or, on an API path, a token header that is well formed and names a token that exists (DRF
authenticates it again later). An upload above the import limit is refused before it is read too. A
body without Content-Length is read by Django as empty, so the header is the whole story.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

RATER_PREFIXES = ("/r/", "/s/")
MULTIPART_ROOM = 1024 * 1024  # form fields and part headers around the file
# DRF's token authentication: "Token " and the 40 hexadecimal characters of rest_framework.authtoken's keys.
_TOKEN_HEADER = re.compile(r"Token ([0-9a-f]{40})", re.IGNORECASE)  # DRF reads the keyword case-insensitively


def _api_token_is_valid(request: HttpRequest) -> bool:
    match = _TOKEN_HEADER.fullmatch(request.META.get("HTTP_AUTHORIZATION", "").strip())
    if match is None or not request.path.startswith("/api/"):
        return False
    from rest_framework.authtoken.models import Token  # the API's own table; asked only for a large body

    return Token.objects.filter(key=match.group(1), user__is_active=True).exists()


def body_limit(request: HttpRequest, length: int = 0) -> int:
    """The largest body this request may send: the import limit for a validated identity, else the
    anonymous one. The token is looked up only when ``length`` is above the anonymous limit."""
    anonymous = settings.ANONYMOUS_BODY_MAX_BYTES
    if request.path.startswith(RATER_PREFIXES):
        return anonymous
    if request.user.is_authenticated or (length > anonymous and _api_token_is_valid(request)):
        return settings.IMPORT_MAX_BYTES + MULTIPART_ROOM
    return anonymous


class RequestBodyLimitMiddleware:
    """After AuthenticationMiddleware (it asks whether the user is logged in), before any view reads the body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads a body with an unreadable length as empty
        limit = body_limit(request, length)
        if length > limit:
            message = f"the request body is {length} bytes, above the limit of {limit} bytes for this address"
            if request.path.startswith("/api/"):
                response: HttpResponse = JsonResponse({"detail": message}, status=413)
            else:
                response = HttpResponse(message + "\n", status=413, content_type="text/plain; charset=utf-8")
            return response
        return self.get_response(request)
