"""What rater and researcher pages read: progress, and per-rater quality-control statistics."""
from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from annotations.models import Assignment, AttentionCheck, HumanRating, Item, ItemClaim, Rater, Study

# A rater whose most frequent score covers at least this share of their (at least 5) ratings is flagged.
STRAIGHT_LINING_SHARE = 0.9
STRAIGHT_LINING_MIN_RATINGS = 5


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def planned_items(assignment: Assignment) -> int:
    """How many items the rater is to rate: their item order, cut at the study's items per rater."""
    limit = assignment.rater.study.items_per_rater
    return len(assignment.item_order) if limit is None else min(limit, len(assignment.item_order))


def assignment_progress(*, assignment: Assignment) -> Progress:
    """Pages done of pages planned: items plus the attention checks that fall within them.

    Finished items are the assignment's `position` (kept by the submit services under the assignment's lock).
    """
    planned = planned_items(assignment)
    checks = {p for p in assignment.rater.study.attention_positions if isinstance(p, int) and 0 < p <= planned}
    done = assignment.position + (assignment.attention_checks.count() if checks else 0)
    total = planned + len(checks)
    return Progress(done=min(done, total), total=total)


def study_has_free_seat(*, study: Study, now: datetime | None = None) -> bool:
    """Whether a newcomer could take a seat now: some item (gold items take no seat) has fewer than
    ``raters_per_item`` claims that are finished or touched within the claim timeout (an idle claim's seat
    is freed when someone needs it). Asked before a newcomer gives consent, so that a full study turns
    them away before anything of theirs is stored."""
    cutoff = (now or timezone.now()) - timedelta(minutes=settings.RATER_CLAIM_TIMEOUT_MINUTES)
    held = Q(claims__completed_at__isnull=False) | Q(claims__touched_at__gte=cutoff)
    return (
        Item.objects.filter(study=study, kind=Item.Kind.NORMAL)
        .annotate(held=Count("claims", filter=held))
        .filter(held__lt=study.raters_per_item)
        .exists()
    )


# --- the study-access rule -----------------------------------------------------------------------
# Written once, here: pages, the dashboard, the API and every admin class ask these functions, and judge
# runs are reached through their study (llmjudge.selectors.runs_for_researcher). The role model:
#
# - a superuser sees and changes every study;
# - a researcher (staff or not) sees and changes their own studies;
# - a user holding the permission VIEW_ALL_STUDIES (granted in the admin) also sees every other
#   researcher's study, read-only. Being staff grants nothing by itself: it only opens the admin.

VIEW_ALL_STUDIES = "annotations.view_all_studies"


def _sees_every_study(user: User | AnonymousUser) -> bool:
    return bool(user.is_superuser) or user.has_perm(VIEW_ALL_STUDIES)


def _changes_every_study(user: User | AnonymousUser) -> bool:
    return bool(user.is_superuser)


def studies_for_researcher(*, user: User | AnonymousUser, for_change: bool = False) -> QuerySet[Study]:
    """The studies a user may see (``for_change``: may change): see the role model above. Anonymous users
    see none."""
    if not user.is_authenticated:
        return Study.objects.none()
    every = _changes_every_study(user) if for_change else _sees_every_study(user)
    return Study.objects.all() if every else Study.objects.filter(owner=user)


def study_for_researcher(*, user: User | AnonymousUser, slug: str, for_change: bool = False) -> Study:
    """The study if the user may see it (``for_change``: change it); Http404 otherwise, the same as a slug
    that does not exist, so another researcher's slugs cannot be probed."""
    return get_object_or_404(studies_for_researcher(user=user, for_change=for_change), slug=slug)


def study_changeable(*, user: User | AnonymousUser, study: Study | None) -> bool:
    """Whether the user may change this study (and its questions, items, raters, ratings and runs)."""
    if study is None or not user.is_authenticated:
        return False
    return _changes_every_study(user) or study.owner_id == user.pk


# --- which items count -----------------------------------------------------------------------------


def counted_items(*, study: Study) -> QuerySet[Item]:
    """The items that count in the statistics, the judges' views of human ratings and the personal
    reports: not gold items (their known answers check raters).

    Attention checks are stored apart from ratings (AttentionCheck), so they never reach a rating
    query. Every reader of "the study's items that count" goes through this function.
    """
    return Item.objects.filter(study=study, kind=Item.Kind.NORMAL)


@dataclass(frozen=True)
class RaterStats:
    rater: Rater
    status: str
    items_done: int
    median_item_seconds: float | None
    total_minutes: float
    checks: int
    checks_failed: int
    gold_answered: int
    gold_correct: int
    modal_share: float | None  # share of the rater's ratings equal to their most frequent score
    straight_lining: bool

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_answered if self.gold_answered else None


def _status(rater: Rater, assignment: Assignment | None) -> str:
    if rater.revoked_at:
        return "revoked"
    if assignment is None:
        return "not started"
    if assignment.ended_reason:
        return f"ended ({assignment.ended_reason})"
    return "done" if assignment.completed_at else "in progress"


def study_rater_stats(*, study: Study) -> list[RaterStats]:
    """One row per rater of the study (a fixed number of queries, whatever the number of raters).

    Time counts finished items only. Gold accuracy compares each answered gold question with its known
    answer; straight-lining looks at normal items only (gold answers are expected to repeat).
    """
    raters = list(study.raters.exclude(source=Rater.Source.IMPORTED).select_related("assignment").order_by("id"))
    times: dict[int, list[int]] = defaultdict(list)
    done: Counter[int] = Counter()
    for rater_id, ms in ItemClaim.objects.filter(
        assignment__rater__study=study, completed_at__isnull=False
    ).values_list("assignment__rater_id", "time_spent_ms"):
        done[rater_id] += 1
        if ms is not None:
            times[rater_id].append(ms)
    checks: Counter[int] = Counter()
    failed: Counter[int] = Counter()
    for rater_id, passed in AttentionCheck.objects.filter(assignment__rater__study=study).values_list(
        "assignment__rater_id", "passed"
    ):
        checks[rater_id] += 1
        failed[rater_id] += not passed
    scores: dict[int, list[float]] = defaultdict(list)
    gold_answered: Counter[int] = Counter()
    gold_correct: Counter[int] = Counter()
    for rater_id, score, kind, gold, key in HumanRating.objects.filter(rater__study=study).values_list(
        "rater_id", "score", "item__kind", "item__gold_answers", "question__key"
    ):
        if kind == Item.Kind.GOLD:
            if key in (gold or {}):
                gold_answered[rater_id] += 1
                gold_correct[rater_id] += float(gold[key]) == score
        else:
            scores[rater_id].append(score)
    rows = []
    for rater in raters:
        assignment = getattr(rater, "assignment", None)
        own = scores.get(rater.pk, [])
        modal = Counter(own).most_common(1)[0][1] / len(own) if own else None
        rows.append(
            RaterStats(
                rater=rater,
                status=_status(rater, assignment),
                items_done=done[rater.pk],
                median_item_seconds=statistics.median(times[rater.pk]) / 1000 if times[rater.pk] else None,
                total_minutes=sum(times[rater.pk]) / 60000,
                checks=checks[rater.pk],
                checks_failed=failed[rater.pk],
                gold_answered=gold_answered[rater.pk],
                gold_correct=gold_correct[rater.pk],
                modal_share=modal,
                straight_lining=bool(
                    modal is not None and len(own) >= STRAIGHT_LINING_MIN_RATINGS and modal >= STRAIGHT_LINING_SHARE
                ),
            )
        )
    return rows


# --- a study at a glance ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyOverview:
    items: int  # items that count (gold items check raters and take no seat)
    seats: int  # items x raters per item: the ratings the study is waiting for
    seats_filled: int  # seats whose rater finished the item
    ratings: int  # human ratings, one per rater, item and question
    raters: int  # raters who started (invited links not yet opened are not counted)
    raters_done: int
    raters_active: int  # raters with an item open and touched within the claim timeout
    invitations: int  # invitation links created and not revoked
    # Raters whose ratings came in a ratings file (ratings_import): outside the links, so neither started nor
    # seated, but their ratings are among ``ratings`` and the dashboard's (issue 25 review).
    imported_raters: int = 0

    @property
    def seats_percent(self) -> int:
        return round(100 * self.seats_filled / self.seats) if self.seats else 0


def study_overview(*, study: Study, now: datetime | None = None) -> StudyOverview:
    """Status figures for the study's home page, in a fixed number of queries.

    "Active now" uses the claim timeout: a claim idle longer than that may be released to someone
    else (ItemClaim), so its rater is no longer counted as rating.
    """
    now = now or timezone.now()
    items = counted_items(study=study).count()
    claims = ItemClaim.objects.filter(assignment__rater__study=study)
    assignments = Assignment.objects.filter(rater__study=study).exclude(rater__source=Rater.Source.IMPORTED)
    idle_since = now - timedelta(minutes=settings.RATER_CLAIM_TIMEOUT_MINUTES)
    return StudyOverview(
        items=items,
        seats=items * study.raters_per_item,
        seats_filled=claims.filter(seat__isnull=False, completed_at__isnull=False).count(),
        ratings=HumanRating.objects.filter(rater__study=study).count(),
        raters=assignments.count(),
        raters_done=assignments.filter(completed_at__isnull=False).count(),
        raters_active=claims.filter(completed_at__isnull=True, touched_at__gte=idle_since)
        .values("assignment").distinct().count(),
        invitations=study.raters.filter(source=Rater.Source.INVITED, revoked_at__isnull=True).count(),
        imported_raters=study.raters.filter(source=Rater.Source.IMPORTED).count(),
    )
