"""Reading judge runs: progress, summaries, the runs a researcher may see."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.utils import timezone

from annotations.models import Study
from llmjudge.models import JudgeRun, LLMRating
from llmjudge.pricing import estimate_cost


@dataclass(frozen=True)
class RunProgress:
    run_id: int
    status: str
    total: int
    done: int  # no longer pending: ok + unparseable + refused + error
    pending: int
    ok: int
    unparseable: int
    refused: int
    failed: int  # ended in error after its retries
    calls: int  # HTTP calls made, retries and refusal re-asks included
    tokens_prompt: int
    tokens_completion: int
    cost_usd: float
    elapsed_seconds: float
    calls_per_second: float
    percent: float
    error: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_progress(*, run: JudgeRun) -> RunProgress:
    """Counted from the ratings themselves, so progress can never drift from what is stored."""
    by_status = dict(run.ratings.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    sums = run.ratings.aggregate(calls=Sum("attempts"), tp=Sum("tokens_prompt"), tc=Sum("tokens_completion"))
    total = sum(by_status.values())
    pending = by_status.get(LLMRating.Status.PENDING, 0)
    tokens_p, tokens_c = sums["tp"] or 0, sums["tc"] or 0
    params = run.params or {}
    elapsed = 0.0
    if run.started_at:
        end = run.finished_at or timezone.now()
        elapsed = max((end - run.started_at).total_seconds(), 0.0)
    calls = sums["calls"] or 0
    return RunProgress(
        run_id=run.pk,
        status=run.status,
        total=total,
        done=total - pending,
        pending=pending,
        ok=by_status.get(LLMRating.Status.OK, 0),
        unparseable=by_status.get(LLMRating.Status.UNPARSEABLE, 0),
        refused=by_status.get(LLMRating.Status.REFUSED, 0),
        failed=by_status.get(LLMRating.Status.ERROR, 0),
        calls=calls,
        tokens_prompt=tokens_p,
        tokens_completion=tokens_c,
        cost_usd=float(
            estimate_cost(
                model=str(params.get("model", "")),
                options=params.get("options") or {},
                tokens_prompt=tokens_p,
                tokens_completion=tokens_c,
            )
        ),
        elapsed_seconds=round(elapsed, 2),
        calls_per_second=round(calls / elapsed, 2) if elapsed > 0 else 0.0,
        percent=round(100.0 * (total - pending) / total, 1) if total else 100.0,
        error=run.error,
    )


def runs_for_study(*, study: Study) -> QuerySet[JudgeRun]:
    return study.judge_runs.select_related("judge", "experiment").order_by("-created_at")
