"""Prolific's webhook signature check and event body, as EvalHub reads them. The cases' expected verdicts
were written from the documentation (webhooks/verifying), and the signatures are made here with its
Python example, not with any code of EvalHub's or of the test server's."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from annotations.prolific import (
    CompletionCode,
    ProlificClient,
    StudyDraft,
    WebhookEvent,
    WebhookVerdict,
    parse_webhook_event,
    verify_webhook_signature,
)
from tests.support.prolific_server import ProlificServer, WebhookReceiver

SECRET = "cGNqFPb6y0RT3XO9XVSessBDYIbHQ-example"
NOW = 1_700_000_000
BODY = json.dumps({"resource_id": "6394cee383e14a167638b3a1", "event_type": "submission.status.change",
                   "participant_id": "60bf9310e8dec401be6e9615", "status": "AWAITING REVIEW"}).encode()


def documented_signature(secret: str, timestamp: str, body: bytes) -> str:
    """webhooks/verifying: sign the timestamp and body with the secret using SHA256, base64 the digest."""
    return base64.b64encode(hmac.new(secret.encode(), str.encode(timestamp) + body, hashlib.sha256).digest()).decode()


def verdict(*, body=BODY, timestamp=str(NOW), signature=None, secret=SECRET, now=NOW, tolerance=300.0):
    if signature is None:
        signature = documented_signature(SECRET, timestamp or "", body)
    return verify_webhook_signature(secret=secret, body=body, timestamp=timestamp, signature=signature, now=now,
                                    tolerance=tolerance)


@pytest.mark.parametrize(("case", "expected"), [
    ({}, WebhookVerdict.VALID),
    ({"now": NOW + 299}, WebhookVerdict.VALID),
    ({"now": NOW - 299}, WebhookVerdict.VALID),  # our clock a little behind theirs
    ({"now": NOW + 301}, WebhookVerdict.STALE),  # a replay, or our clock far ahead
    ({"now": NOW - 301}, WebhookVerdict.STALE),
    ({"now": NOW + 3600, "tolerance": 7200}, WebhookVerdict.VALID),
    ({"body": BODY.replace(b"AWAITING REVIEW", b"APPROVED")}, "tampered"),
    ({"secret": "another workspace's secret"}, WebhookVerdict.BAD_SIGNATURE),
    ({"signature": documented_signature(SECRET, str(NOW + 1), BODY)}, WebhookVerdict.BAD_SIGNATURE),
    ({"signature": " " + documented_signature(SECRET, str(NOW), BODY) + "\n"}, WebhookVerdict.VALID),
    ({"signature": "not base64 at all"}, WebhookVerdict.BAD_SIGNATURE),
    ({"signature": "é"}, WebhookVerdict.BAD_SIGNATURE),
    ({"signature": ""}, WebhookVerdict.MALFORMED),
    ({"timestamp": None, "signature": "x"}, WebhookVerdict.MALFORMED),
    ({"timestamp": "yesterday"}, WebhookVerdict.MALFORMED),
    ({"timestamp": "nan"}, WebhookVerdict.MALFORMED),
    ({"timestamp": "inf"}, WebhookVerdict.MALFORMED),
])
def test_a_delivery_is_judged_as_the_documentation_says(case, expected):
    if expected == "tampered":
        # Signed over the original body, delivered with another.
        case = {"body": case["body"], "signature": documented_signature(SECRET, str(NOW), BODY)}
        expected = WebhookVerdict.BAD_SIGNATURE
    assert verdict(**case) == expected


def test_a_stale_verdict_is_only_given_to_a_request_we_signed():
    forged_and_old = verdict(signature=documented_signature("guess", str(NOW - 10_000), BODY), timestamp=str(NOW - 10_000))

    assert forged_and_old == WebhookVerdict.BAD_SIGNATURE


def test_an_empty_secret_is_a_configuration_error_not_a_verdict():
    with pytest.raises(ValueError):
        verdict(secret="")


def test_real_deliveries_from_the_local_server_verify_and_share_their_event_id():
    with ProlificServer() as server, WebhookReceiver() as receiver:
        server.subscribe(receiver.url)
        client = ProlificClient(token=server.token, base_url=server.url)
        study = client.create_study(StudyDraft(
            name="n", description="d", external_study_url="https://evalhub.example/open",
            completion_codes=(CompletionCode("C"),), total_available_places=1, estimated_completion_time=5, reward=100))
        client.publish_study(study.id)
        taken = server.participant_starts(study.id, "p-1")
        server.deliver_events(times=2)
        secret = server.webhook_secret()

    hooks = receiver.received
    verdicts = [verify_webhook_signature(secret=secret, body=h.body, timestamp=h.headers["X-Prolific-Request-Timestamp"],
                                         signature=h.headers["X-Prolific-Request-Signature"]) for h in hooks]
    assert verdicts == [WebhookVerdict.VALID, WebhookVerdict.VALID]
    assert hooks[0].headers["X-Event-ID"] == hooks[1].headers["X-Event-ID"]
    assert parse_webhook_event(hooks[0].body) == WebhookEvent("submission.status.change", taken.submission_id,
                                                              "ACTIVE", "p-1")


@pytest.mark.parametrize(("body", "expected"), [
    (BODY, WebhookEvent("submission.status.change", "6394cee383e14a167638b3a1", "AWAITING REVIEW",
                        "60bf9310e8dec401be6e9615")),
    (b'{"resource_id": "s1", "event_type": "study.status.change", "metadata": {}, "status": "ACTIVE"}',
     WebhookEvent("study.status.change", "s1", "ACTIVE", None)),
    (b'{"resource_id": "s1", "event_type": "study.progress.change"}',
     WebhookEvent("study.progress.change", "s1", None, None)),
])
def test_an_event_body_is_read(body, expected):
    assert parse_webhook_event(body) == expected


@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b'{"event_type": "study.status.change"}',
                                  b'{"resource_id": "s1"}', b'{"resource_id": 7, "event_type": "x"}'])
def test_a_body_that_is_not_an_event_is_refused(body):
    with pytest.raises(ValueError):
        parse_webhook_event(body)
