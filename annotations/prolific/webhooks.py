"""Prolific's webhooks, read without Django: the signature check and the event body, as pure functions.

The scheme (docs.prolific.com/api-reference/webhooks/verifying): the request carries
``X-Prolific-Request-Signature`` and ``X-Prolific-Request-Timestamp`` (UNIX seconds); the signature is
base64(HMAC-SHA256(secret, timestamp + body)), the secret being the workspace's (``POST /hooks/secrets/``).
Every delivery of one event carries the same ``X-Event-ID`` (webhooks/idempotency-and-the-x-event-id-header:
"Events are delivered at least once"), so the receiver drops ids it has seen.

We sign-check the raw body as received: the documented example re-serialises the parsed body with
``json.dumps``, which only gives back the bytes that were signed when the sender used json.dumps'
default separators; the raw bytes are what was signed whatever the sender's serialiser.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import time
from dataclasses import dataclass
from enum import StrEnum

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
# Five minutes either way: wide enough for a retried delivery's clock and ours to disagree, narrow enough
# that a captured request cannot be replayed tomorrow. (Prolific's documentation sets no window.)
DEFAULT_TOLERANCE_SECONDS = 300.0

SUBMISSION_STATUS_CHANGE = "submission.status.change"
STUDY_STATUS_CHANGE = "study.status.change"


class WebhookVerdict(StrEnum):
    """Why a request was accepted or not; only VALID may be acted on."""

    VALID = "valid"
    MALFORMED = "malformed"  # a header is missing, or the timestamp is not a number
    BAD_SIGNATURE = "bad_signature"  # not signed with our secret, or the body was changed
    STALE = "stale"  # signed with our secret, but its timestamp is outside the tolerance (replay, or a skewed clock)


def verify_webhook_signature(
    *,
    secret: str,
    body: bytes,
    timestamp: str | None,
    signature: str | None,
    now: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
) -> WebhookVerdict:
    """Check a delivery against the workspace secret. The digest comparison takes constant time.

    The signature is checked before the timestamp, so STALE is only ever said of a request we signed
    (what tells an operator their clock is off, not that someone is guessing).
    """
    if not secret:
        raise ValueError("the webhook secret is empty")
    if not timestamp or not signature:
        return WebhookVerdict.MALFORMED
    try:
        sent_at = float(timestamp)
    except ValueError:
        return WebhookVerdict.MALFORMED
    if not math.isfinite(sent_at):
        return WebhookVerdict.MALFORMED
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("utf-8") + body, hashlib.sha256).digest()
    expected = base64.b64encode(digest)
    if not hmac.compare_digest(expected, signature.strip().encode("utf-8")):
        return WebhookVerdict.BAD_SIGNATURE
    if abs((time.time() if now is None else now) - sent_at) > tolerance:
        return WebhookVerdict.STALE
    return WebhookVerdict.VALID


@dataclass(frozen=True)
class WebhookEvent:
    """A delivery's body (webhooks/receiving). ``participant_id`` is given for submission events only;
    the study of a submission is not in the body (ask ``get_submission`` or match on the submission id)."""

    event_type: str
    resource_id: str
    status: str | None
    participant_id: str | None


def parse_webhook_event(body: bytes) -> WebhookEvent:
    """The event a verified body describes; ValueError when it is not one."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise ValueError("the webhook body is not JSON") from exc
    if not isinstance(data, dict):
        raise ValueError("the webhook body is not a JSON object")
    event_type, resource_id = data.get("event_type"), data.get("resource_id")
    if not isinstance(event_type, str) or not event_type or not isinstance(resource_id, str) or not resource_id:
        raise ValueError("the webhook body lacks event_type or resource_id")
    status, participant_id = data.get("status"), data.get("participant_id")
    return WebhookEvent(
        event_type=event_type,
        resource_id=resource_id,
        status=status if isinstance(status, str) else None,
        participant_id=participant_id if isinstance(participant_id, str) else None,
    )
