"""Races that only real concurrent connections show: a double-clicked Next, two raters and one seat.

Run on PostgreSQL (CI's second pass), where requests really overlap; SQLite's embedded mode serialises
writers, so there the same tests would prove nothing and are skipped.
"""
from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test import Client

from annotations.models import HumanRating, ItemClaim, Rater
from annotations.services import assignment_next_step, assignment_start
from tests.annotations.raterkit import add_story_items, open_study, page_key, url_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only(db):
    if connection.vendor != "postgresql":
        pytest.skip("concurrency needs PostgreSQL (SQLite serialises writers)")


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
