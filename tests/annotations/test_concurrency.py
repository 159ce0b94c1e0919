"""Races that only real concurrent connections show: a double-clicked Next, two raters and one seat.

Run on PostgreSQL (CI's second pass), where requests really overlap; SQLite's embedded mode serialises
writers, so there the same tests would prove nothing and are skipped.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.test import Client
from django.utils import timezone

from annotations.models import HumanRating, ItemClaim, Rater, Study
from annotations.services import assignment_next_step, assignment_start, rating_submit
from tests.support.raterkit import add_story_items, open_study, page_key, url_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.services("postgresql", reason="SQLite serialises writers"),
]


def _together(*calls) -> list[object]:
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(n: int, call) -> None:  # noqa: ANN001
        try:
            barrier.wait()
            results[n] = call()
        except Exception as exc:  # noqa: BLE001 - reported below
            results[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_a_double_clicked_next_saves_one_page_once(story_study):
    open_study(story_study)
    add_story_items(story_study)
    rater = Rater.objects.create(study=story_study)
    key = page_key(Client().get(url_of(rater)).content.decode())
    data = {"page": key, "q_grammaticality": "4", "q_cohesiveness": "4", "q_likability": "4"}
    results = _together(*[lambda: Client().post(url_of(rater), data).status_code for _ in range(4)])
    assert results == [302, 302, 302, 302]
    assert HumanRating.objects.count() == 3
    assert ItemClaim.objects.count() == 1
    assert page_key(Client().get(url_of(rater)).content.decode()) == key[:-1] + "1"


def test_two_raters_racing_for_the_last_seat_one_wins(story_study):
    open_study(story_study, raters_per_item=1)
    add_story_items(story_study, [("only", "human", "one story", "p")])
    first = assignment_start(rater=Rater.objects.create(study=story_study))
    second = assignment_start(rater=Rater.objects.create(study=story_study))
    steps = _together(lambda: assignment_next_step(assignment=first).kind,
                      lambda: assignment_next_step(assignment=second).kind)
    assert sorted(steps) == ["item", "wait"]
    assert ItemClaim.objects.count() == 1


def test_a_rater_finishing_an_idle_item_keeps_it_while_another_rater_frees_idle_seats(story_study, settings):
    """Rater A left an item idle past the timeout, then comes back and submits its last page just as rater
    B, claiming, reads A's claim as idle. B must wait for A's submit and leave the finished claim and its
    answers alone (before the fix B deleted both: A's earlier page and then the claim itself)."""
    settings.RATER_CLAIM_TIMEOUT_MINUTES = 30
    open_study(story_study, raters_per_item=1, ordering=Study.Ordering.FIXED)
    add_story_items(story_study)
    a = assignment_start(rater=Rater.objects.create(study=story_study))
    claim = assignment_next_step(assignment=a).claim
    rating_submit(assignment=a, item=claim.item_id, scores={"grammaticality": 4, "cohesiveness": 4, "likability": 4})
    ItemClaim.objects.filter(pk=claim.pk).update(touched_at=timezone.now() - timedelta(minutes=31))
    b = assignment_start(rater=Rater.objects.create(study=story_study))
    submitted = threading.Event()

    def a_submits_and_commits_late() -> None:
        try:
            with transaction.atomic():
                rating_submit(assignment=a, item=claim.item_id, scores={"relevance": 5})
                submitted.set()  # written, locked, not yet committed
                time.sleep(1.5)
        finally:
            submitted.set()
            connections.close_all()

    thread = threading.Thread(target=a_submits_and_commits_late)
    thread.start()
    assert submitted.wait(10)
    b_step = assignment_next_step(assignment=b)
    thread.join()
    finished = ItemClaim.objects.get(pk=claim.pk)
    assert finished.completed_at is not None
    assert HumanRating.objects.filter(rater=a.rater, item_id=claim.item_id).count() == 4
    assert b_step.kind == "item" and b_step.claim.item_id != claim.item_id
