"""Access logs without the raters' credentials.

A rater's link (``/r/<token>/``) is their only credential and a study's open link (``/s/<token>/``) lets
anyone join it; Prolific's PROLIFIC_PID, STUDY_ID and SESSION_ID identify a participant. gunicorn's access
log would write all of them, for every page, into files that operators ship and keep. The logger class
below masks them in every atom that carries a URL (request line, path, query, referer) before formatting;
``TokenMaskingFilter`` does the same for Django's own log records (e.g. "Not Found: /r/<token>/").
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from gunicorn.glogging import Logger

if TYPE_CHECKING:
    from datetime import timedelta

    from _typeshed.wsgi import WSGIEnvironment
    from gunicorn.http.message import Request
    from gunicorn.http.wsgi import Response

_LINK = re.compile(r"(/[rs]/)[A-Za-z0-9_-]+")
_PARTICIPANT = re.compile(r"((?:PROLIFIC_PID|STUDY_ID|SESSION_ID)=)[^&\s\"']*")


def mask_tokens(text: str) -> str:
    """``text`` with rater and open-link tokens and participant ids replaced by placeholders."""
    return _PARTICIPANT.sub(r"\1<masked>", _LINK.sub(r"\1<token>", text))


class MaskedAccessLogger(Logger):
    """gunicorn's logger with rater tokens masked (``--logger-class evalhub.server.access_log.MaskedAccessLogger``)."""

    def atoms(self, resp: Response, req: Request, environ: WSGIEnvironment, request_time: timedelta
              ) -> dict[str, object]:
        atoms: dict[str, object] = super().atoms(resp, req, environ, request_time)
        for key in ("r", "U", "q", "f", "{referer}i"):
            value = atoms.get(key)
            if isinstance(value, str):
                atoms[key] = mask_tokens(value)
        return atoms


class TokenMaskingFilter(logging.Filter):
    """Masks tokens in a record's message (Django logs 404s and slow requests with their path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_tokens(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
