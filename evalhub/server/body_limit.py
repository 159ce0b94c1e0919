"""Request bodies bounded before they are read: 413 from the Content-Length header alone.

A rater page (/r/<token>/, /s/<token>/) or an anonymous visitor never needs more than a form's few
kilobytes, so above ANONYMOUS_BODY_MAX_BYTES the request is answered 413 before Django parses (and
spools to disk) a single byte of it; the attack read a 300 MB multipart POST to a rater URL in full.
Everyone else (a logged-in researcher, an API client with an Authorization header, whom DRF
authenticates later) may send up to IMPORT_MAX_BYTES plus room for the multipart envelope: an upload
above the import limit is refused before it is read too. A body without Content-Length is read by
Django as empty, so the header is the whole story.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

RATER_PREFIXES = ("/r/", "/s/")
MULTIPART_ROOM = 1024 * 1024  # form fields and part headers around the file


def body_limit(request: HttpRequest) -> int:
    if request.path.startswith(RATER_PREFIXES):
        return settings.ANONYMOUS_BODY_MAX_BYTES
    if not request.user.is_authenticated and "HTTP_AUTHORIZATION" not in request.META:
        return settings.ANONYMOUS_BODY_MAX_BYTES
    return settings.IMPORT_MAX_BYTES + MULTIPART_ROOM


class RequestBodyLimitMiddleware:
    """After AuthenticationMiddleware (it asks whether the user is logged in), before any view reads the body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # Django reads a body with an unreadable length as empty
        limit = body_limit(request)
        if length > limit:
            message = f"the request body is {length} bytes, above the limit of {limit} bytes for this address"
            if request.path.startswith("/api/"):
                response: HttpResponse = JsonResponse({"detail": message}, status=413)
            else:
                response = HttpResponse(message + "\n", status=413, content_type="text/plain; charset=utf-8")
            return response
        return self.get_response(request)
