"""Issue 24: a reasoning model's trace is stored apart from its answer and never scored.

Runs on the local OpenAI-protocol server (tests/support/openai_server.py), which sends the trace in the message's
``reasoning_content`` or ``reasoning`` field, or inline in the content (``<think>…</think>``, a lone ``</think>``,
gpt-oss channels). Its default trace weighs a decoy score (``decoy_score``, never the answer's) and drops it: a
rating that read the trace would get the decoy.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from llmjudge.models import JudgeRun
from llmjudge.runs import lifecycle as judging
from tests.support.openai_answers import INLINE_STYLES, decoy_score, default_answer, default_reasoning
from tests.support.openai_server import Behaviour, expected_score

pytestmark = pytest.mark.django_db


def _run(study, judge) -> JudgeRun:
    run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    return run


@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning"])
def test_the_servers_reasoning_field_is_stored_beside_the_answer_and_never_scored(
    story_with_items, server_judge, openai_server, field_name
):
    openai_server.behaviour = Behaviour(reasoning_field=field_name)

    run = _run(story_with_items, server_judge)

    ratings = list(run.ratings.all())
    assert len(ratings) == 36
    for rating in ratings:
        assert rating.status == "ok"
        assert rating.score == expected_score(rating.prompt) != decoy_score(rating.prompt)
        assert rating.raw == default_answer(rating.prompt, {})
        assert rating.reasoning == default_reasoning(rating.prompt, {})
        assert "Score:" not in rating.raw and "Score:" not in rating.rationale


@pytest.mark.parametrize("style", INLINE_STYLES)
def test_an_inline_trace_is_split_off_stored_apart_and_never_scored(story_with_items, server_judge, openai_server,
                                                                     style):
    openai_server.behaviour = Behaviour(reasoning_inline=style)

    run = _run(story_with_items, server_judge)

    ratings = list(run.ratings.all())
    assert len(ratings) == 36
    for rating in ratings:
        assert rating.status == "ok"
        assert rating.score == expected_score(rating.prompt) != decoy_score(rating.prompt)
        assert rating.raw == default_answer(rating.prompt, {})
        assert rating.reasoning == default_reasoning(rating.prompt, {})
        # What the server sent, trace and all, stays in the attempt's history.
        assert rating.history[-1]["raw"].count(default_reasoning(rating.prompt, {})) == 1


def test_an_answer_without_a_trace_is_stored_as_it_came(story_with_items, server_judge, openai_server):
    run = _run(story_with_items, server_judge)

    assert {r.reasoning for r in run.ratings.all()} == {""}
    assert all(r.raw == default_answer(r.prompt, {}) for r in run.ratings.all())


@pytest.mark.parametrize("behaviour", [Behaviour(reasoning_field="reasoning_content"), Behaviour(reasoning_inline="think")],
                         ids=["reasoning_content", "inline"])
def test_max_tokens_spent_in_the_trace_is_cut_off_while_reasoning_and_the_run_page_says_so(
    story_with_items, make_judge, openai_server, owner_client, behaviour
):
    from llmjudge.models import Judge

    judge = make_judge("thinker", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{openai_server.url}/v1",
                       model="test-model", max_tokens=10, samples=1)
    openai_server.behaviour = behaviour

    run = _run(story_with_items, judge)

    ratings = list(run.ratings.all())
    assert len(ratings) == 12
    for rating in ratings:
        assert (rating.status, rating.score, rating.reason) == ("unparseable", None, "cut off while reasoning")
        assert rating.raw == ""
        assert rating.reasoning and default_reasoning(rating.prompt, {}).startswith(rating.reasoning)
    page = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk])).content.decode()
    assert 'id="cut-off-reasoning"' in page
    assert "12 answers (100.0 % of 12) were\n  cut off while reasoning" in page
    assert "max_tokens (10)" in page and "e.g. 40" in page
    assert "cut off while reasoning: <b>12</b>" in page
    # Every unparseable answer is listed with its trace folded.
    assert page.count('<details class="trace">') >= 12


def test_an_answer_the_server_cut_at_max_tokens_before_its_verdict_is_cut_off(story_with_items, make_judge,
                                                                              openai_server, owner_client):
    from llmjudge.models import Judge

    judge = make_judge("short", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{openai_server.url}/v1",
                       model="test-model", max_tokens=3, samples=1)
    openai_server.behaviour = Behaviour(rate_length=1.0)

    run = _run(story_with_items, judge)

    ratings = list(run.ratings.all())
    assert len(ratings) == 12
    for rating in ratings:
        assert rating.raw == "I would rate"
        assert (rating.status, rating.score, rating.reason, rating.reasoning) == ("unparseable", None, "cut off", "")
        assert rating.history[-1]["finish_reason"] == "length"
    page = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk])).content.decode()
    assert "cut off: <b>12</b>" in page and 'id="cut-off-reasoning"' not in page
