"""EvalHub's side of Prolific's API, free of Django: the HTTP client (client), the records it reads and
writes (records) and the webhook signature check (webhooks). The app's services build on these; nothing
here reads settings."""

from __future__ import annotations

from annotations.prolific.client import DEFAULT_API_URL, ProlificClient
from annotations.prolific.records import (
    REJECTION_CATEGORIES,
    REJECTION_MESSAGE_MIN_LENGTH,
    SEAT_FREEING_STATUSES,
    BonusLine,
    BulkBonus,
    CompletionCode,
    Project,
    ProlificError,
    Study,
    StudyDraft,
    Submission,
    Workspace,
    new_bonus_payments,
)
from annotations.prolific.webhooks import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookEvent,
    WebhookVerdict,
    parse_webhook_event,
    verify_webhook_signature,
)

__all__ = [
    "DEFAULT_API_URL",
    "EVENT_ID_HEADER",
    "REJECTION_CATEGORIES",
    "REJECTION_MESSAGE_MIN_LENGTH",
    "SEAT_FREEING_STATUSES",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "BonusLine",
    "BulkBonus",
    "CompletionCode",
    "ProlificClient",
    "ProlificError",
    "Project",
    "Study",
    "StudyDraft",
    "Submission",
    "WebhookEvent",
    "WebhookVerdict",
    "Workspace",
    "new_bonus_payments",
    "parse_webhook_event",
    "verify_webhook_signature",
]
