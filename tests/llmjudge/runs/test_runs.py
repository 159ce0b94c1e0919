"""Judge runs end to end against the real local OpenAI-protocol server: every rating exactly once."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Item
from llmjudge.engine.runner import TurnResult
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.parsing import PARSER_VERSION
from llmjudge.runs import chunks, rating_sql
from llmjudge.runs import lifecycle as judging
from llmjudge.selectors import run_progress
from tests.llmjudge.factories import run_inline as _run
from tests.support.openai_server import REFUSAL_TEXT, Behaviour, expected_score

pytestmark = pytest.mark.django_db

FINAL = {"ok", "unparseable", "refused", "error"}


def _keys(run):
    return list(run.ratings.values_list("item_id", "question_id", "sample"))


def _add_items(study, n: int) -> None:
    for i in range(n):
        Item.objects.create(
            study=study, external_id=f"extra-{i}", group="gpt2", position=100 + i,
            fields={"story": f"Story number {i}. It has two sentences.", "prompt": f"Prompt {i}."},
        )


def test_a_completion_run_stores_one_parsed_rating_per_item_question_and_sample(story_with_items, server_judge,
                                                                               openai_server):
    run = _run(story_with_items, server_judge)

    assert run.status == JudgeRun.Status.DONE
    assert run.finished_at is not None
    ratings = list(run.ratings.select_related("question"))
    assert len(ratings) == 3 * 4 * 3 == run.calls_total == run.calls_done
    assert len(set(_keys(run))) == len(ratings)
    assert {r.sample for r in ratings} == {0, 1, 2}
    for rating in ratings:
        assert rating.status == "ok"
        assert rating.score == expected_score(rating.prompt)
        assert rating.raw == f"I would rate it {expected_score(rating.prompt)} out of 5. The sentences fit together."
        assert rating.prompt.endswith(rating.question.text)
        assert len(rating.prompt_hash) == 64
        assert rating.template_version.endswith(f"+parser{PARSER_VERSION}")
        assert rating.model == "test-model"
        assert rating.params == {"temperature": 1.0, "top_p": 0.9, "max_tokens": 256, "seed": None,
                                 "variant": "original", "mode": "completion"}
        assert rating.attempts == 1
        assert [h["status"] for h in rating.history] == ["ok"]
        assert rating.latency_ms is not None
        assert rating.tokens_prompt == len(rating.prompt.split())
        assert rating.tokens_completion == len(rating.raw.split())
    assert openai_server.stats.requests == 36
    body = openai_server.stats.bodies[0]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["model"]) == (1.0, 0.9, 256, "test-model")
    assert len(body["messages"]) == 1
    assert run.tokens_prompt == sum(r.tokens_prompt for r in ratings)


def test_chat_mode_asks_the_questions_in_order_in_one_conversation_per_item_and_sample(
    story_with_items, make_judge, openai_server
):
    judge = make_judge("chat", backend="openai-compatible", base_url=f"{openai_server.url}/v1", model="chat-model",
                       mode="chat", samples=2, concurrency=4)
    run = _run(story_with_items, judge)

    assert run.status == "done"
    assert openai_server.stats.requests == 3 * 2 * 4
    conversations = Counter(len(b["messages"]) for b in openai_server.stats.bodies)
    assert conversations == {1: 6, 3: 6, 5: 6, 7: 6}
    last = max(openai_server.stats.bodies, key=lambda b: len(b["messages"]))
    assert [m["role"] for m in last["messages"]] == ["user", "assistant"] * 3 + ["user"]
    assert last["messages"][-1]["content"].startswith("Now read the PROMPT")
    for rating in run.ratings.select_related("question"):
        messages = json.loads(rating.prompt) if rating.question.order > 0 else [{"role": "user", "content": rating.prompt}]
        # Each answer is stored in its own question's rating and is what the next turn saw.
        assert rating.score == expected_score(messages[-1]["content"])
        assert rating.status == "ok"
    relevance = run.ratings.get(question__key="relevance", item__external_id="s1", sample=0)
    cohesion = run.ratings.get(question__key="grammaticality", item__external_id="s1", sample=0)
    assert json.loads(relevance.prompt)[1] == {"role": "assistant", "content": cohesion.raw}


def test_samples_get_distinct_seeds_when_the_judge_has_a_seed(story_with_items, server_judge, openai_server):
    server_judge.seed = 100
    server_judge.save()
    run = _run(story_with_items, server_judge)
    assert sorted({b["seed"] for b in openai_server.stats.bodies}) == [100, 101, 102]
    assert {r.params["seed"] - r.sample for r in run.ratings.all()} == {100}


def test_refusals_are_re_asked_and_every_attempt_is_kept(story_with_items, server_judge, openai_server):
    openai_server.behaviour = Behaviour(rate_refusal=1.0)
    run = _run(story_with_items, server_judge)

    assert run.ratings.count() == 36
    for rating in run.ratings.all():
        assert rating.status == "refused"
        assert rating.score is None
        assert rating.attempts == 3  # the first answer and LLM_REFUSAL_RETRIES=2 re-asks
        assert [h["raw"] for h in rating.history] == [REFUSAL_TEXT] * 3
        assert rating.raw == REFUSAL_TEXT
    assert openai_server.stats.requests == 36 * 3


def test_a_refusal_followed_by_a_score_ends_ok_with_the_refusal_in_its_history(story_with_items, server_judge,
                                                                               openai_server):
    openai_server.behaviour = Behaviour(rate_refusal=0.5, seed=3)
    run = _run(story_with_items, server_judge)

    statuses = Counter(run.ratings.values_list("status", flat=True))
    assert set(statuses) <= {"ok", "refused"} and statuses["ok"] > 0
    recovered = [r for r in run.ratings.filter(status="ok") if r.attempts > 1]
    assert recovered, "with half the answers refusing, some ratings must recover on a re-ask"
    for rating in recovered:
        assert [h["status"] for h in rating.history] == ["refused"] * (rating.attempts - 1) + ["ok"]
        assert rating.score == expected_score(rating.prompt)
    assert sum(run.ratings.values_list("attempts", flat=True)) == openai_server.stats.requests


def test_refusal_retries_setting_zero_keeps_the_first_refusal(story_with_items, server_judge, openai_server, settings):
    settings.LLM_REFUSAL_RETRIES = 0
    openai_server.behaviour = Behaviour(rate_refusal=1.0)
    run = _run(story_with_items, server_judge)
    assert set(run.ratings.values_list("attempts", flat=True)) == {1}


def test_unparseable_answers_are_a_status_and_never_re_asked(story_with_items, server_judge, openai_server):
    openai_server.behaviour = Behaviour(answer=lambda prompt, body: "It is a story about a lighthouse.")
    run = _run(story_with_items, server_judge)
    assert set(run.ratings.values_list("status", "score", "attempts")) == {("unparseable", None, 1)}
    assert run_progress(run=run).unparseable == 36


def test_under_20_percent_429_and_500_and_5_percent_timeouts_every_key_ends_exactly_once(
    story_with_items, server_judge, openai_server
):
    _add_items(story_with_items, 7)  # 10 items x 4 questions x 3 samples = 120 ratings
    openai_server.behaviour = Behaviour(rate_429=0.1, rate_500=0.1, rate_timeout=0.05, timeout_seconds=2.0,
                                        retry_after=0.05, seed=11)
    run = _run(story_with_items, server_judge)

    keys = _keys(run)
    assert len(keys) == len(set(keys)) == 120
    statuses = Counter(run.ratings.values_list("status", flat=True))
    assert set(statuses) <= FINAL and statuses["pending"] == 0
    assert run.status == "done"
    for rating in run.ratings.all():
        if rating.status == "ok":
            assert rating.score == expected_score(rating.prompt)
        if rating.status == "error":
            assert rating.attempts == 6
        errors = [h for h in rating.history if "error" in h]
        assert len(rating.history) == rating.attempts
        assert all(h["transient"] for h in errors)
    # Every call the server received is one counted attempt: retries are ours and none is hidden.
    assert sum(run.ratings.values_list("attempts", flat=True)) == openai_server.stats.requests
    assert openai_server.stats.by_status[429] > 0 and openai_server.stats.by_status[500] > 0
    assert openai_server.stats.timeouts > 0


def test_garbage_200_answers_are_retried_until_a_real_answer(story_with_items, server_judge, openai_server, settings):
    # The three samples of a question send the same body, so they share the server's attempt
    # counter and which of them meets which draw depends on thread timing: with 6 attempts one of
    # 36 ratings met 6 garbage answers in a row now and then (0.4**6 each); 10 make that negligible.
    settings.LLM_MAX_ATTEMPTS = 10
    openai_server.behaviour = Behaviour(rate_garbage=0.4, seed=5)
    run = _run(story_with_items, server_judge)
    assert set(run.ratings.values_list("status", flat=True)) == {"ok"}
    errors = [h["error"] for r in run.ratings.all() for h in r.history if "error" in h]
    assert errors and all(e.startswith("invalid response body") for e in errors)


def test_transient_errors_end_in_error_after_the_attempt_limit(story_with_items, server_judge, openai_server, settings):
    settings.LLM_MAX_ATTEMPTS = 3
    openai_server.behaviour = Behaviour(rate_500=1.0)
    run = _run(story_with_items, server_judge)
    assert set(run.ratings.values_list("status", "attempts")) == {("error", 3)}
    assert run.status == "done" and run.calls_failed == 36
    assert run_progress(run=run).failed == 36


def test_a_fatal_error_fails_the_run_after_one_call_and_leaves_ratings_pending(story_with_items, make_judge,
                                                                               openai_server):
    judge = make_judge("wrong-url", backend="openai-compatible", base_url=f"{openai_server.url}/wrong", model="m",
                       concurrency=1)
    run = _run(story_with_items, judge)
    assert run.status == JudgeRun.Status.FAILED
    assert "HTTP 404" in run.error
    assert openai_server.stats.requests == 1
    assert set(run.ratings.values_list("status", flat=True)) == {"pending"}


def test_a_missing_api_key_fails_the_run_and_no_key_is_ever_stored(story_with_items, make_judge, openai_server,
                                                                   monkeypatch, settings):
    settings.JUDGE_KEY_VARIABLES = ["EVALHUB_JUDGE_KEY_TEST=user:owner"]  # the operator grants it to the owner
    judge = make_judge("keyed", backend="openai", base_url=f"{openai_server.url}/v1", model="gpt-4o-mini",
                       api_key_env="EVALHUB_JUDGE_KEY_TEST")
    monkeypatch.delenv("EVALHUB_JUDGE_KEY_TEST", raising=False)
    run = _run(story_with_items, judge)
    assert run.status == "failed" and "EVALHUB_JUDGE_KEY_TEST" in run.error
    assert openai_server.stats.requests == 0

    monkeypatch.setenv("EVALHUB_JUDGE_KEY_TEST", "sk-secret-never-stored")
    judging.judge_run_resume(run=run, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == "done"
    stored = json.dumps([run.params, run.error] + [
        [r.prompt, r.raw, r.history, r.params] for r in run.ratings.all()
    ])
    assert "sk-secret" not in stored


def test_the_same_chunk_delivered_twice_asks_nothing_the_second_time(story_with_items, server_judge, openai_server):
    run = judging.judge_run_start(study=story_with_items, judge=server_judge, enqueue=False)
    ids = list(run.ratings.values_list("id", flat=True))
    first = chunks.run_chunk(run_id=run.pk, rating_ids=ids)
    before = {r.pk: (r.raw, r.updated_at) for r in run.ratings.all()}
    run.status = JudgeRun.Status.RUNNING  # even if the run were still running
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    second = chunks.run_chunk(run_id=run.pk, rating_ids=ids)

    assert (first.asked, first.written) == (36, 36)
    assert (second.asked, second.written, second.calls) == (0, 0, 0)
    assert openai_server.stats.requests == 36
    assert run.ratings.count() == 36
    assert {r.pk: (r.raw, r.updated_at) for r in run.ratings.all()} == before


def test_a_late_answer_from_a_duplicate_delivery_does_not_overwrite_the_stored_one(story_with_items, make_judge):
    run = _run(story_with_items, make_judge())
    rating = run.ratings.first()
    late = TurnResult(rating_id=rating.pk, status="ok", score=1.0, rationale="late", raw="late answer", prompt="p",
                      history=[], attempts=1, model="m")
    assert rating_sql.write_results([late]) == 0
    rating.refresh_from_db()
    assert rating.raw != "late answer"


def test_starting_a_run_twice_on_the_same_rows_cannot_duplicate(story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    LLMRating.objects.bulk_create(
        [LLMRating(run=run, item=r.item, question=r.question, sample=r.sample) for r in run.ratings.all()],
        ignore_conflicts=True,
    )
    assert run.ratings.count() == 36


def test_pausing_mid_run_leaves_the_rest_pending_and_resuming_fills_only_that(story_with_items, make_judge,
                                                                              openai_server):
    openai_server.behaviour = Behaviour(latency=0.3)
    judge = make_judge("slow", backend="openai-compatible", base_url=f"{openai_server.url}/v1", model="m",
                       concurrency=2)
    run = judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run, on_progress=lambda: judging.judge_run_pause(run=run))
    run.refresh_from_db()

    assert run.status == "paused"
    statuses = Counter(run.ratings.values_list("status", flat=True))
    assert 0 < statuses["ok"] < 36 and statuses["ok"] + statuses["pending"] == 36
    paused_calls = openai_server.stats.requests

    openai_server.behaviour = Behaviour()
    assert judging.judge_run_resume(run=run, enqueue=False) == statuses["pending"]
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == "done"
    assert set(run.ratings.values_list("status", flat=True)) == {"ok"}
    assert openai_server.stats.requests == paused_calls + statuses["pending"]
    assert sum(run.ratings.values_list("attempts", flat=True)) == openai_server.stats.requests


def test_a_paused_run_ignores_its_queued_chunks(story_with_items, server_judge, openai_server):
    run = judging.judge_run_start(study=story_with_items, judge=server_judge, enqueue=False)
    assert judging.judge_run_pause(run=run)
    summary = chunks.run_chunk(run_id=run.pk, rating_ids=list(run.ratings.values_list("id", flat=True)))
    assert summary.asked == 0 and openai_server.stats.requests == 0


def test_a_cancelled_run_cannot_resume(story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    assert judging.judge_run_cancel(run=run)
    assert run.status == "cancelled" and run.finished_at is not None
    with pytest.raises(judging.RunError, match="cancelled"):
        judging.judge_run_resume(run=run)
    assert not judging.judge_run_pause(run=run)


def test_resume_with_retry_errors_asks_errors_again_and_keeps_their_history(story_with_items, server_judge,
                                                                            openai_server, settings):
    settings.LLM_MAX_ATTEMPTS = 1
    openai_server.behaviour = Behaviour(rate_500=1.0)
    run = _run(story_with_items, server_judge)
    assert run.calls_failed == 36

    openai_server.behaviour = Behaviour()
    assert judging.judge_run_resume(run=run, retry_errors=True, enqueue=False) == 36
    judging.judge_run_execute_inline(run=run)
    for rating in run.ratings.all():
        assert rating.status == "ok"
        assert rating.attempts == 2
        assert "HTTP 500" in rating.history[0]["error"] and rating.history[1]["status"] == "ok"


def test_starting_enqueues_chunks_on_the_llm_queue_after_commit_keeping_conversations_whole(
    story_with_items, make_judge, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from llmjudge import tasks

    sent = []
    monkeypatch.setattr(tasks.judge_chunk, "apply_async", lambda args, queue: sent.append((args, queue)))
    settings.LLM_CHUNK_SIZE = 5
    with django_capture_on_commit_callbacks(execute=True):
        run = judging.judge_run_start(study=story_with_items, judge=make_judge(mode="chat"))
        assert sent == []  # nothing leaves before the rows are committed
    assert {queue for _, queue in sent} == {"llm"}
    chunks = [ids for (run_id, ids), _ in sent]
    assert sorted(i for chunk in chunks for i in chunk) == sorted(run.ratings.values_list("id", flat=True))
    for chunk in chunks:
        groups = Counter(run.ratings.filter(pk__in=chunk).values_list("item_id", "sample"))
        assert set(groups.values()) == {4}, "a chat conversation must not be split across chunks"


def test_the_chunk_task_is_late_acked_and_requeued_when_its_worker_dies():
    from llmjudge.tasks import judge_chunk

    assert judge_chunk.acks_late is True
    assert judge_chunk.reject_on_worker_lost is True
    assert judge_chunk.ignore_result is True
    assert judge_chunk.app.amqp.router.route({}, judge_chunk.name)["queue"].name == "llm"


def test_a_judge_that_cannot_be_called_is_refused_at_start(story_with_items, make_judge):
    with pytest.raises(judging.RunError, match="imported"):
        judging.judge_run_start(study=story_with_items, judge=make_judge(backend="imported"), enqueue=False)
    # A rubric judge needs a rubric for every question: it is refused at start, naming the question.
    story_with_items.questions.filter(key="likability").update(key="enjoyment")
    with pytest.raises(judging.RunError, match="'enjoyment' has no rubric"):
        judging.judge_run_start(study=story_with_items, judge=make_judge("r", kind="rubric"), enqueue=False)


def test_an_experiment_launches_the_papers_grid_of_temperatures_and_variants(story_with_items, make_judge,
                                                                             django_capture_on_commit_callbacks):
    judges = [make_judge("a"), make_judge("b", mode="chat")]
    experiment = judging.experiment_launch(study=story_with_items, judges=judges)
    runs = list(experiment.runs.all())
    assert len(runs) == 2 * 4 * 3
    grid = {(r.judge.name, r.params["temperature"], r.params["variant"]) for r in runs}
    assert grid == {(j, t, v) for j in ("a", "b") for t in (1.0, 0.7, 0.3, 0.0)
                    for v in ("original", "persona", "explain")}
    run = next(r for r in runs if r.params["temperature"] == 0.0 and r.params["variant"] == "persona")
    judging.judge_run_execute_inline(run=run)
    rating = run.ratings.first()
    assert rating.params["temperature"] == 0.0 and rating.params["variant"] == "persona"
    assert rating.prompt.startswith("(You are a human worker hired to rate the story fragment.)\n")


def test_run_judge_wait_works_in_process_without_a_worker_and_prints_the_summary(story_with_items, make_judge,
                                                                                 capsys):
    make_judge("cli", options={"fake_refusal_rate": 0.2})
    call_command("run_judge", "story", "cli", "--wait")
    out = capsys.readouterr().out
    run = JudgeRun.objects.get()
    progress = run_progress(run=run)
    assert run.status == "done"
    assert "working in this process" in out
    # Answers, not ratings (docs/analysis.md, "Words": a pool's rating is one item × question, made of its samples'
    # answers).
    assert f"started run {run.pk}: {progress.total} answers to ask (item × question × sample)\n" in out
    assert (f"answers {progress.total} (item × question × sample): ok {progress.ok}  unparseable "
            f"{progress.unparseable}  refused {progress.refused}  errors 0  pending 0") in out
    # The fake judge refuses a fifth of its first asks: the re-asks make more calls than ratings, and say so.
    assert progress.calls > progress.total
    assert (f"calls {progress.calls}: requests sent to the judge's server, retries and re-asks after a refusal "
            "included\n") in out
    assert "preparation" not in out and "ratings" not in out
    # One duration per run, and the command's own named apart (review: "done in 3.3 s" beside "wall time 3.2 s").
    assert f"run {run.pk}: done in " in out and "wall time" not in out
    assert re.search(r"^this command took \d+\.\d s \(the run's own time is on its \"run N: \.\.\. in\" line\)$", out,
                     re.M)
    assert re.search(r"^run \d+: done in \d+\.\d s$", out, re.M)


def test_run_judge_refuses_unknown_names(story_with_items):
    with pytest.raises(CommandError, match="no judge 'nobody'"):
        call_command("run_judge", "story", "nobody")
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("run_judge", "nope", "nobody")


def test_create_judge_stores_the_settings_and_only_the_keys_variable_name(capsys, researcher, settings):
    settings.JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY=user:owner"]  # the operator grants the key to the owner
    call_command("create_judge", "gpt", "--backend", "openai", "--model", "gpt-3.5-turbo", "--samples", "3",
                 "--temperature", "0.7", "--top-p", "0.9", "--variant", "persona", "--mode", "chat",
                 "--concurrency", "16", "--rpm", "500", "--api-key-env", "OPENAI_API_KEY", "--owner", "owner")
    judge = Judge.objects.get(name="gpt")
    assert (judge.owner, judge.shared) == (researcher, False)
    assert (judge.backend, judge.model, judge.temperature, judge.variant, judge.mode, judge.concurrency, judge.rpm) == (
        "openai", "gpt-3.5-turbo", 0.7, "persona", "chat", 16, 500)
    assert judge.api_key_env == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "gemini"], "--backend 'gemini'"),
        (["--backend", "openai-compatible", "--model", "m"], "--base-url is required"),
        (["--temperature", "2.5"], "--temperature 2.5"),
        (["--top-p", "0"], "--top-p 0.0"),
        (["--samples", "0"], "--samples 0"),
        (["--variant", "pirate"], "--variant 'pirate'"),
        (["--mode", "batch"], "--mode 'batch'"),
        (["--rpm", "0"], "--rpm 0"),
        (["--api-key-env", "sk-abc-123"], "NAME of an environment variable"),
    ],
)
def test_create_judge_refuses_bad_values_with_a_clear_message(args, message, admin_user):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(".", r"\.")):
        call_command("create_judge", "bad", *args)
    assert not Judge.objects.exists()


def test_judge_run_command_pauses_resumes_and_cancels(story_with_items, make_judge, capsys,
                                                      django_capture_on_commit_callbacks, monkeypatch):
    from llmjudge import tasks

    monkeypatch.setattr(tasks.judge_chunk, "apply_async", lambda args, queue: None)
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    call_command("judge_run", str(run.pk), "pause")
    run.refresh_from_db()
    assert run.status == "paused"
    with django_capture_on_commit_callbacks(execute=True):
        call_command("judge_run", str(run.pk), "resume")
    run.refresh_from_db()
    assert run.status == "running"
    call_command("judge_run", str(run.pk), "cancel")
    run.refresh_from_db()
    assert run.status == "cancelled"
    with pytest.raises(CommandError, match="already ended"):
        call_command("judge_run", str(run.pk), "cancel")


def _result(rating_id: int, raw: str, **fields) -> TurnResult:
    values = {"status": "ok", "score": 4.0, "rationale": raw, "prompt": "prompt é", "history": [], "attempts": 1,
              "model": "m", "latency_ms": 12, "tokens_prompt": 30, "tokens_completion": 7, **fields}
    return TurnResult(rating_id=rating_id, raw=raw, **values)


def test_one_batch_write_stores_every_field_and_skips_rows_no_longer_pending(story_with_items, make_judge):
    import hashlib

    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    first, second, third = run.ratings.order_by("pk")[:3]
    assert rating_sql.write_results([_result(first.pk, "first answer")]) == 1
    history = [{"attempt": 1, "error": "HTTP 429: slow down — later", "transient": True}, {"attempt": 2, "raw": "4"}]
    batch = [
        _result(first.pk, "late duplicate"),  # already written: must not change
        _result(second.pk, "Rating: 4/5", history=history, attempts=2),
        _result(third.pk, "no idea", status="unparseable", score=None, latency_ms=None, tokens_prompt=None),
    ]
    assert rating_sql.write_results(batch) == 2

    first.refresh_from_db(), second.refresh_from_db(), third.refresh_from_db()
    assert first.raw == "first answer"
    assert (second.status, second.score, second.raw, second.rationale, second.history, second.attempts) == (
        "ok", 4.0, "Rating: 4/5", "Rating: 4/5", history, 2)
    assert (second.prompt, second.prompt_hash) == ("prompt é", hashlib.sha256("prompt é".encode()).hexdigest())
    assert (second.model, second.latency_ms, second.tokens_prompt, second.tokens_completion) == ("m", 12, 30, 7)
    assert second.updated_at > second.created_at
    assert (third.status, third.score, third.latency_ms, third.tokens_prompt) == ("unparseable", None, None, None)


def test_a_redelivered_chunk_after_a_partial_batch_write_gives_one_rating_per_key(story_with_items, server_judge,
                                                                                 openai_server):
    run = judging.judge_run_start(study=story_with_items, judge=server_judge, enqueue=False)
    ids = list(run.ratings.order_by("pk").values_list("pk", flat=True))
    # The first delivery wrote one batch of answers, then its worker was killed before the next.
    assert rating_sql.write_results([_result(pk, "first delivery") for pk in ids[:15]]) == 15

    summary = chunks.run_chunk(run_id=run.pk, rating_ids=ids)  # the broker delivers the chunk again

    run.refresh_from_db()
    assert (summary.asked, summary.written) == (21, 21)
    assert openai_server.stats.requests == 21  # only what the first delivery had not stored
    assert run.status == "done"
    assert len(_keys(run)) == len(set(_keys(run))) == 36
    assert set(run.ratings.filter(pk__in=ids[:15]).values_list("raw", flat=True)) == {"first delivery"}
    assert set(run.ratings.exclude(pk__in=ids[:15]).values_list("status", flat=True)) == {"ok"}


def test_pending_rows_are_created_with_every_field_as_the_orm_fills_a_new_rating(story_with_items, make_judge):
    judge = make_judge(seed=40)
    run = judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    rows = list(run.ratings.order_by("item_id", "question_id", "sample"))
    assert len(rows) == len({(r.item_id, r.question_id, r.sample) for r in rows}) == 36
    expected = LLMRating(run=run, template_version=rows[0].template_version, model=judge.model)
    for rating in rows:
        assert rating.params == {"temperature": 1.0, "top_p": 0.9, "max_tokens": judge.max_tokens,
                                 "seed": 40 + rating.sample, "variant": "original", "mode": judge.mode}
        assert (rating.status, rating.score, rating.raw, rating.prompt, rating.prompt_hash, rating.history,
                rating.attempts, rating.model, rating.target_rater_id, rating.latency_ms) == (
            expected.status, None, "", "", "", [], 0, judge.model, None, None)
        assert rating.template_version.endswith(f"parser{PARSER_VERSION}")
        assert rating.created_at is not None and rating.updated_at is not None


def test_a_batch_of_errors_only_stores_nulls_for_every_number(story_with_items, make_judge):
    run = judging.judge_run_start(study=story_with_items, judge=make_judge(), enqueue=False)
    ids = list(run.ratings.order_by("pk").values_list("pk", flat=True)[:3])
    batch = [_result(pk, "", status="error", score=None, latency_ms=None, tokens_prompt=None, tokens_completion=None,
                     history=[{"attempt": 1, "error": "timeout", "transient": True}]) for pk in ids]
    assert rating_sql.write_results(batch) == 3
    stored = set(run.ratings.filter(pk__in=ids).values_list("status", "score", "latency_ms", "tokens_prompt"))
    assert stored == {("error", None, None, None)}
