"""What the Prolific page and the study's cost line read: the published study, its submissions with the rule's
verdict, the transitions, the bonuses, and what the human side costs per rating; the study page's count of
submissions by status."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db.models import Count

from annotations.models import HumanRating, ProlificBonus, ProlificStudy, ProlificSubmission, ProlificTransition, Study
from annotations.prolific.following import passes_rule
from annotations.prolific.records import STUDY_ACTIVE, STUDY_PAUSED, SUBMISSION_APPROVED, SUBMISSION_AWAITING_REVIEW


@dataclass(frozen=True)
class HumanCost:
    """Paid so far, in cents of the Prolific account's currency: rewards of approved submissions, Prolific's
    service fee on them (PROLIFIC_SERVICE_FEE, a share; Prolific's answers do not give it), bonuses paid and the
    fees their records stated. ``per_rating`` divides by the human ratings of the approved participants."""

    rewards_cents: int
    reward_fee_cents: Decimal
    bonuses_cents: int
    bonus_fee_cents: Decimal
    ratings: int

    @property
    def total_cents(self) -> Decimal:
        return self.rewards_cents + self.reward_fee_cents + self.bonuses_cents + self.bonus_fee_cents

    @property
    def per_rating_cents(self) -> Decimal | None:
        return (self.total_cents / self.ratings).quantize(Decimal("0.0001")) if self.ratings else None


@dataclass(frozen=True)
class SubmissionRow:
    submission: ProlificSubmission
    to_review: bool  # awaiting review and not approved by the rule: the researcher decides


@dataclass(frozen=True)
class ProlificPanel:
    link: ProlificStudy | None
    rows: list[SubmissionRow]
    transitions: list[ProlificTransition]
    bonuses: list[ProlificBonus]
    cost: HumanCost | None
    can_pause: bool
    can_resume: bool


def human_cost(*, study: Study) -> HumanCost | None:
    """None when the study was never published on Prolific."""
    link = ProlificStudy.objects.filter(study=study, published_at__isnull=False).first()
    if link is None:
        return None
    approved = link.submissions.filter(status=SUBMISSION_APPROVED)
    rewards = approved.count() * link.reward_cents
    paid = link.bonuses.filter(state=ProlificBonus.State.PAID)
    fee_rate = Decimal(str(settings.PROLIFIC_SERVICE_FEE))
    return HumanCost(
        rewards_cents=rewards,
        reward_fee_cents=(rewards * fee_rate).quantize(Decimal("0.01")),
        bonuses_cents=sum(b.paid_cents for b in paid),
        bonus_fee_cents=sum((b.fees_cents for b in paid), Decimal(0)),
        ratings=HumanRating.objects.filter(rater__in=approved.values("rater")).count(),
    )


def prolific_panel(*, study: Study) -> ProlificPanel:
    link = ProlificStudy.objects.filter(study=study).first()
    if link is None:
        return ProlificPanel(None, [], [], [], None, False, False)
    submissions = link.submissions.select_related("rater__assignment").order_by("id")
    rows = [SubmissionRow(s, s.status == SUBMISSION_AWAITING_REVIEW and not passes_rule(s.rater)) for s in submissions]
    published = link.published_at is not None
    return ProlificPanel(
        link=link,
        rows=rows,
        transitions=list(link.transitions.order_by("-at", "-id")[:100]),
        bonuses=list(link.bonuses.all()),
        cost=human_cost(study=study),
        can_pause=published and link.status == STUDY_ACTIVE,
        can_resume=published and link.status == STUDY_PAUSED,
    )


def submission_counts(*, study: Study) -> list[tuple[str, int]]:
    """The study's Prolific submissions by status as last followed, e.g. [("APPROVED", 3), ("AWAITING REVIEW", 1)]:
    the study page's line (the Prolific page lists them one by one). [] when none."""
    rows = (ProlificSubmission.objects.filter(link__study=study).values("status").annotate(n=Count("id"))
            .order_by("status"))
    return [(row["status"], row["n"]) for row in rows]
