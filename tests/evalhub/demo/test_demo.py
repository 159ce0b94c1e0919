"""The demo (evalhub.demo.loader, `load_demo`): studies with simulated raters, answered by the offline judge."""
from __future__ import annotations

import pytest

from annotations.models import HumanRating, Study


def test_the_demo_has_a_pairwise_study_with_simulated_choices(db):
    from evalhub.demo.loader import demo_load

    demo_load()
    study = Study.objects.get(slug="demo-pairwise")
    assert study.is_pairwise and study.items.count() == 3
    assert {i.group for i in study.items.all()} == {"human-first", "human-second"}
    scores = list(HumanRating.objects.filter(item__study=study).values_list("score", flat=True))
    assert len(scores) == 3 * 3 and set(scores) <= {1.0, 2.0}


def test_the_demos_offline_judge_answers_the_pairwise_demo_with_choices(db):
    from evalhub.demo.loader import demo_judge_load, demo_load
    from llmjudge.runs.lifecycle import judge_run_execute_inline, judge_run_start

    study = next(s for s in demo_load() if s.slug == "demo-pairwise")
    judge = demo_judge_load(owner=study.owner)
    judge.options = {}  # no latency, no refusals: every answer is a choice in one of the fake's formats
    judge.save()
    run = judge_run_start(study=study, judge=judge, enqueue=False)
    judge_run_execute_inline(run=run)

    rows = list(run.ratings.values_list("status", "score", "raw"))
    assert len(rows) == 3 * 3 and {status for status, _, _ in rows} == {"ok"}
    assert {score for _, score, _ in rows} <= {1.0, 2.0}
    assert all(("A" in raw) == (score == 1.0) for _, score, raw in rows)


@pytest.mark.django_db
def test_load_demo_refuses_the_demo_superuser_when_debug_is_off_unless_asked(settings):
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command


    settings.DEBUG = False
    with pytest.raises(CommandError, match="will not create the superuser demo/demo"):
        call_command("load_demo")
    assert not get_user_model().objects.filter(username="demo").exists() and not Study.objects.exists()
    call_command("load_demo", "--demo-superuser")
    assert get_user_model().objects.get(username="demo").is_superuser
