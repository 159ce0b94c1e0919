"""What a rating costs, human beside judge, for a study published on Prolific (the result's ``cost``).

The human side is annotations' reading of the Prolific ledger (annotations/prolific/selectors.py: rewards of
approved submissions, Prolific's fee on them, bonuses paid and their fees, over the approved participants'
ratings). The judge side is each run's estimated cost (its token counts at the model's price) over its
answered ratings. The two are in different currencies when the Prolific account is not in dollars: the keys
say which.
"""
from __future__ import annotations

from django.db.models import Count, Max, Q

from annotations.models import ProlificStudy, Study
from evalhub.analysis.result import CostSummary, JudgeCost
from llmjudge.models import JudgeRun, LLMRating


def cost_summary(*, study: Study, runs: dict[int, str]) -> CostSummary | None:
    """None unless the study was published on Prolific. ``runs``: run id -> pool name, the judges to set beside."""
    if not ProlificStudy.objects.filter(study=study, published_at__isnull=False).exists():
        return None
    # On use: the Prolific package (its HTTP client, records and webhooks) costs `manage.py analyze` about 30 ms
    # to import, for the few studies published there (STYLE 15).
    from annotations.prolific.selectors import human_cost

    human = human_cost(study=study)
    if human is None:
        return None
    run_ids = list(runs)
    answered = dict(
        JudgeRun.objects.filter(pk__in=run_ids)
        .annotate(answered=Count("ratings", filter=~Q(ratings__status=LLMRating.Status.PENDING)))
        .values_list("pk", "answered")
    )
    spent = dict(JudgeRun.objects.filter(pk__in=run_ids).values_list("pk", "cost_usd"))
    judges = []
    for run_id, name in runs.items():
        cost, ratings = float(spent.get(run_id, 0)), answered.get(run_id, 0)
        judges.append(JudgeCost(pool=name, cost_usd=cost, ratings=ratings,
                                per_rating_usd=cost / ratings if ratings else None))
    per_rating = human.per_rating_cents
    return CostSummary(
        human_rewards_cents=human.rewards_cents,
        human_reward_fee_cents=float(human.reward_fee_cents),
        human_bonuses_cents=human.bonuses_cents,
        human_bonus_fee_cents=float(human.bonus_fee_cents),
        human_total_cents=float(human.total_cents),
        human_ratings=human.ratings,
        human_per_rating_cents=float(per_rating) if per_rating is not None else None,
        judges=tuple(judges),
    )


def cost_fingerprint(*, study: Study) -> tuple[object, ...] | None:
    """What changes the cost without changing a rating (a submission approved, a bonus paid): for the cache key.
    One query; None for a study never published on Prolific."""
    return (
        ProlificStudy.objects.filter(study=study)
        .annotate(n=Count("submissions", distinct=True), at=Max("submissions__updated_at"),
                  n_bonuses=Count("bonuses", distinct=True), paid_at=Max("bonuses__updated_at"))
        .values_list("status", "n", "at", "n_bonuses", "paid_at")
        .first()
    )
