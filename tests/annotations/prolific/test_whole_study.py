"""A whole study against the local Prolific server (tests/support/prolific_server.py): publish, four
participants through the open link, one returning, one failing the attention check (rejected by the
researcher), approvals by rule, a bonus paid after a crash between create and pay. Afterwards the server holds
exactly one payment per bonus and the right transitions, and EvalHub's seats match Prolific's places."""
from __future__ import annotations

import logging

import pytest
from django.core.management import call_command

from annotations.models import ItemClaim, ProlificBonus, ProlificStudy, ProlificTransition, Rater
from annotations.prolific.bonuses import prolific_bonus_pay
from annotations.prolific.following import prolific_reject, prolific_sync, submissions_to_review
from annotations.prolific.publishing import prolific_publish
from annotations.prolific.records import ProlificError
from tests.support.prolific_participants import REJECTION, TOKEN_ENV, answer_pages, arrive, finish
from tests.support.prolific_server import Fault


def run_whole_study(server, study, researcher, sync):
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


@pytest.mark.django_db
def test_a_whole_study_on_prolific_pays_each_bonus_once_and_keeps_seats_in_step(prolific, study, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    server = prolific
    link, alice, bob, carol, dave = run_whole_study(server, study, researcher, lambda link: prolific_sync(link=link))

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

    prolific_sync(link=link)
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
    # The token never reaches a log line.
    assert server.token not in caplog.text


def _ids(*arrivals):
    return [a.participation.submission_id for a in arrivals]


@pytest.mark.django_db
def test_the_commands_publish_and_sync(prolific, study, researcher):
    call_command("prolific_publish", study.slug, "--token-env", TOKEN_ENV, "--reward-cents", "120", "--minutes", "8")
    link = ProlificStudy.objects.get(study=study)
    assert prolific.study(link.prolific_id)["status"] == "ACTIVE"
    finish(prolific, link, "pid-erin")
    call_command("prolific_sync", study.slug)
    assert [s["status"] for s in map(prolific.submission, [prolific.transitions[-1].resource_id])] == ["APPROVED"]
