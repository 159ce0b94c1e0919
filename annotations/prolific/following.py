"""Following a published study's submissions: one poll (``prolific_sync``, what the command, the page and the
beat task call), a webhook delivery (``prolific_webhook_receive``), and the researcher's rejection.

The rules (docs/raters.md, "Prolific"):

- a participant is matched to their rater by PROLIFIC_PID (the rater's external id);
- a RETURNED, TIMED-OUT or REJECTED submission frees its rater's seats: the rater's link is withdrawn and the
  items they held or rated go back to the pool, with their answers, so every item still ends with exactly
  N raters;
- a submission awaiting review whose assignment is complete and passed every attention check is approved;
  any other is listed for the researcher, who may reject it with a message (>= 100 characters) and a
  category. Nothing is rejected automatically;
- every status change is recorded with who (a researcher, "evalhub" for the approval rule, "prolific" for
  what Prolific reported) and when;
- when every seat is filled, the Prolific study is paused, so it stops taking places.

Calls to Prolific happen outside transactions; each submission's row is written in a small one after.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, transaction
from django.template.defaultfilters import pluralize
from django.utils import timezone

from annotations.models import (
    AttentionCheck,
    HumanRating,
    ItemClaim,
    MetaAnswer,
    ProlificEvent,
    ProlificStudy,
    ProlificSubmission,
    ProlificTransition,
    Rater,
)
from annotations.prolific.client import ProlificClient
from annotations.prolific.publishing import link_client
from annotations.prolific.records import (
    REJECTION_CATEGORIES,
    REJECTION_MESSAGE_MIN_LENGTH,
    SEAT_FREEING_STATUSES,
    STUDY_ACTIVE,
    SUBMISSION_AWAITING_REVIEW,
    SUBMISSION_REJECTED,
)
from annotations.prolific.webhooks import (
    STUDY_STATUS_CHANGE,
    SUBMISSION_STATUS_CHANGE,
    WebhookVerdict,
    parse_webhook_event,
    verify_webhook_signature,
)
from annotations.selectors import study_overview

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)
RULE = "evalhub"  # the actor of what the approval rule and the full-study rule do
REPORTED = "prolific"  # the actor of what Prolific reported (participants' and Prolific's own moves)


@dataclass
class SyncReport:
    submissions: int = 0
    approved: list[str] = field(default_factory=list)
    to_review: list[str] = field(default_factory=list)
    seats_freed: list[str] = field(default_factory=list)
    paused_full: bool = False

    def summary(self) -> str:
        return (f"{self.submissions} submission{pluralize(self.submissions)}; approved {len(self.approved)}; "
                f"to review {len(self.to_review)}; "
                f"seats freed {len(self.seats_freed)}{'; paused: the study is full' if self.paused_full else ''}")


def prolific_sync(*, link: ProlificStudy) -> SyncReport:
    """One poll: the study's status, every submission, the rules above. ProlificError and TokenRefused propagate
    (the beat task records them on the row and tries again at its next tick)."""
    client = link_client(link=link)
    report = SyncReport()
    remote = client.get_study(link.prolific_id)
    _study_status(link, remote.status, actor=REPORTED)
    for submission in client.list_submissions(link.prolific_id):
        report.submissions += 1
        _apply(link, client, submission.id, submission.participant_id, submission.status, report)
    report.paused_full = _pause_when_full(link, client)
    link.synced_at, link.sync_error = timezone.now(), ""
    link.save(update_fields=["synced_at", "sync_error"])
    logger.info("prolific sync of %s: %s", link.study.slug, report.summary())
    return report


def _apply(
    link: ProlificStudy, client: ProlificClient, submission_id: str, participant_id: str, status: str,
    report: SyncReport,
) -> None:
    row = _seen(link, submission_id, participant_id, status, actor=REPORTED)
    if status in SEAT_FREEING_STATUSES and not row.seat_freed:
        _free_seats(row)
        report.seats_freed.append(submission_id)
    if status != SUBMISSION_AWAITING_REVIEW:
        return
    if passes_rule(row.rater):
        approved = client.approve_submission(submission_id)
        _seen(link, submission_id, participant_id, approved.status, actor=RULE)
        report.approved.append(submission_id)
    else:
        report.to_review.append(submission_id)


def passes_rule(rater: Rater | None) -> bool:
    """The approval rule: the rater's assignment is complete (not ended early) and passed every attention check."""
    if rater is None or rater.revoked_at is not None:
        return False
    assignment = getattr(rater, "assignment", None)
    if assignment is None or assignment.completed_at is None or assignment.ended_reason:
        return False
    return not AttentionCheck.objects.filter(assignment=assignment, passed=False).exists()


def _seen(link: ProlificStudy, submission_id: str, participant_id: str, status: str, *, actor: str,
          message: str = "", category: str = "") -> ProlificSubmission:
    """The submission's row with ``status``; a change is recorded as a transition by ``actor``."""
    with transaction.atomic():
        rater = Rater.objects.filter(study=link.study, external_id=participant_id).first()
        row, created = ProlificSubmission.objects.select_for_update().get_or_create(
            link=link, submission_id=submission_id,
            defaults={"participant_id": participant_id, "status": status, "rater": rater},
        )
        before = "" if created else row.status
        if row.rater_id is None and rater is not None:
            row.rater = rater
        row.status = status
        row.save(update_fields=["rater", "status", "updated_at"])
        if before != status:
            ProlificTransition.objects.create(link=link, resource="submission", resource_id=submission_id,
                                              from_status=before, to_status=status, actor=actor,
                                              message=message, category=category)
    return row


def _free_seats(row: ProlificSubmission) -> None:
    """Withdraw the rater and give every item they held or rated back to the pool, with their answers."""
    with transaction.atomic():
        locked = ProlificSubmission.objects.select_for_update().get(pk=row.pk)
        if locked.seat_freed:
            return
        if row.rater_id is not None:
            Rater.objects.filter(pk=row.rater_id, revoked_at__isnull=True).update(revoked_at=timezone.now())
            HumanRating.objects.filter(rater_id=row.rater_id).delete()
            MetaAnswer.objects.filter(rater_id=row.rater_id).delete()
            ItemClaim.objects.filter(assignment__rater_id=row.rater_id).delete()
        locked.seat_freed = True
        locked.save(update_fields=["seat_freed"])
        row.seat_freed = True


def _study_status(link: ProlificStudy, status: str, *, actor: str) -> None:
    if status != link.status:
        ProlificTransition.objects.create(link=link, resource="study", resource_id=link.prolific_id,
                                          from_status=link.status, to_status=status, actor=actor)
        link.status = status
        link.save(update_fields=["status"])


def _pause_when_full(link: ProlificStudy, client: ProlificClient) -> bool:
    overview = study_overview(study=link.study)
    if link.status != STUDY_ACTIVE or overview.seats == 0 or overview.seats_filled < overview.seats:
        return False
    _study_status(link, client.pause_study(link.prolific_id).status, actor=RULE)
    return True


def prolific_reject(*, link: ProlificStudy, submission_id: str, message: str, category: str, user: User) -> None:
    """The researcher rejects a listed submission; its seats are freed. ValueError on a short message or an
    unknown category (nothing is sent)."""
    if len(message.strip()) < REJECTION_MESSAGE_MIN_LENGTH:
        raise ValueError(f"a rejection message needs at least {REJECTION_MESSAGE_MIN_LENGTH} characters; "
                         "Prolific shows it to the participant")
    if category not in REJECTION_CATEGORIES:
        raise ValueError(f"the category must be one of {', '.join(REJECTION_CATEGORIES)}")
    row = ProlificSubmission.objects.get(link=link, submission_id=submission_id)
    rejected = link_client(link=link).reject_submission(submission_id, message=message.strip(), category=category)
    row = _seen(link, submission_id, row.participant_id, rejected.status or SUBMISSION_REJECTED,
                actor=user.get_username(), message=message.strip(), category=category)
    if row.status in SEAT_FREEING_STATUSES:
        _free_seats(row)


def submissions_to_review(*, link: ProlificStudy) -> list[ProlificSubmission]:
    """Submissions awaiting review that the rule did not approve: the researcher decides."""
    rows = link.submissions.filter(status=SUBMISSION_AWAITING_REVIEW).select_related("rater__assignment")
    return [row for row in rows if not passes_rule(row.rater)]


def prolific_webhook_receive(*, body: bytes, headers: Mapping[str, str]) -> int:
    """A webhook delivery: 204 when handled or a duplicate, 400/403 when refused, 404 without a secret, 503 when
    following the submission failed (Prolific delivers again).

    The event only says that something changed: the submission is read again from Prolific and applied as a
    poll would, so an event delivered late or out of order cannot move a submission backwards."""
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    if not secret:
        return 404
    verdict = verify_webhook_signature(secret=secret, body=body, timestamp=headers.get("X-Prolific-Request-Timestamp"),
                                       signature=headers.get("X-Prolific-Request-Signature"))
    event_id = (headers.get("X-Event-ID") or "").strip()[:100]
    if verdict != WebhookVerdict.VALID or not event_id:
        logger.warning("prolific webhook refused: %s", verdict.value if event_id else "no X-Event-ID")
        return 403 if verdict in (WebhookVerdict.BAD_SIGNATURE, WebhookVerdict.STALE) else 400
    try:
        event = parse_webhook_event(body)
    except ValueError:
        return 400
    try:
        with transaction.atomic():
            ProlificEvent.objects.create(event_id=event_id, event_type=event.event_type[:60],
                                         resource_id=event.resource_id[:64])
    except IntegrityError:
        return 204  # a second delivery of an event already handled
    follow = {SUBMISSION_STATUS_CHANGE: _follow_submission, STUDY_STATUS_CHANGE: _follow_study}.get(event.event_type)
    if follow is not None:
        try:
            follow(event.resource_id)
        except Exception:
            # Not handled: forget the id, so Prolific's next delivery of this event is handled (it retries a 5xx).
            ProlificEvent.objects.filter(event_id=event_id).delete()
            logger.exception("prolific webhook: following %s failed", event.event_type)
            return 503
    return 204


def _follow_submission(submission_id: str) -> None:
    known = ProlificSubmission.objects.filter(submission_id=submission_id).select_related("link").first()
    link = known.link if known else _link_of_session(submission_id)
    if link is None:
        logger.info("prolific webhook for a submission of no study here")
        return
    client = link_client(link=link)
    submission = client.get_submission(submission_id)
    _apply(link, client, submission.id, submission.participant_id, submission.status, SyncReport())


def _follow_study(prolific_id: str) -> None:
    link = ProlificStudy.objects.filter(prolific_id=prolific_id, published_at__isnull=False).first()
    if link is not None:
        _study_status(link, link_client(link=link).get_study(prolific_id).status, actor=REPORTED)


def _link_of_session(submission_id: str) -> ProlificStudy | None:
    # Prolific's SESSION_ID placeholder is the submission id: the open link stored it on the rater.
    rater = Rater.objects.filter(external_session_id=submission_id, study__prolific__isnull=False).first()
    return ProlificStudy.objects.filter(study_id=rater.study_id).first() if rater else None

