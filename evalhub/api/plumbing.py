"""The API's parser and throttles, named in settings.REST_FRAMEWORK.

Apart from evalhub/api/views.py because DRF imports them while rest_framework.views is still loading.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class SafeJSONParser(JSONParser):
    """JSON bodies nested deeper than Python's recursion limit are a 400, not a RecursionError's 500."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, object] | None = None
    ) -> dict[str, Any]:  # a JSON body
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None


class AnonThrottle(AnonRateThrottle):
    """API_THROTTLE_ANON per client address; read at each request so a test can set a small rate."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_ANON


class UserThrottle(UserRateThrottle):
    """API_THROTTLE_USER per researcher (anonymous requests fall to AnonThrottle's address key)."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_USER


_BODY_TOO_LARGE = {
    "description": "the request body is above the limit (ANONYMOUS_BODY_MAX_BYTES without a valid session or "
                   "token, IMPORT_MAX_BYTES with one): refused from Content-Length before it is read",
    "content": {"application/json": {"schema": {
        "type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}}},
}


def document_body_limit(result: dict[str, Any], **_: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every operation that takes a body may answer 413.

    evalhub/server/body_limit.py answers it before any view runs, so no view's schema names it (the CI's
    schemathesis pass found the undocumented 413 on an anonymous POST of 600 kB).
    """
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method in ("post", "put", "patch"):
                operation.setdefault("responses", {}).setdefault("413", _BODY_TOO_LARGE)
    return result
