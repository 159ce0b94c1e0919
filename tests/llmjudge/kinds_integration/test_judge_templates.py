"""Issue 23, finding 2: every judge text that is a template gets the study template's check (plain {name}
only), and MAX_PROMPT_CHARS holds for the prompt each kind builds, in the preview and before anything is sent
or stored. The attack: a rubric judge's ``instruction`` option ``{prompt:>100000000}``; the preview answered
400 MB and a run stored two prompts of 100 million characters (against a cap of 2 million)."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import RequestFactory

from annotations.models import Item, Study
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.lifecycle import RunError
from llmjudge.services import JudgeSpecError, judge_create
from tests.llmjudge.factories import openai_judge, run_inline

pytestmark = pytest.mark.django_db

BOMB = "{prompt:>3000000}"  # 3 million characters: above the 2 million cap, light enough for a test machine


def test_a_rubric_option_with_a_format_spec_is_refused_by_the_service_and_the_admin(story_with_items, researcher,
                                                                                    client, django_user_model):
    with pytest.raises(JudgeSpecError, match=r"rubric judge option 'instruction': placeholder .* not a plain"):
        judge_create(name="bomb", owner=researcher, kind="rubric", options={"instruction": BOMB})
    staff = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    client.force_login(staff)
    response = client.post("/admin/llmjudge/judge/add/", {
        "name": "bomb", "kind": "rubric", "backend": "fake", "model": "m", "temperature": "1.0", "top_p": "0.9",
        "max_tokens": "256", "samples": "1", "variant": "original", "mode": "completion", "concurrency": "4",
        "options": '{"response": "{story!r}"}', "owner": str(staff.pk),
    })
    assert response.status_code == 200
    assert "rubric judge option &#x27;response&#x27;: placeholder" in response.content.decode()
    assert not Judge.objects.filter(name="bomb").exists()


def test_a_rubric_judge_saved_before_the_check_is_refused_in_the_preview_and_in_a_run(story_with_items, researcher,
                                                                                     client, openai_server):
    judge = openai_judge(openai_server, "bomb", "rubric", {"instruction": BOMB}, owner=researcher)
    client.force_login(researcher)
    preview = client.get(f"/llm/studies/{story_with_items.slug}/preview/", {"judge": judge.pk})
    assert preview.status_code == 200 and len(preview.content) < 200_000
    assert "rubric judge option &#x27;instruction&#x27;: placeholder &#x27;{prompt:&gt;3000000}&#x27; is not a plain" \
        in preview.content.decode()

    with pytest.raises(RunError, match=r"rubric judge option 'instruction': placeholder '\{prompt:>3000000\}'"):
        judging.judge_run_start(study=story_with_items, judge=judge, enqueue=False)
    # A run started before its options were written into the table: its chunk refuses, stores and sends nothing.
    Judge.objects.filter(pk=judge.pk).update(options={})
    run = judging.judge_run_start(study=story_with_items, judge=Judge.objects.get(pk=judge.pk), enqueue=False)
    JudgeRun.objects.filter(pk=run.pk).update(params={**run.params, "options": {"instruction": BOMB}})
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED
    assert "rubric judge option 'instruction': placeholder '{prompt:>3000000}' is not a plain {name}" in run.error
    assert set(run.ratings.values_list("status", "prompt")) == {("pending", "")}
    assert openai_server.stats.requests == 0


def test_the_prompt_a_kind_builds_is_capped_before_anything_is_sent_or_stored(story_with_items, researcher, client,
                                                                              openai_server, settings):
    # The study's own prompt (story and question) is within the cap; the rubric judge's, with Prometheus'
    # template and the rubric around the same story, is not.
    settings.MAX_PROMPT_CHARS = 5000
    Item.objects.create(study=story_with_items, external_id="long", group="human", position=9,
                        fields={"story": "w " * 2000, "prompt": "Write."})
    judge = openai_judge(openai_server, "prometheus", "rubric", {}, owner=researcher)
    client.force_login(researcher)
    item = Item.objects.get(external_id="long")
    preview = client.get(f"/llm/studies/{story_with_items.slug}/preview/", {"judge": judge.pk, "item": item.pk})
    assert "above MAX_PROMPT_CHARS=5000" in preview.content.decode()

    run = run_inline(story_with_items, judge)
    assert run.status == JudgeRun.Status.FAILED and "above MAX_PROMPT_CHARS=5000" in run.error
    assert not run.ratings.exclude(prompt="").filter(item=item).exists()
    assert max(len(p) for p in run.ratings.values_list("prompt", flat=True)) <= 5000
    assert all(len(str(b)) < 20000 for b in openai_server.stats.bodies)  # nothing above the cap was sent


def _bound_admin_form(model, obj, user, **changes):
    request = RequestFactory().get("/")
    request.user = user
    model_admin = admin.site._registry[model]
    form_class = model_admin.get_form(request, obj, change=True)
    unbound = form_class(instance=obj)
    data = {name: unbound[name].value() for name in unbound.fields}
    data = {k: ("" if v is None else v) for k, v in data.items()} | changes
    return form_class(data, instance=obj)


def test_the_admin_refuses_a_study_template_or_context_that_is_not_plain(story_study, django_user_model):
    staff = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    form = _bound_admin_form(Study, story_study, staff, llm_template="{story}\n{question:>20000000}")
    assert not form.is_valid() and "is not a plain {name}" in str(form.errors["llm_template"])
    question = story_study.questions.first()
    form = _bound_admin_form(type(question), question, staff, context="{story.__class__}")
    assert not form.is_valid() and "is not a plain {name}" in str(form.errors["context"])
