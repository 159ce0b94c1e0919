"""What raters and researchers change: assignments, claims, ratings, checks, invitations.

Every write of an answer (rating, check, meta answer) and every claim locks the rater's Assignment row
first (SELECT ... FOR UPDATE on PostgreSQL; SQLite's IMMEDIATE transactions serialise writers anyway),
so a double-clicked Next or two tabs of the same link are applied one after the other and the second
finds its page already answered. Consent and demographics are plain idempotent updates.
Seats make "exactly N raters per item" hold in the database (see ItemClaim).
"""
from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotations.models import (
    Assignment,
    AttentionCheck,
    HumanRating,
    Item,
    ItemClaim,
    MetaAnswer,
    Question,
    Rater,
    Study,
)
from annotations.selectors import planned_items

ATTENTION_END = "attention"


class StaleSubmission(Exception):
    """The submitted page is no longer the rater's current page (reload, back button, double POST)."""


@dataclass(frozen=True)
class Step:
    """Where a rater is. `key` is echoed by the page's form; a POST applies only if it still matches."""

    kind: str  # consent | demographics | item | check | wait | full | done
    key: str
    claim: ItemClaim | None = None
    part: int = 0  # which page of the item's questions (the story study has two)
    parts: int = 1
    position: int = 0  # attention check: shown after this many completed items
    expected: int = 0  # attention check: the value the rater is asked to pick
    item_id: int = 0  # item pages


def posted_step(*, study: Study, key: str) -> Step | None:
    """The answer page a posted `key` names (item or attention check), without reading the rater's state.

    Lets a POST build its form from the key alone; the submit service then locks the assignment and
    checks that the key is still the rater's current page. None for other keys, or malformed ones.
    """
    kind, _, rest = key.partition(":")
    numbers = rest.split(":")
    if not all(n.isdigit() and len(n) < 12 for n in numbers):
        return None
    if kind == "check" and len(numbers) == 1:
        return Step(kind="check", key=key, position=int(numbers[0]))
    if kind == "item" and len(numbers) == 2:
        parts = 1 if study.kind == Study.Kind.META else len(question_parts(list(study.questions.all())))
        item_id, part = int(numbers[0]), int(numbers[1])
        if part < parts:
            return Step(kind="item", key=key, part=part, parts=parts, item_id=item_id)
    return None


# --- pure helpers ------------------------------------------------------------------------------------


def question_parts(questions: list[Question]) -> list[list[Question]]:
    """Split the questions into pages: a question that reveals a hidden field starts a new page.

    The story study becomes [grammaticality, cohesiveness, likability] then [relevance], so the prompt
    (revealed by relevance) is not sent to the browser until the first three are answered.
    """
    parts: list[list[Question]] = []
    for question in questions:
        if not parts or question.reveals:
            parts.append([])
        parts[-1].append(question)
    return parts


def items_for_people(study: Study) -> Q:
    """The items raters are assigned: with a drawn human subset (``Study.human_subset`` with a share or a count,
    issue 27) only the drawn items and the gold ones; else every item. The judge rates every item regardless."""
    if "share" in study.human_subset or "count" in study.human_subset:
        return Q(in_human_subset=True) | Q(kind=Item.Kind.GOLD)
    return Q()


def item_order(*, study: Study, seed: int) -> list[int]:
    """The rater's preference order of item ids under the study's ordering policy (``items_for_people`` only)."""
    items = list(study.items.filter(items_for_people(study)).order_by("position", "id").values_list("id", "group"))
    if study.ordering == Study.Ordering.BLOCKED:
        # The study's group order (the paper: all gpt2 stories, then all human ones); groups not listed
        # come after, alphabetically. Within a group, import order.
        rank = {group: n for n, group in enumerate(study.groups)}
        items.sort(key=lambda row: (rank.get(row[1], len(rank)), row[1] if row[1] not in rank else ""))
    elif study.ordering == Study.Ordering.MIXED:
        random.Random(seed).shuffle(items)
    return [item_id for item_id, _ in items]


def attention_expected(*, study: Study, seed: int, position: int) -> int:
    """The value a check asks for: seeded per rater and position, never an end of the scale, so a rater
    who always picks 1 or always picks 5 fails it."""
    points = study.scale_points()
    inner = points[1:-1] or points
    return random.Random(f"{seed}:{position}").choice(inner)


def _claim_timeout() -> timedelta:
    return timedelta(minutes=settings.RATER_CLAIM_TIMEOUT_MINUTES)


# --- starting ----------------------------------------------------------------------------------------


def assignment_start(*, rater: Rater) -> Assignment:
    """The rater's assignment, created on first visit with a seeded, persisted preference order."""
    try:
        return rater.assignment
    except Assignment.DoesNotExist:
        pass
    seed = secrets.randbits(62)
    order = item_order(study=rater.study, seed=seed)
    try:
        with transaction.atomic():
            return Assignment.objects.create(rater=rater, item_order=order, seed=seed)
    except IntegrityError:  # the same link opened twice at once: the first one wins
        return Assignment.objects.get(rater=rater)


# --- where the rater is ------------------------------------------------------------------------------


def assignment_next_step(*, assignment: Assignment) -> Step:
    """The rater's current page; claims the next item when they have none open.

    The persisted order is the rater's *preference* order: the next item is the first one in it that the
    rater has not taken yet and that still has a free seat (fewer than N raters finished or actively on it).
    """
    with transaction.atomic():
        _lock(assignment)
        return _current_step(assignment)


def _lock(assignment: Assignment) -> None:
    """Lock the rater's Assignment row and refresh the fields other requests may have changed (one query)."""
    fields = ("completed_at", "ended_reason", "completion_code", "position")
    values = Assignment.objects.select_for_update().filter(pk=assignment.pk).values_list(*fields).get()
    for name, value in zip(fields, values, strict=True):
        setattr(assignment, name, value)


def _current_step(assignment: Assignment, *, touch: bool = True) -> Step:
    """The step of a locked assignment (see `assignment_next_step`). `touch`: mark an open claim as seen
    now (a page view; a submit saves the claim itself)."""
    rater = assignment.rater
    study = rater.study
    if assignment.completed_at:
        return Step(kind="done", key="done")
    if study.consent_text and not rater.consented_at:
        return Step(kind="consent", key="consent")
    if study.ask_demographics and not rater.demographics:
        return Step(kind="demographics", key="demographics")
    now = timezone.now()
    claims = assignment.claims.select_related("item").filter(completed_at__isnull=True)
    if not touch:  # a submit: lock the claim, so another rater's `_free_seat` cannot release it meanwhile
        claims = claims.select_for_update(of=("self",))
    claim = claims.first()
    if claim is not None:
        if touch:
            ItemClaim.objects.filter(pk=claim.pk).update(touched_at=now)
        return _item_step(assignment, claim)
    done = assignment.claims.filter(completed_at__isnull=False).count()
    check = _due_check(assignment, done)
    if check is not None:
        return check
    if done < planned_items(assignment):
        claim = _claim_next(assignment, now)
        if claim is not None:
            return _item_step(assignment, claim, fresh=True)
        if _others_hold_work(assignment, now):
            return Step(kind="wait", key="wait")
        if done == 0:
            # Every seat is taken and this rater rated nothing: no completion code (a crowd platform would pay
            # for it). Not completed either, so a seat that frees later is still theirs to take.
            return Step(kind="full", key="full")
    _complete(assignment, now)
    return Step(kind="done", key="done")


def _item_step(assignment: Assignment, claim: ItemClaim, *, fresh: bool = False) -> Step:
    """The page of a claimed item: its first page with an unanswered question (`fresh`: just claimed)."""
    study = assignment.rater.study
    if study.kind == Study.Kind.META:
        return Step(kind="item", key=f"item:{claim.item_id}:0", claim=claim, item_id=claim.item_id)
    parts = question_parts(list(study.questions.all()))
    answered = set() if fresh else set(
        HumanRating.objects.filter(rater_id=assignment.rater_id, item_id=claim.item_id)
        .values_list("question__key", flat=True)
        .order_by()
    )
    part = next((n for n, qs in enumerate(parts) if any(q.key not in answered for q in qs)), len(parts) - 1)
    return Step(kind="item", key=f"item:{claim.item_id}:{part}", claim=claim, part=part, parts=len(parts),
                item_id=claim.item_id)


def _due_check(assignment: Assignment, done: int) -> Step | None:
    study = assignment.rater.study
    planned = planned_items(assignment)
    positions = sorted({p for p in study.attention_positions if isinstance(p, int) and 0 < p <= planned})
    if not positions:
        return None
    answered = set(assignment.attention_checks.values_list("position", flat=True))
    for position in positions:
        if position <= done and position not in answered:
            expected = attention_expected(study=study, seed=assignment.seed, position=position)
            return Step(kind="check", key=f"check:{position}", position=position, expected=expected)
    return None


# How many of the rater's next candidate items one query looks at when claiming (a window of the order,
# not the whole order: with 1,000 items an IN list of every candidate cost more than the rest of the page).
CLAIM_WINDOW = 32
# Items whose seats are all taken by *finished* claims stay full (finished claims are never released), so
# each process remembers them for a while and skips them when scanning a rater's order: without this, late
# in a blocked study every claim would scan the hundreds of finished items at the front of the order. The
# memory is only a hint with a time limit (an admin deleting a rater can free a seat): seats are decided
# by the database (ItemClaim's unique seat), never by it.
FULL_ITEMS_TTL = 30.0
_full_items: dict[int, tuple[float, dict[int, int]]] = {}  # study id -> (expiry, {item id: finished claims})


def _known_full(study: Study) -> dict[int, int]:
    expiry, items = _full_items.get(study.pk, (0.0, {}))
    if expiry < time.monotonic():
        items = {}
        _full_items[study.pk] = (time.monotonic() + FULL_ITEMS_TTL, items)
    return items


def _claim_next(assignment: Assignment, now: datetime) -> ItemClaim | None:
    study = assignment.rater.study
    seats = study.raters_per_item
    full = _known_full(study)
    taken = set(assignment.claims.values_list("item_id", flat=True).order_by())
    candidates = [
        item_id for item_id in assignment.item_order if item_id not in taken and full.get(item_id, 0) < seats
    ]
    cutoff = now - _claim_timeout()
    finished = Q(claims__completed_at__isnull=False)
    for start in range(0, len(candidates), CLAIM_WINDOW):
        window = candidates[start : start + CLAIM_WINDOW]
        rows = {
            item_id: (kind, claimed, held, done)
            for item_id, kind, claimed, held, done in Item.objects.filter(items_for_people(study), id__in=window,
                                                                          study=study)
            .annotate(
                claimed=Count("claims"),
                held=Count("claims", filter=finished | Q(claims__touched_at__gte=cutoff)),
                done=Count("claims", filter=finished),
            )
            .values_list("id", "kind", "claimed", "held", "done")
            .order_by()
        }
        for item_id in window:
            if item_id not in rows:  # deleted since the order was made
                continue
            kind, claimed, held, done = rows[item_id]
            if kind == Item.Kind.GOLD:  # every rater rates the gold items; they take no seat
                claim = _try_claim(assignment, item_id, None, now)
            elif held >= seats:
                if done >= seats:
                    full[item_id] = done
                continue
            else:
                # No idle claims: seats 0..claimed-1 are usually the ones taken, so try the next one
                # before reading the item's claims (a seat freed from an idle claim leaves a gap).
                claim = _try_claim(assignment, item_id, claimed, now) if claimed == held else None
                if claim is None:
                    seat = _free_seat(item_id, seats, cutoff)
                    claim = _try_claim(assignment, item_id, seat, now) if seat is not None else None
            if claim is not None:
                return claim
    return None


def _try_claim(assignment: Assignment, item_id: int, seat: int | None, now: datetime) -> ItemClaim | None:
    """Take `seat` of the item, or None if another rater took it a moment ago (the seat is unique)."""
    try:
        with transaction.atomic():
            return ItemClaim.objects.create(
                assignment=assignment, item_id=item_id, seat=seat, claimed_at=now, touched_at=now
            )
    except IntegrityError:
        return None


def _free_seat(item_id: int, seats: int, cutoff: datetime) -> int | None:
    """The item's lowest free seat, after freeing the seats of claims idle since before `cutoff`.

    An idle claim's partial answers go with its seat: otherwise the item would end up with N+1 raters on
    its first questions.
    """
    claims = list(
        ItemClaim.objects.filter(item_id=item_id)
        .values_list("pk", "seat", "completed_at", "touched_at", "assignment__rater_id")
        .order_by()
    )
    idle = {pk for pk, _, completed, touched, _ in claims if completed is None and touched < cutoff}
    released = _release_idle(item_id, idle, cutoff) if idle else set()
    used = {seat for pk, seat, *_ in claims if pk not in released}
    return next((s for s in range(seats) if s not in used), None)


def _release_idle(item_id: int, candidates: set[int], cutoff: datetime) -> set[int]:
    """Delete those of the item's `candidates` claims that are still idle, with their answers; return them.

    The candidates were read without a lock: their rater may have come back since and submitted (which
    locks the claim: see `_current_step`) or reopened the page. So they are locked and checked again, and
    only claims still unfinished and untouched since `cutoff` lose their seat.
    """
    idle = dict(
        ItemClaim.objects.select_for_update(of=("self",))
        .filter(pk__in=candidates, item_id=item_id, completed_at__isnull=True, touched_at__lt=cutoff)
        .values_list("pk", "assignment__rater_id")
        .order_by()
    )
    if idle:
        HumanRating.objects.filter(item_id=item_id, rater_id__in=idle.values()).delete()
        MetaAnswer.objects.filter(item_id=item_id, rater_id__in=idle.values()).delete()
        ItemClaim.objects.filter(pk__in=idle).delete()
    return set(idle)


def _others_hold_work(assignment: Assignment, now: datetime) -> bool:
    """Items this rater could still take are all held by other raters' active, unfinished claims."""
    taken = set(assignment.claims.values_list("item_id", flat=True))
    candidates = [item_id for item_id in assignment.item_order if item_id not in taken]
    return ItemClaim.objects.filter(
        item_id__in=candidates, completed_at__isnull=True, touched_at__gte=now - _claim_timeout()
    ).exists()


def _complete(assignment: Assignment, now: datetime, reason: str = "") -> None:
    assignment.completed_at = now
    assignment.ended_reason = reason
    if not reason:
        assignment.completion_code = secrets.token_hex(4).upper()
    assignment.save(update_fields=["completed_at", "ended_reason", "completion_code"])


def _locked_step(assignment: Assignment, key: str) -> Step:
    """Lock the assignment and return its current step; raise if the page `key` is no longer current."""
    _lock(assignment)
    step = _current_step(assignment, touch=False)
    if step.key != key:
        raise StaleSubmission(f"page {key!r} is not the current page {step.key!r}")
    return step


def _elapsed_ms(claim: ItemClaim, now: datetime, time_spent_ms: int | None) -> int:
    # The browser's own measure when it sent one (excludes time away from the tab between visits);
    # otherwise the time since the page was last shown.
    if time_spent_ms is not None:
        return time_spent_ms
    return max(0, int((now - claim.touched_at).total_seconds() * 1000))


# --- rater writes ------------------------------------------------------------------------------------


@transaction.atomic
def rating_submit(
    *,
    assignment: Assignment,
    item: Item | int,
    scores: dict[str, int],
    comment: str = "",
    time_spent_ms: int | None = None,
) -> None:
    """Save one page of answers for the rater's current item; the item is done when all are answered.

    `scores` holds exactly the questions of one page (the story study's first page is grammaticality,
    cohesiveness and likability; its second is relevance). That page must be the rater's current one:
    a page answered already, or an item no longer held, raises StaleSubmission and changes nothing.
    `item` is the item or its id (the rater page posts the id; the lock below decides whether it is current).
    """
    item_id = item if isinstance(item, int) else item.pk
    study = assignment.rater.study
    parts = question_parts(list(study.questions.all()))
    part = next((n for n, qs in enumerate(parts) if {q.key for q in qs} == set(scores)), None)
    if part is None:
        raise ValueError(f"answers to {sorted(scores)} do not form one page of the study's questions")
    step = _locked_step(assignment, f"item:{item_id}:{part}")
    claim = step.claim
    assert claim is not None
    now = timezone.now()
    elapsed = _elapsed_ms(claim, now, time_spent_ms)
    # One INSERT for the page. The page is the current one, so none of its questions has an answer; the
    # conflict clause only makes a replay of the same page an update, never a second row.
    HumanRating.objects.bulk_create(
        [
            HumanRating(rater_id=assignment.rater_id, item_id=item_id, question=question,
                        score=scores[question.key], comment=comment, time_spent_ms=elapsed)
            for question in parts[part]
        ],
        update_conflicts=True,
        unique_fields=["rater", "item", "question"],
        update_fields=["score", "comment", "time_spent_ms", "updated_at"],
    )
    claim.time_spent_ms = (claim.time_spent_ms or 0) + elapsed
    claim.touched_at = now
    if step.part == step.parts - 1:
        claim.completed_at = now
    claim.save(update_fields=["time_spent_ms", "touched_at", "completed_at"])
    if claim.completed_at:
        _count_completed(assignment)


def _count_completed(assignment: Assignment) -> None:
    """One more finished item, for the progress bar. Callers hold the assignment's lock, so submits never
    miscount; an admin deleting a finished claim or its item does not lower it, which is why the rater's
    next step counts the claims themselves (`_current_step`)."""
    assignment.position += 1
    Assignment.objects.filter(pk=assignment.pk).update(position=F("position") + 1)


@transaction.atomic
def meta_answer_submit(
    *, assignment: Assignment, item: Item | int, verdict: str, comment: str = "", time_spent_ms: int | None = None
) -> None:
    item_id = item if isinstance(item, int) else item.pk
    step = _locked_step(assignment, f"item:{item_id}:0")
    claim = step.claim
    assert claim is not None
    now = timezone.now()
    elapsed = _elapsed_ms(claim, now, time_spent_ms)
    MetaAnswer.objects.update_or_create(
        rater=assignment.rater,
        item_id=item_id,
        defaults={"verdict": verdict, "comment": comment, "time_spent_ms": elapsed},
    )
    claim.time_spent_ms = elapsed
    claim.touched_at = claim.completed_at = now
    claim.save(update_fields=["time_spent_ms", "touched_at", "completed_at"])
    _count_completed(assignment)


@transaction.atomic
def attention_check_submit(
    *, assignment: Assignment, position: int, answer: int, time_spent_ms: int | None = None
) -> bool:
    """Record a check's answer; on failure under the `end` rule the session ends (no completion code)."""
    step = _locked_step(assignment, f"check:{position}")
    passed = answer == step.expected
    AttentionCheck.objects.create(
        assignment=assignment,
        position=position,
        expected=step.expected,
        answer=answer,
        passed=passed,
        time_spent_ms=time_spent_ms,
    )
    if not passed and assignment.rater.study.attention_rule == Study.AttentionRule.END:
        _complete(assignment, timezone.now(), reason=ATTENTION_END)
    return passed


def consent_give(*, rater: Rater) -> None:
    Rater.objects.filter(pk=rater.pk, consented_at__isnull=True).update(consented_at=timezone.now())


def demographics_save(*, rater: Rater, answers: dict[str, str]) -> None:
    # Every answer is kept, "prefer not to say" included, so a filled form is never an empty dict.
    rater.demographics = {key: value.strip() for key, value in answers.items()}
    rater.save(update_fields=["demographics"])


# --- researcher writes -------------------------------------------------------------------------------


class InvitationLimitError(ValueError):
    """More raters than a study may have (``RATERS_PER_STUDY_MAX``)."""


@transaction.atomic
def invitations_create(*, study: Study, count: int) -> list[Rater]:
    """`count` single-use invitation links (one new rater each), up to ``RATERS_PER_STUDY_MAX`` raters per
    study for every caller (API, study page, admin, command). Under the study's row lock, so two concurrent
    requests cannot both pass the cap."""
    if count < 1:
        raise ValueError("count must be at least 1")
    Study.objects.select_for_update().filter(pk=study.pk).first()
    have = study.raters.count()
    if have + count > settings.RATERS_PER_STUDY_MAX:
        raise InvitationLimitError(f"study {study.slug!r} has {have} raters; {count} more would pass the limit of "
                                   f"{settings.RATERS_PER_STUDY_MAX} (RATERS_PER_STUDY_MAX)")
    return Rater.objects.bulk_create(
        [Rater(study=study, source=Rater.Source.INVITED) for _ in range(count)], batch_size=1000
    )


@transaction.atomic
def rater_revoke(*, rater: Rater) -> None:
    Rater.objects.filter(pk=rater.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    # Revoking frees the seat of whatever the rater had open, and drops its partial answers.
    open_claims = ItemClaim.objects.filter(assignment__rater=rater, completed_at__isnull=True)
    for item_id in open_claims.values_list("item_id", flat=True):
        HumanRating.objects.filter(rater=rater, item_id=item_id).delete()
    open_claims.delete()


def open_link_set(*, study: Study, enabled: bool) -> None:
    study.open_link_enabled = enabled
    study.save(update_fields=["open_link_enabled"])


def open_link_join(*, study: Study, external_id: str = "", platform_study_id: str = "", session_id: str = "") -> Rater:
    """The rater behind an open-link visit: the same participant id returns to the same rater (resume)."""
    defaults: dict[str, Any] = {
        "source": Rater.Source.OPEN,
        "external_study_id": platform_study_id[:200],
        "external_session_id": session_id[:200],
    }
    if not external_id:
        return Rater.objects.create(study=study, **defaults)
    try:
        with transaction.atomic():
            rater, _ = Rater.objects.get_or_create(study=study, external_id=external_id[:200], defaults=defaults)
    except IntegrityError:  # two first visits at once
        rater = Rater.objects.get(study=study, external_id=external_id[:200])
    return rater
