"""Issue 23, finding 4: every call has a deadline, pause and cancel close the calls in flight, answers are read
up to a byte cap. Against the real local OpenAI-protocol server, dripping its answers (httpx's read timeout
is per read, so a byte every half second keeps a call alive for ever without the whole-call deadline)."""
from __future__ import annotations

import asyncio
import time

import openai
import pytest

from llmjudge.backends.call_guard import GuardedBackend, guard_transports
from llmjudge.backends.protocol import BackendConfig, BackendRequest
from llmjudge.backends.registry import OpenAICompatibleBackend
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from tests.llmjudge.factories import run_inline
from tests.support.openai_server import Behaviour, huge_answer

pytestmark = pytest.mark.django_db


def _server_judge(make_judge, server, **fields):
    fields.setdefault("samples", 1)
    return make_judge("dripping", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{server.url}/v1", model="m",
                      seed=7, concurrency=12, **fields)


def _wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.timeout(120)
def test_a_dripping_server_cannot_hold_a_call_past_its_deadline(story_with_items, make_judge, openai_server,
                                                                settings):
    # A byte every 0.1 s: each read comes well within httpx's read timeout, and the whole answer takes ~35 s.
    settings.LLM_TIMEOUT = 2
    settings.LLM_MAX_ATTEMPTS = 1
    openai_server.behaviour = Behaviour(drip_interval=0.1, drip_bytes=1)
    started = time.monotonic()
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server))
    wall = time.monotonic() - started
    print(f"drip run: 12 calls dripping 1 byte per 0.1 s, LLM_TIMEOUT=2: {wall:.2f} s")

    assert run.status == JudgeRun.Status.DONE
    assert set(run.ratings.values_list("status", "rationale")) == {("error", "timeout")}
    assert wall < 4.5, f"the run took {wall:.1f} s for calls with a 2 s deadline"
    assert openai_server.stats.drips == 12
    assert _wait_for(lambda: openai_server.stats.in_flight == 0, 1.0)  # the server saw every call hang up


@pytest.mark.timeout(120)
def test_with_the_default_attempts_a_dripping_call_is_asked_again_once_only(story_with_items, make_judge,
                                                                            openai_server, settings):
    # Review of issue 23: a timeout was retried like any transient error, so a dripping server held each rating
    # for LLM_MAX_ATTEMPTS x LLM_TIMEOUT. A whole-call timeout is now asked again once (TIMEOUT_RETRIES).
    settings.LLM_TIMEOUT = 2
    settings.LLM_MAX_ATTEMPTS = 6
    settings.LLM_BACKOFF_BASE = 0.05
    openai_server.behaviour = Behaviour(drip_interval=0.1, drip_bytes=1)
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server))

    assert run.status == JudgeRun.Status.DONE
    assert set(run.ratings.values_list("status", "attempts")) == {("error", 2)}
    assert openai_server.stats.requests == 24  # 12 ratings, each asked twice, not six times


@pytest.mark.timeout(90)
@pytest.mark.parametrize("action", ["cancel", "pause"])
def test_pause_and_cancel_close_the_calls_in_flight_within_a_few_seconds(story_with_items, make_judge,
                                                                         openai_server, settings, action):
    # The attack: LLM_TIMEOUT=20 and a server dripping for ever; Cancel said "cancelled" but the chunk ran on.
    settings.LLM_TIMEOUT = 20
    openai_server.behaviour = Behaviour(drip_interval=0.2, drip_forever=True)
    run = judging.judge_run_start(study=story_with_items, judge=_server_judge(make_judge, openai_server),
                                  enqueue=False)
    stopped_at: list[float] = []

    def on_progress() -> None:  # called by the chunk's writer loop about every second
        if not stopped_at and openai_server.stats.drips >= 12:
            getattr(judging, f"judge_run_{action}")(run=run)
            stopped_at.append(time.monotonic())

    judging.judge_run_execute_inline(run=run, on_progress=on_progress)
    closed_after = time.monotonic() - stopped_at[0]
    print(f"{action}: the chunk ended {closed_after:.2f} s after it")

    assert closed_after < 5, f"the chunk ran on for {closed_after:.1f} s after {action}"
    assert _wait_for(lambda: openai_server.stats.in_flight == 0, 1.0)
    assert openai_server.stats.drip_hangups == 12
    run.refresh_from_db()
    assert run.status == ("cancelled" if action == "cancel" else "paused")
    assert set(run.ratings.values_list("status", flat=True)) == {"pending"}  # nothing half-written


@pytest.mark.parametrize(("size", "note"), [
    (300_000, "answer cut at 262144 bytes (LLM_ANSWER_MAX_BYTES): it was 300000 bytes"),
    (1_000_000, "answer cut at 262144 bytes: the response was longer than 327680 bytes"),
])
def test_an_answer_above_the_byte_cap_is_stored_cut_with_a_note(story_with_items, make_judge, openai_server,
                                                                settings, size, note):
    settings.LLM_TIMEOUT = 10
    openai_server.behaviour = Behaviour(answer=huge_answer(size))
    # The server stops an answer at max_tokens words, as a model does: a budget for a megabyte.
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server, max_tokens=500_000))

    assert run.status == JudgeRun.Status.DONE
    for rating in run.ratings.all():
        assert len(rating.raw.encode()) == 262144
        assert rating.history[-1]["note"] == note
        # The verdict is in the first sentence; a cut answer is parsed on its last 65,536 characters only, so
        # the parser finds no verdict there (its reason code, not a guess).
        assert (rating.status, rating.reason) == ("unparseable", "no verdict")
    assert openai_server.asked_twice() == []


def test_a_cancelled_call_has_its_socket_shut_down_at_once(openai_server):
    openai_server.behaviour = Behaviour(drip_interval=0.2, drip_forever=True)
    backend = OpenAICompatibleBackend(BackendConfig(backend="openai-compatible", model="m", timeout=60.0,
                                                    base_url=f"{openai_server.url}/v1", concurrency=1))
    request = BackendRequest(model="m", messages=[{"role": "user", "content": "Rate it."}], temperature=1,
                             top_p=1, max_tokens=5)

    async def main() -> float:
        call = asyncio.create_task(backend.complete(request))
        await asyncio.sleep(1.0)
        assert openai_server.stats.in_flight == 1
        call.cancel()
        cancelled = time.monotonic()
        await asyncio.gather(call, return_exceptions=True)
        while openai_server.stats.in_flight and time.monotonic() - cancelled < 5:
            await asyncio.sleep(0.02)
        await backend.aclose()
        return time.monotonic() - cancelled

    assert asyncio.run(main()) < 0.5
    assert openai_server.stats.drip_hangups == 1


def test_every_connection_pool_of_the_sdks_client_is_guarded():
    # The guard replaces a private attribute of httpx2's pool: this fails if a new httpx2 moves it.
    client = openai.DefaultHttpxClient()
    assert guard_transports(client) == 1
    assert isinstance(client._transport._pool._network_backend, GuardedBackend)
