"""The local transformers worker: a judge run with a tiny model built by the test stores real ratings."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from annotations.models import Item
from llmjudge.models import Judge, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.support.extras import require_extra


@pytest.fixture
def judged_study(story_study):
    for n, group in enumerate(["human", "gpt2"]):
        Item.objects.create(study=story_study, external_id=f"s{n}", group=group, position=n,
                            fields={"story": "The keeper climbs the steps .", "prompt": "Write about a lighthouse ."})
    return story_study


def test_a_run_on_the_local_model_stores_one_rating_per_key_with_the_generated_text(judged_study, tiny_model_path):
    judge = Judge.objects.create(name="tiny", backend="transformers", model=tiny_model_path, samples=2,
                                 max_tokens=6, seed=1, concurrency=8, options={"batch_size": 8})
    run = judging.judge_run_start(study=judged_study, judge=judge, enqueue=False)
    summary = judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    ratings = list(LLMRating.objects.filter(run=run))
    assert run.status == "done"
    assert len(ratings) == 2 * 4 * 2
    assert len({(r.item_id, r.question_id, r.sample) for r in ratings}) == 16
    assert {r.status for r in ratings} <= {"ok", "unparseable", "refused"}
    assert all(r.raw.strip() and r.attempts >= 1 and r.tokens_completion and r.model == tiny_model_path
               for r in ratings)
    assert all(r.prompt.startswith("Please rate the story fragment") for r in ratings)
    assert summary is not None


def test_local_model_runs_go_to_the_gpu_queue_and_api_runs_to_the_llm_queue(judged_study, tiny_model_path):
    local = Judge.objects.create(name="tiny", backend="transformers", model=tiny_model_path)
    remote = Judge.objects.create(name="api", backend="fake", model="fake")
    assert judging.run_queue(judging.judge_run_start(study=judged_study, judge=local, enqueue=False)) == "gpu"
    assert judging.run_queue(judging.judge_run_start(study=judged_study, judge=remote, enqueue=False)) == "llm"


def test_a_missing_model_path_fails_the_run_with_a_clear_error(judged_study, tmp_path):
    require_extra(("torch",), why="the local transformers backend")
    judge = Judge.objects.create(name="ghost", backend="transformers", model=str(tmp_path / "no-model"))
    run = judging.judge_run_start(study=judged_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == "failed"
    assert "cannot load model" in run.error


@pytest.mark.django_db
def test_create_judge_if_missing_leaves_an_existing_preset_alone(admin_user):
    call_command("create_judge", "vllm-evaluator", "--backend", "openai-compatible", "--base-url",
                 "http://vllm:8000/v1", "--model", "prometheus", "--if-missing")
    call_command("create_judge", "vllm-evaluator", "--backend", "openai-compatible", "--base-url",
                 "http://other:8000/v1", "--model", "other", "--if-missing")
    judge = Judge.objects.get(name="vllm-evaluator")
    assert (judge.base_url, judge.model) == ("http://vllm:8000/v1", "prometheus")
