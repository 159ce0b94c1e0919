"""Bonuses paid exactly once (docs/prolific-api-notes.md, "Paying exactly once").

Prolific's pay call is not idempotent: called twice, it pays twice. So a bonus is a row under a unique key,
written before any call with the submission's payments so far, and moved through its states, each committed
before the next call:

    recorded --create_bonus--> created --(committed "paying")--> pay_bonus --> paid

- a crash (or a lost answer) before ``created``: creating again makes at most a spare, unpaid record;
- a crash between create and pay: the row says ``created``, so the next attempt pays that record, once;
- a pay whose outcome is unknown (a 5xx, a lost answer), or a row found ``paying`` (a crash during the pay):
  the submission's payments are read back and compared with those recorded before; the amount found new is
  ``paid``, nothing found is ``unknown``, and an ``unknown`` bonus is never paid again automatically (Prolific
  pays asynchronously: "not there yet" is not "not paid"); later attempts only read back;
- a pay refused for sure (a 429, a 4xx, a refused connection) stays ``created`` and may be paid again.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from annotations.models import ProlificBonus, ProlificStudy, ProlificSubmission
from annotations.prolific.client import ProlificClient
from annotations.prolific.publishing import link_client
from annotations.prolific.records import BonusLine, ProlificError, new_bonus_payments

if TYPE_CHECKING:
    from django.contrib.auth.models import User

State = ProlificBonus.State


class BonusError(ValueError):
    """The bonus cannot be recorded as asked (unknown submission, a key reused for another amount)."""


def prolific_bonus_pay(
    *, link: ProlificStudy, submission_id: str, amount_cents: int, key: str, user: User | None
) -> ProlificBonus:
    """Pay ``amount_cents`` to the submission's participant once per ``key``: calling again with the same key
    resumes where the last attempt stopped (module docstring) and never pays a second time."""
    client = link_client(link=link)
    bonus = _recorded(client, link, submission_id, amount_cents, key, user)
    if bonus.state == State.RECORDED:
        line = BonusLine(bonus.participant_id, bonus.amount_cents)
        record = client.create_bonus(link.prolific_id, [line])
        bonus.bulk_id, bonus.fees_cents, bonus.state = record.id, record.fees, State.CREATED
        bonus.save(update_fields=["bulk_id", "fees_cents", "state", "updated_at"])
    if bonus.state == State.CREATED:
        _pay_once(client, bonus)
    elif bonus.state in (State.PAYING, State.UNKNOWN):
        _read_back(client, bonus)
    return bonus


def _recorded(
    client: ProlificClient, link: ProlificStudy, submission_id: str, amount_cents: int, key: str, user: User | None
) -> ProlificBonus:
    existing = ProlificBonus.objects.filter(key=key).first()
    if existing is None:
        # The submission's row locked while its payments are read and the bonus recorded: two bonuses of one
        # submission never share a "payments before", and one is recorded only once the earlier ones are settled,
        # so what Prolific shows as paid is always matched to the one bonus it can belong to.
        with transaction.atomic():
            row = ProlificSubmission.objects.select_for_update().filter(link=link, submission_id=submission_id).first()
            if row is None:
                raise BonusError(f"submission {submission_id} is not one of this study's")
            BonusLine(row.participant_id, amount_cents)  # refuses a bad amount before anything is written
            _refuse_unsettled(link, submission_id)
            before = list(client.bonus_payments(submission_id))
            try:
                with transaction.atomic():
                    return ProlificBonus.objects.create(
                        link=link, key=key, submission_id=submission_id, participant_id=row.participant_id,
                        amount_cents=amount_cents, payments_before=before,
                        created_by=user.get_username() if user else "evalhub",
                    )
            except IntegrityError:  # the same key recorded by a concurrent attempt
                pass
        existing = ProlificBonus.objects.get(key=key)
    if existing.link_id != link.pk or existing.submission_id != submission_id or existing.amount_cents != amount_cents:
        raise BonusError(f"bonus key {key!r} already names another bonus ({existing.amount_cents} cents to "
                         f"{existing.submission_id})")
    return existing


def _refuse_unsettled(link: ProlificStudy, submission_id: str) -> None:
    """A second bonus to a submission waits for the first to be paid: matched by amount on read-back, two unsettled
    bonuses of the same amount could not be told apart (one could be marked paid with the other's payment)."""
    earlier = ProlificBonus.objects.filter(link=link, submission_id=submission_id).exclude(state=State.PAID).first()
    if earlier is not None:
        raise BonusError(f"an earlier bonus to submission {submission_id} ({earlier.key!r}, {earlier.state}) is not "
                         "settled: resume it with its key first")


def _pay_once(client: ProlificClient, bonus: ProlificBonus) -> None:
    # Committed before the call: a crash during it leaves "paying", which is only ever read back, never paid.
    with transaction.atomic():
        moved = ProlificBonus.objects.filter(pk=bonus.pk, state=State.CREATED).update(state=State.PAYING)
    if not moved:  # another attempt took it
        bonus.refresh_from_db()
        return
    try:
        client.pay_bonus(bonus.bulk_id)
    except ProlificError as exc:
        if not exc.outcome_unknown:
            ProlificBonus.objects.filter(pk=bonus.pk).update(state=State.CREATED)
            bonus.state = State.CREATED
            raise
        bonus.state = State.PAYING
        _read_back(client, bonus)
        return
    bonus.state, bonus.paid_cents = State.PAID, bonus.amount_cents
    bonus.save(update_fields=["state", "paid_cents", "updated_at"])


def _read_back(client: ProlificClient, bonus: ProlificBonus) -> None:
    """``paid`` when the submission shows the amount as a new payment since the bonus was recorded, else ``unknown``."""
    new = new_bonus_payments(bonus.payments_before, client.bonus_payments(bonus.submission_id))
    if bonus.amount_cents in new:
        bonus.state, bonus.paid_cents = State.PAID, bonus.amount_cents
    else:
        bonus.state = State.UNKNOWN
    bonus.save(update_fields=["state", "paid_cents", "updated_at"])
