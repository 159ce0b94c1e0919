"""Issue 23, findings 3 and 5: what a hostile judge server answers cannot sink a batch, leave a run running
for ever, make a resume pay twice, or starve the event loop. Each test repeats the attack's reproduction
against the real local OpenAI-protocol server (tests/support/openai_server.py)."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from annotations.models import Item
from annotations.studies import study_create
from llmjudge.backends.protocol import TOKENS_MAX, BackendAnswer, BackendRequest
from llmjudge.engine.conversation import Conversation, Turn
from llmjudge.engine.limits import LocalLimiter
from llmjudge.engine.runner import CallSettings, EngineSettings, TurnResult, run_conversations, storable
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.parsing import ParsedScore
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.execution import write_batch
from llmjudge.runs.rating_sql import write_results
from llmjudge.runs.reparse import study_reparse
from tests.annotations.test_categorical import SPEC
from tests.llmjudge.factories import run_inline
from tests.support.openai_server import MISSING, Behaviour, RawNumber, expected_score

pytestmark = pytest.mark.django_db


def _server_judge(make_judge, server, **fields):
    # A seed per judge: sample k sends seed + k, so the server can tell every rating's question apart.
    return make_judge("hostile", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{server.url}/v1", model="m",
                      seed=7, **fields)


@pytest.mark.parametrize("kind", ["nul", "surrogate"])
def test_one_bad_answer_in_six_loses_nothing_and_a_resume_asks_nothing_again(story_with_items, make_judge,
                                                                            openai_server, kind):
    # The attack: one NUL answer in six made the batch's write fail: 12 calls, 0 ratings, and resume paid again.
    openai_server.behaviour = Behaviour(rate_hostile=1 / 6, hostile_kind=kind)
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server))

    assert run.status == JudgeRun.Status.DONE
    ratings = list(run.ratings.all())
    assert len(ratings) == 36 and {r.status for r in ratings} == {"ok"}
    hostile = [r for r in ratings if "note" in r.history[-1]]
    assert 0 < openai_server.stats.hostile == len(hostile) < 36
    for rating in hostile:
        assert "\x00" not in rating.raw and "\ud800" not in rating.raw
        assert rating.score == expected_score(rating.prompt)
        note = rating.history[-1]["note"]
        assert note == ("removed 1 NUL character(s)" if kind == "nul" else
                        "replaced 1 lone surrogate with U+FFFD")
        assert ("\ufffd" in rating.raw) == (kind == "surrogate")
    assert openai_server.stats.requests == 36 and openai_server.asked_twice() == []
    assert judging.judge_run_resume(run=run, enqueue=False) == 0
    assert openai_server.stats.requests == 36


@pytest.mark.parametrize(("value", "stored"), [
    (10**20, TOKENS_MAX), (1e308, TOKENS_MAX), ("abc", 0), (-5, 0),
    # Beyond int()'s 4,300 digits (issue 23 review: the answer was lost and asked six times): kept, clamped.
    (RawNumber("9" * 5000), TOKENS_MAX), (RawNumber("-" + "9" * 5000), 0),
    (None, 0), (MISSING, 0),  # not reported: an answered rating adds nothing, as before
])
def test_hostile_token_counts_are_converted_and_clamped(story_with_items, make_judge, openai_server, value, stored):
    openai_server.behaviour = Behaviour(usage_fields={"prompt_tokens": value, "completion_tokens": value})
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server, samples=1))

    assert run.status == JudgeRun.Status.DONE
    assert set(run.ratings.values_list("status", "tokens_prompt", "tokens_completion")) == {("ok", stored, stored)}
    assert run.tokens_prompt == 12 * (stored or 0)  # the run's counters add 32-bit values in a 64-bit column
    assert openai_server.stats.requests == 12  # every answer kept at its first call


def test_a_5000_digit_label_makes_that_answer_unparseable_not_the_chunk_lost(researcher, make_judge, openai_server,
                                                                             caplog):
    study = study_create(slug="sentiment", spec=SPEC, owner=researcher)
    for n, text in enumerate(["The pasta was wonderful.", "Cold soup, rude waiter.", "Only drinks."]):
        Item.objects.create(study=study, external_id=f"r{n}", group="reviews", position=n, fields={"review": text})

    def answer(prompt: str, request: dict) -> str:
        return "Answer: " + "9" * 5000 if "Cold soup" in prompt else "Answer: Positive"

    openai_server.behaviour = Behaviour(answer=answer)
    run = run_inline(study, _server_judge(make_judge, openai_server))

    assert run.status == JudgeRun.Status.DONE
    rows = {(r.item.external_id, r.status, r.reason, r.score) for r in run.ratings.select_related("item")}
    assert rows == {("r0", "ok", "", 1.0), ("r1", "unparseable", "parser error", None), ("r2", "ok", "", 1.0)}
    bad = run.ratings.filter(item__external_id="r1").first()
    assert bad.raw.startswith("Answer: 999") and bad.history[-1]["reason"] == "parser error"
    assert f"run {run.pk} rating {bad.pk}: the parser raised" in caplog.text
    assert openai_server.asked_twice() == []
    # reparse reads stored answers through the same guard: it reports, it does not crash on the bad one.
    LLMRating.objects.filter(pk=bad.pk).update(status="ok", score=1.0, reason="")
    report = study_reparse(study=study)
    bad.refresh_from_db()
    assert (report.n_read, report.n_changed, bad.status, bad.reason) == (9, 1, "unparseable", "parser error")


def _result(rating: LLMRating, raw: str) -> TurnResult:
    return TurnResult(rating_id=rating.pk, status="ok", score=3.0, rationale=raw, raw=raw, prompt="p",
                      history=[{"attempt": 1, "raw": raw}], attempts=1, model="m")


def test_a_batch_the_database_refuses_is_written_row_by_row(story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    rows = list(run.ratings.order_by("id")[:5])
    # A value no driver can send (an answer that bypassed the engine's cleaning): the whole statement fails.
    results = [_result(r, "fine") for r in rows[:4]] + [_result(rows[4], "bad \ud800 answer")]
    with pytest.raises(UnicodeEncodeError):
        write_results(results)

    assert write_batch(write_results, results, run_id=run.pk) == 5
    stored = {r.pk: (r.status, r.score, r.reason) for r in LLMRating.objects.filter(pk__in=[r.pk for r in rows])}
    assert [stored[r.pk] for r in rows[:4]] == [("ok", 3.0, "")] * 4
    assert stored[rows[4].pk] == ("error", None, "storage error")
    assert LLMRating.objects.get(pk=rows[4].pk).rationale == "could not store the answer: UnicodeEncodeError"


def test_an_unexpected_error_in_a_chunk_fails_the_run_visibly(story_with_items, make_judge, monkeypatch,
                                                              owner_client):
    from llmjudge.kinds.plain.builder import PlainBuilder

    def broken(self, **kwargs):
        raise RuntimeError("a bug nobody foresaw")

    monkeypatch.setattr(PlainBuilder, "conversations", broken)
    run = run_inline(story_with_items, make_judge())

    assert run.status == JudgeRun.Status.FAILED and run.finished_at is not None
    assert run.error == "a chunk failed: RuntimeError: a bug nobody foresaw"
    assert "a chunk failed: RuntimeError: a bug nobody foresaw" in owner_client.get(f"/llm/runs/{run.pk}/").content.decode()
    assert set(run.ratings.values_list("status", flat=True)) == {"pending"}  # a resume asks them


def test_storable_text_is_what_postgresql_takes_and_says_what_changed():
    assert storable("plain") == ("plain", "")
    assert storable("a\x00b\x00") == ("ab", "removed 2 NUL character(s)")
    assert storable("x\ud800y\udfff") == ("x\ufffdy\ufffd", "replaced 2 lone surrogates with U+FFFD")
    assert storable("\U0001f600") == ("\U0001f600", "")  # a real astral character is no surrogate pair in a str


# --- finding 5: parsing off the event loop ---------------------------------------------------------------


class _LongAnswers:
    """A backend answering at once with a long text (the parse, not the network, is what takes time)."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, request: BackendRequest) -> BackendAnswer:
        return BackendAnswer(text=self.text, model="m", latency_ms=0)

    async def aclose(self) -> None:
        return None


def test_a_slow_parse_runs_off_the_event_loop_so_the_loop_never_stalls():
    # The attack: a 1 MB answer took 4.2 s to parse on the engine's loop; the Redis limiter's lease ran out.
    def slow_parse(text: str) -> ParsedScore:
        time.sleep(0.4)  # a parse as slow as a megabyte's, holding its thread (not the loop)
        return ParsedScore(3.0, "ok", "")

    turns = [Turn(rating_id=n, prompt="p", user_text="p", parse=slow_parse, scale=(1, 5)) for n in range(6)]
    conversations = [Conversation(turns=[t], chat=False, sample=0, seed=None) for t in turns]
    emitted: list[TurnResult] = []
    lags: list[float] = []

    async def main() -> None:
        async def probe() -> None:
            while True:
                started = time.monotonic()
                await asyncio.sleep(0.01)
                lags.append(time.monotonic() - started - 0.01)

        ticker = asyncio.create_task(probe())
        await run_conversations(
            conversations, make_backend=lambda: _LongAnswers("x" * 10_000), make_limiter=lambda: LocalLimiter(
                concurrency=6, rpm=None), call=CallSettings(model="m", temperature=1, top_p=1, max_tokens=5),
            settings=EngineSettings(), concurrency=6, emit=emitted.append, stop=threading.Event())
        ticker.cancel()

    asyncio.run(main())
    assert len(emitted) == 6 and {r.status for r in emitted} == {"ok"}
    assert max(lags) < 0.2, f"the loop stalled for {max(lags):.2f} s"


def test_a_server_that_drips_and_answers_with_everything_hostile_drives_a_run_to_done(story_with_items, make_judge,
                                                                                      openai_server, settings):
    # Issue 23's "done when": drips, NUL, lone surrogates, 1 MB and adversarial answers, usage of 10^20 and "abc".
    settings.LLM_TIMEOUT = 10
    openai_server.behaviour = Behaviour(
        rate_hostile=0.5, hostile_kind="any", answer_bytes=1_000_000,
        usage_fields={"prompt_tokens": 10**20, "completion_tokens": "abc"},
        drip_interval=0.01, drip_bytes=8192, rate_drip=0.3,  # a third drip, each within the deadline
    )
    started = time.monotonic()
    run = run_inline(story_with_items, _server_judge(make_judge, openai_server, max_tokens=500_000, concurrency=12))
    print(f"hostile run: 36 ratings, {openai_server.stats.hostile} hostile answers, {openai_server.stats.drips} "
          f"drips: {time.monotonic() - started:.1f} s")

    assert run.status == JudgeRun.Status.DONE
    ratings = list(run.ratings.all())
    assert {r.status for r in ratings} <= {"ok", "unparseable"} and len(ratings) == 36  # every answer stored
    assert openai_server.stats.hostile > 5 and openai_server.stats.drips > 5
    for rating in ratings:
        # A body cut at the cap loses its usage (it comes after the answer): nothing is counted for it.
        cut = "the response was longer" in rating.history[-1].get("note", "")
        assert (rating.tokens_prompt, rating.tokens_completion) == ((0, 0) if cut else (TOKENS_MAX, 0))
        assert "\x00" not in rating.raw and len(rating.raw.encode()) <= 262144
        if rating.status == "ok":
            assert rating.score == expected_score(rating.prompt)
    assert openai_server.stats.requests == 36 and openai_server.asked_twice() == []
    assert judging.judge_run_resume(run=run, enqueue=False) == 0
