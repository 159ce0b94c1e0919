"""The whole study of issue 26 against the local Prolific server, in two halves that the in-process test and the
worker-and-beat test share: ``run_whole_study`` up to the first poll, ``check_the_rest`` after it."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from annotations.models import ItemClaim, ProlificBonus, ProlificStudy, ProlificTransition, Rater, Study
from annotations.prolific.bonuses import prolific_bonus_pay
from annotations.prolific.following import prolific_reject, submissions_to_review
from annotations.prolific.publishing import prolific_publish
from annotations.prolific.records import ProlificError
from tests.support.prolific_participants import REJECTION, TOKEN_ENV, Arrival, answer_pages, arrive, finish
from tests.support.prolific_server import Fault, ProlificServer


def run_whole_study(
    server: ProlificServer, study: Study, researcher: User, sync: Callable[[ProlificStudy], object]
) -> tuple[ProlificStudy, Arrival, Arrival, Arrival, Arrival]:
    """The study's story; ``sync`` is how EvalHub polls (the service, or the beat task in a worker)."""
    link = prolific_publish(study=study, token_env=TOKEN_ENV, reward_cents=150, minutes=10,
                            base_url="http://testserver", user=researcher)
    alice = finish(server, link, "pid-alice")
    bob = finish(server, link, "pid-bob")
    carol = arrive(server, link.prolific_id, "pid-carol")
    answer_pages(carol, items=1)  # one item and the check, then she leaves
    server.participant_returns(carol.participation.submission_id)
    dave = finish(server, link, "pid-dave", check_answer=1)  # the check never asks for an end of the scale
    sync(link)
    link.refresh_from_db()
    return link, alice, bob, carol, dave


def check_the_rest(
    server: ProlificServer, link: ProlificStudy, researcher: User, alice: Arrival, bob: Arrival, carol: Arrival,
    dave: Arrival, *, sync: Callable[[], object],
) -> None:
    """What follows the first poll: rule approvals, the rejection, two bonuses through crashes, seats."""
    remote = server.study(link.prolific_id)
    assert (remote["total_available_places"], remote["reward"], remote["estimated_completion_time"]) == (4, 150, 10)
    assert remote["completion_codes"][0]["code"] == link.completion_code
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in remote["external_study_url"]
    # Approved by rule: complete and every check passed; the failed check is listed, not rejected.
    statuses = {s["participant"]: s["status"] for s in map(server.submission, _ids(alice, bob, carol, dave))}
    assert statuses == {"pid-alice": "APPROVED", "pid-bob": "APPROVED", "pid-carol": "RETURNED",
                        "pid-dave": "AWAITING REVIEW"}
    assert [row.participant_id for row in submissions_to_review(link=link)] == ["pid-dave"]
    # The returned participant's seats are free again: her link withdrawn, her item back in the pool.
    assert Rater.objects.get(external_id="pid-carol").revoked_at is not None
    assert not ItemClaim.objects.filter(assignment__rater__external_id="pid-carol").exists()

    with pytest.raises(ValueError):
        prolific_reject(link=link, submission_id=dave.participation.submission_id, message="too short",
                        category="FAILED_CHECK", user=researcher)
    prolific_reject(link=link, submission_id=dave.participation.submission_id, message=REJECTION,
                    category="FAILED_CHECK", user=researcher)
    assert server.submission(dave.participation.submission_id)["status"] == "REJECTED"
    assert not ItemClaim.objects.filter(assignment__rater__external_id="pid-dave").exists()

    # A bonus whose process died between create and pay: the create's answer is lost after Prolific acted.
    server.fail_next("bonuses.create", Fault.DROP_AFTER_ACTION)
    with pytest.raises(ProlificError):
        prolific_bonus_pay(link=link, submission_id=alice.participation.submission_id, amount_cents=50,
                           key="alice-quality", user=researcher)
    bonus = prolific_bonus_pay(link=link, submission_id=alice.participation.submission_id, amount_cents=50,
                               key="alice-quality", user=researcher)
    # A second bonus whose pay answer is lost after Prolific paid: read back, never paid again.
    server.fail_next("bonuses.pay", Fault.DROP_AFTER_ACTION)
    second = prolific_bonus_pay(link=link, submission_id=bob.participation.submission_id, amount_cents=75,
                                key="bob-quality", user=researcher)
    again = prolific_bonus_pay(link=link, submission_id=bob.participation.submission_id, amount_cents=75,
                               key="bob-quality", user=researcher)
    assert (bonus.state, second.state, again.state) == ("paid", "paid", "paid")
    assert sorted((p.participant_id, p.amount_cents) for p in server.payments) == [("pid-alice", 50), ("pid-bob", 75)]
    assert ProlificBonus.objects.count() == 2

    sync()
    # EvalHub's seats match Prolific's places: every place-holding submission is a rater holding 2 item seats.
    holding = [s for s in map(server.submission, _ids(alice, bob, carol, dave))
               if s["status"] in ("ACTIVE", "AWAITING REVIEW", "APPROVED")]
    assert ItemClaim.objects.filter(seat__isnull=False, completed_at__isnull=False).count() == 2 * len(holding) == 4
    assert server.study(link.prolific_id)["places_taken"] == len(holding)
    # The right transitions, each with who made it.
    seen = {(t.resource_id, t.to_status, t.actor) for t in ProlificTransition.objects.filter(resource="submission")}
    assert {(alice.participation.submission_id, "APPROVED", "evalhub"),
            (carol.participation.submission_id, "RETURNED", "prolific"),
            (dave.participation.submission_id, "REJECTED", "owner")} <= seen
    researcher_moves = [(t.resource_id, t.action) for t in server.transitions if t.actor == "researcher"]
    assert researcher_moves == [(link.prolific_id, "PUBLISH"), (alice.participation.submission_id, "APPROVE"),
                                (bob.participation.submission_id, "APPROVE"), (dave.participation.submission_id, "REJECT")]


def _ids(*arrivals: Arrival) -> list[str]:
    return [a.participation.submission_id for a in arrivals]


