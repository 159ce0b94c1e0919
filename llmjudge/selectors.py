"""Reading judge runs: progress, summaries, the runs a researcher may see."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, QuerySet, Sum
from django.shortcuts import get_object_or_404
from django.utils import timezone

from annotations.models import Study
from annotations.selectors import studies_for_researcher
from llmjudge.models import Judge, JudgeCall, JudgeRun, LLMRating
from llmjudge.runs.pricing import estimate_cost


class AmbiguousJudgeName(LookupError):
    """Several judges answer to a name (shared judges of different owners); the message says how to choose."""


def judge_named(*, judges: QuerySet[Judge], name: str, owner: User | None) -> Judge | None:
    """The judge called ``name`` among ``judges``: ``owner``'s own first (names are unique per owner), else the
    one judge of that name; None when there is none, AmbiguousJudgeName when several owners use the name."""
    matches = list(judges.filter(name=name).select_related("owner").order_by("pk")[:10])
    if owner is not None:
        own = [judge for judge in matches if judge.owner_id == owner.pk]
        if own:
            return own[0]
    if len(matches) > 1:
        owners = sorted({judge.owner.get_username() if judge.owner else "(no owner)" for judge in matches})
        raise AmbiguousJudgeName(f"several judges are named {name!r} (owners: {', '.join(owners)}): name the owner")
    return matches[0] if matches else None


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
    steps_total: int  # preparation calls known so far (persona characters, panel roles): JudgeCall rows
    steps_done: int  # ... no longer pending
    steps_failed: int  # ... ended in error
    calls: int  # HTTP calls made (ratings and preparation), retries and refusal re-asks included
    tokens_prompt: int
    tokens_completion: int
    cost_usd: float
    elapsed_seconds: float
    calls_per_second: float
    percent: float
    error: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# A judge server's own words in an error ("HTTP 400: <its body>"): its owner's server, its owner's business.
# Hidden to the end of the text: a body may hold line breaks (errors stored before they were joined).
_SERVER_WORDS = re.compile(r"(HTTP \d{3}): .*", re.DOTALL)


def server_words_hidden(text: str) -> str:
    """``text`` with what a judge's server answered ("HTTP 400: <its body>") reduced to the status."""
    return _SERVER_WORDS.sub(r"\1 (the server's message is shown to the judge's owner only)", text)


def history_words_hidden(history: object) -> str:
    """A rating's or call's history as JSON, each entry's text with the server's words hidden (entry by entry,
    so that one error does not hide the entries after it)."""
    entries = history if isinstance(history, list) else [history]
    shown = [
        {k: server_words_hidden(v) if isinstance(v, str) else v for k, v in e.items()} if isinstance(e, dict) else e
        for e in entries
    ]
    return json.dumps(shown, ensure_ascii=False)


def owns_judge(*, run: JudgeRun, user: User | AnonymousUser) -> bool:
    return run.judge.owner_id is not None and run.judge.owner_id == user.pk


def run_error_for(*, run: JudgeRun, user: User | AnonymousUser) -> str:
    """The run's error as ``user`` may read it: what the judge's server answered (an error body, cut to 200
    characters by the backend) only for the judge's owner; others read the status alone (issue 23, finding 9)."""
    return run.error if owns_judge(run=run, user=user) else server_words_hidden(run.error)


def run_progress(*, run: JudgeRun, viewer: User | AnonymousUser | None = None) -> RunProgress:
    """Counted from the ratings and preparation calls themselves, so progress never drifts from what is stored.

    Preparation calls count as they become known: a persona run's first proposals and a panel's role
    calls exist from the start, verifications appear once proposals are parsed (and further rounds
    when characters are lacking), so ``steps_total`` may grow while the run goes on.
    """
    by_status = dict(run.ratings.order_by().values("status").annotate(n=Count("id")).values_list("status", "n"))
    steps = dict(JudgeCall.objects.filter(run=run).order_by().values("status").annotate(n=Count("id"))
                 .values_list("status", "n"))
    aggregate = {"calls": Sum("attempts"), "tp": Sum("tokens_prompt"), "tc": Sum("tokens_completion")}
    sums = run.ratings.aggregate(**aggregate)
    step_sums = JudgeCall.objects.filter(run=run).aggregate(**aggregate)
    total = sum(by_status.values())
    pending = by_status.get(LLMRating.Status.PENDING, 0)
    steps_total = sum(steps.values())
    steps_done = steps_total - steps.get(JudgeCall.Status.PENDING, 0)
    tokens_p = (sums["tp"] or 0) + (step_sums["tp"] or 0)
    tokens_c = (sums["tc"] or 0) + (step_sums["tc"] or 0)
    params = run.params or {}
    elapsed = 0.0
    if run.started_at:
        end = run.finished_at or timezone.now()
        elapsed = max((end - run.started_at).total_seconds(), 0.0)
    calls = (sums["calls"] or 0) + (step_sums["calls"] or 0)
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
        steps_total=steps_total,
        steps_done=steps_done,
        steps_failed=steps.get(JudgeCall.Status.ERROR, 0),
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
        percent=round(100.0 * (total - pending + steps_done) / (total + steps_total), 1)
        if total + steps_total else 100.0,
        error=run.error if viewer is None else run_error_for(run=run, user=viewer),
    )


def runs_for_study(*, study: Study) -> QuerySet[JudgeRun]:
    return study.judge_runs.select_related("judge", "experiment").order_by("-created_at")


def runs_for_researcher(*, user: User | AnonymousUser, for_change: bool = False) -> QuerySet[JudgeRun]:
    """The judge runs a researcher may see (``for_change``: act on): those of the studies they may see
    (change), by the one study-access rule (annotations.selectors.studies_for_researcher)."""
    return JudgeRun.objects.filter(study__in=studies_for_researcher(user=user, for_change=for_change))


def run_for_researcher(*, user: User | AnonymousUser, run_id: int, for_change: bool = False) -> JudgeRun:
    """The run if the user may see (change) its study; Http404 otherwise, as for a run that does not exist."""
    runs = runs_for_researcher(user=user, for_change=for_change).select_related("study", "judge", "experiment")
    return get_object_or_404(runs, pk=run_id)


# What an unparseable rating stored before reasons were recorded (parser version < 5) is counted under.
NO_REASON_STORED = "no reason stored"
REVIEW_LIMIT = 50


@dataclass(frozen=True)
class RunReview:
    """What the run page shows for review: unparseable answers by reason, the first ``REVIEW_LIMIT`` of them (their
    item and question loaded), how many answers ran out of max_tokens in their trace, and the person-read ones."""

    by_reason: dict[str, int]  # reason -> unparseable ratings, most frequent first
    unparseable: int
    answered: int  # ratings with an answer or an error (not pending)
    cut_off_reasoning: int
    cut_off_reasoning_percent: float
    read_by_person: int
    to_review: list[LLMRating]
    max_tokens: int | None


def unparseable_by_reason(ratings: QuerySet[LLMRating]) -> dict[str, int]:
    """Unparseable ratings counted by the parser's reason (llmjudge.parsing.REASONS), most frequent first."""
    rows = (ratings.filter(status=LLMRating.Status.UNPARSEABLE).order_by().values("reason")
            .annotate(n=Count("id")).values_list("reason", "n"))
    counts = {(reason or NO_REASON_STORED): n for reason, n in rows}
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def run_review(*, run: JudgeRun) -> RunReview:
    # On use: the parser's package compiles its word lists at import (0.1 s), and django.setup() imports this
    # module through the admin (STYLE 15).
    from llmjudge.parsing.common import CUT_OFF_REASONING

    ratings = run.ratings.all()
    by_reason = unparseable_by_reason(ratings)
    answered = ratings.exclude(status=LLMRating.Status.PENDING).count()
    cut = by_reason.get(CUT_OFF_REASONING, 0)
    max_tokens = (run.params or {}).get("max_tokens")
    to_review = list(ratings.filter(status=LLMRating.Status.UNPARSEABLE).select_related("item", "question")
                     .order_by("item__position", "item_id", "question__order", "sample")[:REVIEW_LIMIT])
    return RunReview(
        by_reason=by_reason, unparseable=sum(by_reason.values()), answered=answered, cut_off_reasoning=cut,
        cut_off_reasoning_percent=round(100.0 * cut / answered, 1) if answered else 0.0,
        read_by_person=ratings.filter(read_at__isnull=False, status=LLMRating.Status.OK).count(),
        to_review=to_review, max_tokens=max_tokens if isinstance(max_tokens, int) else None,
    )
