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
