"""Orderings and the exactly-N-raters assignment, through the services."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotations.models import HumanRating, Item, ItemClaim, Rater, Study
from annotations.services import (
    assignment_next_step,
    assignment_start,
    item_order,
    question_parts,
    rating_submit,
)
from annotations.studies import StudySpecError
from tests.support.raterkit import add_story_items


def _start(study: Study, **rater_fields: object):
    return assignment_start(rater=Rater.objects.create(study=study, **rater_fields))


def _finish_current(assignment, value: int = 3) -> Item | None:
    """Answer every page of the rater's current item; returns the item (None when there was none)."""
    step = assignment_next_step(assignment=assignment)
    if step.kind != "item":
        return None
    item = step.claim.item
    for part in question_parts(list(assignment.rater.study.questions.all())):
        rating_submit(assignment=assignment, item=item, scores={q.key: value for q in part})
    return item


def test_blocked_order_follows_the_study_group_order_then_import_order(study):
    assert study.groups == ["gpt2", "human"]
    order = [Item.objects.get(pk=pk).external_id for pk in item_order(study=study, seed=1)]
    assert order == ["g1", "g2", "h1", "h2"]


def test_blocked_order_puts_unlisted_groups_last(study):
    study.groups = ["human"]
    study.save()
    order = [Item.objects.get(pk=pk).external_id for pk in item_order(study=study, seed=1)]
    assert order == ["h1", "h2", "g1", "g2"]


def test_fixed_order_is_the_import_order(study):
    study.ordering = Study.Ordering.FIXED
    study.save()
    assert [Item.objects.get(pk=pk).external_id for pk in item_order(study=study, seed=5)] == ["h1", "g1", "h2", "g2"]


def test_mixed_order_is_seeded_per_rater_and_reproducible(study):
    study.ordering = Study.Ordering.MIXED
    study.save()
    add_story_items(study, [(f"x{n}", "human", f"story {n}", "p") for n in range(20)])
    orders = {tuple(item_order(study=study, seed=seed)) for seed in range(5)}
    assert len(orders) > 1
    assert item_order(study=study, seed=3) == item_order(study=study, seed=3)
    assert sorted(item_order(study=study, seed=3)) == sorted(study.items.values_list("id", flat=True))


def test_the_order_is_persisted_at_start_and_kept(study):
    study.ordering = Study.Ordering.MIXED
    study.save()
    assignment = _start(study)
    assert sorted(assignment.item_order) == sorted(study.items.values_list("id", flat=True))
    assert assignment_start(rater=assignment.rater).pk == assignment.pk
    assert assignment_start(rater=assignment.rater).item_order == assignment.item_order


def test_a_rater_rates_the_items_in_their_order_and_never_one_twice(study):
    assignment = _start(study)
    rated = [_finish_current(assignment) for _ in range(5)]
    assert [i.external_id for i in rated[:4]] == ["g1", "g2", "h1", "h2"]
    assert rated[4] is None
    assert assignment_next_step(assignment=assignment).kind == "done"
    assert HumanRating.objects.filter(rater=assignment.rater).count() == 16


def test_each_item_gets_exactly_n_raters(study):
    study.raters_per_item = 2
    study.save()
    assignments = [_start(study) for _ in range(5)]
    for assignment in assignments:
        while _finish_current(assignment) is not None:
            pass
    per_item = {item.external_id: item.claims.filter(completed_at__isnull=False).count() for item in study.items.all()}
    assert per_item == {"h1": 2, "g1": 2, "h2": 2, "g2": 2}
    for item in study.items.all():
        for question in study.questions.all():
            assert HumanRating.objects.filter(item=item, question=question).count() == 2
    # raters 1 and 2 took all four items; raters 3-5 found nothing left and finished with none
    assert [a.claims.count() for a in assignments] == [4, 4, 0, 0, 0]


def test_the_next_item_is_the_first_in_the_raters_order_that_still_has_a_seat(study):
    study.raters_per_item = 1
    study.save()
    first, second = _start(study), _start(study)
    assert assignment_next_step(assignment=first).claim.item.external_id == "g1"
    # g1's only seat is held by the first rater, so the second gets g2
    assert assignment_next_step(assignment=second).claim.item.external_id == "g2"


def test_a_seat_cannot_be_taken_twice_even_by_a_racing_insert(study):
    study.raters_per_item = 1
    study.save()
    first, second = _start(study), _start(study)
    claim = assignment_next_step(assignment=first).claim
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemClaim.objects.create(assignment=second, item=claim.item, seat=claim.seat, claimed_at=now, touched_at=now)


def test_a_seat_left_free_below_the_taken_ones_is_found(study):
    """Seats 0 and 2 taken, seat 1 free (as after an idle claim was released): the next rater gets seat 1,
    although a try at seat `claimed` (2) comes first and fails on the unique seat."""
    study.ordering = Study.Ordering.FIXED
    study.save()
    first, second, third = _start(study), _start(study), _start(study)
    claims = [assignment_next_step(assignment=a).claim for a in (first, second, third)]
    assert [(c.item_id, c.seat) for c in claims] == [(claims[0].item_id, seat) for seat in (0, 1, 2)]
    item = claims[0].item
    ItemClaim.objects.filter(assignment=second).delete()  # seat 1 of the first item is free again
    late = _start(study)
    claim = assignment_next_step(assignment=late).claim
    assert (claim.item, claim.seat) == (item, 1)
    assert sorted(ItemClaim.objects.filter(item=item).values_list("seat", flat=True)) == [0, 1, 2]


def test_an_abandoned_item_is_released_after_the_timeout(study, settings):
    settings.RATER_CLAIM_TIMEOUT_MINUTES = 30
    study.raters_per_item = 1
    study.ordering = Study.Ordering.FIXED
    study.save()
    quitter, other = _start(study), _start(study)
    step = assignment_next_step(assignment=quitter)
    item = step.claim.item
    rating_submit(assignment=quitter, item=item, scores={"grammaticality": 1, "cohesiveness": 1, "likability": 1})
    # within the timeout the seat stays taken
    assert assignment_next_step(assignment=other).claim.item != item
    ItemClaim.objects.filter(assignment=other).delete()
    ItemClaim.objects.filter(assignment=quitter).update(touched_at=timezone.now() - timedelta(minutes=31))
    assert assignment_next_step(assignment=other).claim.item == item
    # the quitter's partial answers went with the seat, so the item will not get a second rater on them
    assert not HumanRating.objects.filter(rater=quitter.rater).exists()
    # and when the quitter comes back they move on to an item that still needs raters
    back = assignment_next_step(assignment=quitter)
    assert back.kind == "item" and back.claim.item != item


def test_an_idle_claim_nobody_else_needs_is_kept(study, settings):
    settings.RATER_CLAIM_TIMEOUT_MINUTES = 30
    assignment = _start(study)
    claim = assignment_next_step(assignment=assignment).claim
    ItemClaim.objects.filter(pk=claim.pk).update(touched_at=timezone.now() - timedelta(days=2))
    assert assignment_next_step(assignment=assignment).claim.pk == claim.pk


def test_a_rater_waits_while_the_remaining_items_are_held_by_others(study):
    study.raters_per_item = 1
    study.items_per_rater = None
    study.save()
    study.items.exclude(external_id="g1").delete()
    holder, waiter = _start(study), _start(study)
    assert assignment_next_step(assignment=holder).kind == "item"
    assert assignment_next_step(assignment=waiter).kind == "wait"
    _finish_current(holder)
    # The study is now full and the waiter rated nothing: an honest "full" page, no completion code
    # (issue 18: a crowd platform would pay for a code given for 0 items).
    assert assignment_next_step(assignment=waiter).kind == "full"
    waiter.refresh_from_db()
    assert waiter.completion_code == "" and waiter.completed_at is None


def test_items_per_rater_limits_a_raters_work(study):
    study.items_per_rater = 2
    study.save()
    assignment = _start(study)
    assert [_finish_current(assignment).external_id for _ in range(2)] == ["g1", "g2"]
    assert assignment_next_step(assignment=assignment).kind == "done"


def test_gold_items_go_to_every_rater_whatever_the_seats(study):
    study.raters_per_item = 1
    study.save()
    Item.objects.filter(external_id="g1").update(kind=Item.Kind.GOLD, gold_answers={"grammaticality": 1})
    first, second = _start(study), _start(study)
    assert assignment_next_step(assignment=first).claim.item.external_id == "g1"
    assert assignment_next_step(assignment=second).claim.item.external_id == "g1"
    assert ItemClaim.objects.filter(item__external_id="g1", seat__isnull=True).count() == 2


def test_story_questions_split_into_two_pages_at_the_revealing_question(story_study):
    parts = question_parts(list(story_study.questions.all()))
    assert [[q.key for q in part] for part in parts] == [["grammaticality", "cohesiveness", "likability"],
                                                         ["relevance"]]


def test_answers_that_are_not_one_page_are_refused(study):
    assignment = _start(study)
    item = assignment_next_step(assignment=assignment).claim.item
    with pytest.raises(ValueError):
        rating_submit(assignment=assignment, item=item, scores={"grammaticality": 3, "relevance": 3})
    assert not HumanRating.objects.exists()


def test_with_a_drawn_human_subset_raters_get_only_the_drawn_items_and_the_gold_ones(study):
    from evalhub.analysis.planning.human_subset import study_human_subset_set  # the draw spans both pools (evalhub)

    add_story_items(study, [(f"x{n}", "human", f"story {n}", "p") for n in range(18)])
    Item.objects.filter(study=study, external_id="x0").update(kind=Item.Kind.GOLD)
    draw = study_human_subset_set(study=study, setting={"share": 0.25, "seed": 3})
    assert draw is not None and draw.groups == {"gpt2": (1, 2), "human": (5, 19)}
    drawn = set(study.items.filter(in_human_subset=True).values_list("id", flat=True))
    gold = study.items.get(external_id="x0").pk
    assert set(item_order(study=study, seed=1)) == drawn | {gold}
    assignment = _start(study)
    seen = set()
    while (item := _finish_current(assignment)) is not None:
        seen.add(item.pk)
    assert seen == drawn | {gold}
    with pytest.raises(StudySpecError, match="already rated"):
        study_human_subset_set(study=study, setting={})
    study.refresh_from_db()
    assert set(item_order(study=study, seed=1)) == drawn | {gold}
    Study.objects.filter(pk=study.pk).update(human_subset={})
    study.refresh_from_db()
    assert len(item_order(study=study, seed=1)) == 22  # every item again, the gold one included
