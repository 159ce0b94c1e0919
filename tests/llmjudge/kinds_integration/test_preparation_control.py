"""Preparation steps (persona characters, panel roles) obey pause and cancel and count in progress.

Against the localhost OpenAI-compatible server with a little latency and one call at a time, so a
pause lands while the preparation calls are still being asked.
"""
from __future__ import annotations

import pytest
from django.db.models import Sum
from django.urls import reverse

from llmjudge.models import Judge, JudgeCall, LLMRating
from llmjudge.runs import chunks
from llmjudge.runs import lifecycle as judging
from llmjudge.selectors import run_progress
from tests.llmjudge.factories import openai_judge
from tests.llmjudge.kinds_integration.test_kinds_end_to_end import scripted_answer
from tests.support.extras import EMBEDDER, require_extra
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)


def _judge(server, kind: str, options: dict, latency: float) -> Judge:
    server.behaviour = Behaviour(answer=scripted_answer, latency=latency)
    return openai_judge(server, kind, kind, options, concurrency=1)


def _attempts(run) -> int:
    calls = JudgeCall.objects.filter(run=run).aggregate(n=Sum("attempts"))["n"] or 0
    ratings = LLMRating.objects.filter(run=run).aggregate(n=Sum("attempts"))["n"] or 0
    return calls + ratings


def test_a_persona_run_paused_while_proposing_characters_stops_and_its_resume_asks_only_the_rest(
    rated_study, openai_server, owner_client
):
    judge = _judge(openai_server, "persona", {"training_examples": 2, "held_out": 1}, latency=0.4)
    run = judging.judge_run_start(study=rated_study, judge=judge, enqueue=False)
    start = run_progress(run=run)
    # The first proposal round (2 raters x 4 questions) is known and counted from the start.
    assert (start.total, start.steps_total, start.steps_done, start.percent) == (24, 8, 0, 0.0)

    judging.judge_run_execute_inline(run=run, on_progress=lambda: judging.judge_run_pause(run=run))
    run.refresh_from_db()
    assert run.status == "paused"
    proposals = JudgeCall.objects.filter(run=run, step="propose")
    answered = proposals.exclude(status="pending").count()
    assert 0 < answered < 8 and proposals.filter(status="pending").count() == 8 - answered
    assert not JudgeCall.objects.filter(run=run, step="verify").exclude(status="pending").exists()
    assert set(run.ratings.values_list("status", flat=True)) == {"pending"}  # no rating asked, none failed
    assert openai_server.stats.requests == _attempts(run) == answered
    paused = run_progress(run=run)
    assert paused.steps_done == answered and paused.calls == answered
    assert paused.percent == round(100 * answered / (24 + paused.steps_total), 1) and 0 < paused.percent < 100
    shown = owner_client.get(reverse("llmjudge:run_progress", args=[run.pk])).json()
    assert (shown["steps_done"], shown["steps_total"]) == (answered, paused.steps_total)

    # A chunk delivered while paused asks nothing.
    chunks.run_chunk(run_id=run.pk, rating_ids=list(run.ratings.values_list("id", flat=True)))
    assert openai_server.stats.requests == answered

    openai_server.behaviour = Behaviour(answer=scripted_answer)
    assert judging.judge_run_resume(run=run, enqueue=False) == 24
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == "done" and set(run.ratings.values_list("status", flat=True)) == {"ok"}
    assert set(JudgeCall.objects.filter(run=run).values_list("attempts", flat=True)) == {1}  # none asked twice
    assert openai_server.stats.requests == _attempts(run)
    done = run_progress(run=run)
    assert (done.steps_total, done.steps_done, done.percent) == (8 + 8 * 5, 8 + 8 * 5, 100.0)
    assert done.calls == openai_server.stats.requests


def test_a_persona_run_cancelled_while_proposing_asks_no_more_and_fails_no_rating(
    rated_study, openai_server
):
    judge = _judge(openai_server, "persona", {"training_examples": 2, "held_out": 1}, latency=0.4)
    run = judging.judge_run_start(study=rated_study, judge=judge, enqueue=False)

    judging.judge_run_execute_inline(run=run, on_progress=lambda: judging.judge_run_cancel(run=run))
    run.refresh_from_db()
    assert run.status == "cancelled"
    asked = openai_server.stats.requests
    assert 0 < asked < 8 and asked == _attempts(run)
    # Too few characters because of the cancel is not "too few verified characters": rows stay pending.
    assert set(run.ratings.values_list("status", flat=True)) == {"pending"}
    chunks.run_chunk(run_id=run.pk, rating_ids=list(run.ratings.values_list("id", flat=True)))
    assert openai_server.stats.requests == asked


def test_a_panel_paused_while_generating_roles_resumes_with_the_missing_roles_only(
    rated_study, openai_server, settings
):
    require_extra(EMBEDDER, why="the role-player panel's role de-duplication")
    # One slow roles call at a time: the pause (first status poll, after 1 s) lands during the first.
    settings.LLM_TIMEOUT = 10
    judge = _judge(openai_server, "roleplay", {}, latency=2.0)
    run = judging.judge_run_start(study=rated_study, judge=judge, enqueue=False)
    assert (run_progress(run=run).steps_total, run_progress(run=run).total) == (3, 12)  # a roles call per item

    judging.judge_run_execute_inline(run=run, on_progress=lambda: judging.judge_run_pause(run=run))
    roles = JudgeCall.objects.filter(run=run, step="roles")
    answered = roles.exclude(status="pending").count()
    assert 0 < answered < 3 and set(run.ratings.values_list("status", flat=True)) == {"pending"}
    assert openai_server.stats.requests == answered

    openai_server.behaviour = Behaviour(answer=scripted_answer)
    judging.judge_run_resume(run=run, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == "done" and set(roles.values_list("attempts", flat=True)) == {1}
    assert openai_server.stats.requests == _attempts(run) == 3 + 12
    assert run_progress(run=run).percent == 100.0
