"""A database that is restarting or unreachable answers 503 "please retry", not a 500 traceback."""
from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 10


class DatabaseUnavailableMiddleware:
    """Turns a view's OperationalError/InterfaceError into a friendly 503 page with Retry-After.

    Nothing was saved by the failed request (services write in one transaction, rolled back), so
    the rater loses only that click; answers confirmed before stay stored. The page is rendered
    without the request's context processors: they could touch the database again.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("database unavailable for %s %s: %s", request.method, request.path, exception)
        response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        return response
