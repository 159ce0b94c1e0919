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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
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

ATTENTION_END = "attention"


class StaleSubmission(Exception):
    """The submitted page is no longer the rater's current page (reload, back button, double POST)."""


@dataclass(frozen=True)
class Step:
    """Where a rater is. `key` is echoed by the page's form; a POST applies only if it still matches."""

    kind: str  # consent | demographics | item | check | wait | done
    key: str
    claim: ItemClaim | None = None
    part: int = 0  # which page of the item's questions (the story study has two)
    parts: int = 1
    position: int = 0  # attention check: shown after this many completed items
    expected: int = 0  # attention check: the value the rater is asked to pick


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


def item_order(*, study: Study, seed: int) -> list[int]:
    """The rater's preference order of item ids under the study's ordering policy."""
    items = list(study.items.order_by("position", "id").values_list("id", "group"))
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


def planned_items(assignment: Assignment) -> int:
    limit = assignment.rater.study.items_per_rater
    return len(assignment.item_order) if limit is None else min(limit, len(assignment.item_order))


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
    rater = assignment.rater
    study = rater.study
    if assignment.completed_at:
        return Step(kind="done", key="done")
    if study.consent_text and not rater.consented_at:
        return Step(kind="consent", key="consent")
    if study.ask_demographics and not rater.demographics:
        return Step(kind="demographics", key="demographics")
    now = timezone.now()
    with transaction.atomic():
        Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
        claim = assignment.claims.select_related("item").filter(completed_at__isnull=True).first()
        if claim is not None:
            ItemClaim.objects.filter(pk=claim.pk).update(touched_at=now)
            return _item_step(assignment, claim)
        done = assignment.claims.filter(completed_at__isnull=False).count()
        check = _due_check(assignment, done)
        if check is not None:
            return check
        if done < planned_items(assignment):
            claim = _claim_next(assignment, now)
            if claim is not None:
                return _item_step(assignment, claim)
            if _others_hold_work(assignment, now):
                return Step(kind="wait", key="wait")
        _complete(assignment, now)
    return Step(kind="done", key="done")


def _item_step(assignment: Assignment, claim: ItemClaim) -> Step:
    study = assignment.rater.study
    if study.kind == Study.Kind.META:
        return Step(kind="item", key=f"item:{claim.item_id}:0", claim=claim)
    parts = question_parts(list(study.questions.all()))
    answered = set(
        HumanRating.objects.filter(rater_id=assignment.rater_id, item_id=claim.item_id).values_list(
            "question__key", flat=True
        )
    )
    part = next((n for n, qs in enumerate(parts) if any(q.key not in answered for q in qs)), len(parts) - 1)
    return Step(kind="item", key=f"item:{claim.item_id}:{part}", claim=claim, part=part, parts=len(parts))


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


def _claim_next(assignment: Assignment, now: datetime) -> ItemClaim | None:
    study = assignment.rater.study
    seats = study.raters_per_item
    taken = set(assignment.claims.values_list("item_id", flat=True))
    candidates = [item_id for item_id in assignment.item_order if item_id not in taken]
    if not candidates:
        return None
    kinds = dict(Item.objects.filter(id__in=candidates, study=study).values_list("id", "kind"))
    cutoff = now - _claim_timeout()
    held = dict(
        ItemClaim.objects.filter(item_id__in=candidates)
        .filter(Q(completed_at__isnull=False) | Q(touched_at__gte=cutoff))
        .values("item_id")
        .annotate(n=Count("id"))
        .values_list("item_id", "n")
    )
    for item_id in candidates:
        if item_id not in kinds:  # deleted since the order was made
            continue
        if kinds[item_id] == Item.Kind.GOLD:
            seat = None  # every rater rates the gold items; they take no seat
        elif held.get(item_id, 0) >= seats:
            continue
        else:
            _release_idle_claims(item_id, cutoff)
            used = set(ItemClaim.objects.filter(item_id=item_id).values_list("seat", flat=True))
            free = [s for s in range(seats) if s not in used]
            if not free:
                continue
            seat = free[0]
        try:
            with transaction.atomic():
                return ItemClaim.objects.create(
                    assignment=assignment, item_id=item_id, seat=seat, claimed_at=now, touched_at=now
                )
        except IntegrityError:  # another rater took that seat a moment ago: try the next item
            continue
    return None


def _release_idle_claims(item_id: int, cutoff: datetime) -> None:
    """Free the seats of unfinished claims idle since before `cutoff`, with their partial answers.

    Partial answers go too: otherwise the item would end up with N+1 raters on its first questions.
    """
    idle = list(
        ItemClaim.objects.filter(item_id=item_id, completed_at__isnull=True, touched_at__lt=cutoff).values_list(
            "pk", "assignment__rater_id"
        )
    )
    if not idle:
        return
    rater_ids = [rater_id for _, rater_id in idle]
    HumanRating.objects.filter(item_id=item_id, rater_id__in=rater_ids).delete()
    MetaAnswer.objects.filter(item_id=item_id, rater_id__in=rater_ids).delete()
    ItemClaim.objects.filter(pk__in=[pk for pk, _ in idle]).delete()


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
    Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
    assignment.refresh_from_db()
    step = assignment_next_step(assignment=assignment)
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
    item: Item,
    scores: dict[str, int],
    comment: str = "",
    time_spent_ms: int | None = None,
) -> None:
    """Save one page of answers for the rater's current item; the item is done when all are answered.

    `scores` holds exactly the questions of one page (the story study's first page is grammaticality,
    cohesiveness and likability; its second is relevance). That page must be the rater's current one:
    a page answered already, or an item no longer held, raises StaleSubmission and changes nothing.
    """
    study = assignment.rater.study
    parts = question_parts(list(study.questions.all()))
    part = next((n for n, qs in enumerate(parts) if {q.key for q in qs} == set(scores)), None)
    if part is None:
        raise ValueError(f"answers to {sorted(scores)} do not form one page of the study's questions")
    step = _locked_step(assignment, f"item:{item.pk}:{part}")
    claim = step.claim
    assert claim is not None
    questions = parts[part]
    now = timezone.now()
    elapsed = _elapsed_ms(claim, now, time_spent_ms)
    for question in questions:
        HumanRating.objects.update_or_create(
            rater=assignment.rater,
            item=item,
            question=question,
            defaults={"score": scores[question.key], "comment": comment, "time_spent_ms": elapsed},
        )
    claim.time_spent_ms = (claim.time_spent_ms or 0) + elapsed
    claim.touched_at = now
    if step.part == step.parts - 1:
        claim.completed_at = now
    claim.save(update_fields=["time_spent_ms", "touched_at", "completed_at"])
    if claim.completed_at:
        assignment.position = assignment.claims.filter(completed_at__isnull=False).count()
        assignment.save(update_fields=["position"])


@transaction.atomic
def meta_answer_submit(
    *, assignment: Assignment, item: Item, verdict: str, comment: str = "", time_spent_ms: int | None = None
) -> None:
    step = _locked_step(assignment, f"item:{item.pk}:0")
    claim = step.claim
    assert claim is not None
    now = timezone.now()
    elapsed = _elapsed_ms(claim, now, time_spent_ms)
    MetaAnswer.objects.update_or_create(
        rater=assignment.rater, item=item, defaults={"verdict": verdict, "comment": comment, "time_spent_ms": elapsed}
    )
    claim.time_spent_ms = elapsed
    claim.touched_at = claim.completed_at = now
    claim.save(update_fields=["time_spent_ms", "touched_at", "completed_at"])
    assignment.position = assignment.claims.filter(completed_at__isnull=False).count()
    assignment.save(update_fields=["position"])


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


@transaction.atomic
def invitations_create(*, study: Study, count: int) -> list[Rater]:
    """`count` single-use invitation links (one new rater each)."""
    if count < 1:
        raise ValueError("count must be at least 1")
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


@transaction.atomic
def meta_study_create(
    *, slug: str, run_id: int, question_key: str, owner: AbstractBaseUser | None = None, limit: int | None = None
) -> Study:
    """A meta-evaluation study (paper appendix C.3.2) from one judge run's answers to one question.

    Each item is one LLM answer, shown as coming from "another rater": the story (and the other source
    fields), the question, the score and the explanation. The run, judge and model stay hidden; the
    LLMRating id is kept in the item's fields under a name raters are never shown.
    """
    from llmjudge.models import LLMRating  # llmjudge depends on annotations, not the reverse

    ratings = (
        LLMRating.objects.filter(run_id=run_id, question__key=question_key, status=LLMRating.Status.OK)
        .select_related("item", "question", "run__study")
        .order_by("item__position", "item_id", "sample")
    )
    if limit is not None:
        ratings = ratings[:limit]
    ratings = list(ratings)
    if not ratings:
        raise ValueError(f"run {run_id} has no parsed answers to question {question_key!r}")
    source = ratings[0].run.study
    shown = [*source.item_fields, "question", "rating", "explanation"]
    study = Study.objects.create(
        slug=slug,
        title=f"Do you agree with another rater? ({source.title})",
        kind=Study.Kind.META,
        instruction=(
            "Another rater read the text below and answered the question. Read the text, their rating and "
            "their explanation, then tell us whether you agree with them, and why."
        ),
        llm_template="{question}",
        item_fields=shown,
        field_labels={
            **source.field_labels,
            "question": "The question",
            "rating": "Their rating",
            "explanation": "Their explanation",
        },
        groups=source.groups,
        scale_min=source.scale_min,
        scale_max=source.scale_max,
        scale_labels=source.scale_labels,
        ordering=Study.Ordering.MIXED,
        raters_per_item=1,
        owner=owner,
    )
    Item.objects.bulk_create(
        Item(
            study=study,
            external_id=f"{r.item.external_id}:{r.question.key}:{r.sample}",
            group=r.item.group,
            position=n,
            fields={
                **{name: r.item.fields.get(name, "") for name in source.item_fields},
                "question": r.question.text,
                "rating": source.label_for(int(r.score)) if r.score == int(r.score) else f"{r.score:g}",
                "explanation": (r.rationale or r.raw).strip(),
                "source_llm_rating": r.pk,
            },
        )
        for n, r in enumerate(ratings)
    )
    return study
