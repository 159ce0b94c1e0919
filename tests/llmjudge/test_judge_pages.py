"""The judge pages in the web UI: a judge created from a form (the key's variable *name* only), the
run form's judge menu preselected when there is one judge, and its errors next to the field."""
from __future__ import annotations

import pytest
from django.urls import reverse

from llmjudge.models import Judge, JudgeRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(client, researcher):
    client.force_login(researcher)
    return client


def _field(html: str, name: str) -> str:
    block = html[html.index(f'id="field-{name}"'):]
    return block[:block.index("</div>")]


def test_a_judge_created_from_the_form_is_the_researchers_and_stores_only_the_variable_name(
    owner_client, researcher, story_study, settings
):
    settings.JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY=user:owner"]  # the operator grants the key to this researcher
    response = owner_client.post(reverse("llmjudge:judge_new", args=["story"]), {
        "name": "gpt", "kind": "plain", "backend": "openai", "model": "gpt-4o-mini", "api_key_env": "OPENAI_API_KEY",
    })
    assert response["Location"] == reverse("llmjudge:study_runs", args=["story"])
    judge = Judge.objects.get(name="gpt")
    assert (judge.owner, judge.backend, judge.model, judge.api_key_env) == (
        researcher, "openai", "gpt-4o-mini", "OPENAI_API_KEY")


def test_the_fake_backend_needs_no_model_and_is_the_default(owner_client, story_study):
    page = owner_client.get(reverse("llmjudge:judge_new", args=["story"])).content.decode()
    assert '<option value="fake" selected>' in page
    owner_client.post(reverse("llmjudge:judge_new", args=["story"]), {"name": "demo", "kind": "plain",
                                                                      "backend": "fake"})
    assert Judge.objects.get(name="demo").model == "fake-model"


def test_the_new_judge_page_says_the_roleplay_kind_needs_the_gpu_extra(owner_client, story_study):
    page = owner_client.get(reverse("llmjudge:judge_new", args=["story"])).content.decode()
    help_text = page.split('id="field-kind"')[1].split("</div>")[0]
    assert "roleplay (DRPE) de-duplicates the roles it generates" in help_text
    assert "`make install-gpu`" in help_text


@pytest.mark.parametrize(("data", "field", "message"), [
    ({"backend": "openai", "model": "m", "api_key_env": "sk-abc123"}, "api_key_env",
     "give the NAME of an environment variable, not the key itself"),
    ({"backend": "openai-compatible", "model": "m"}, "base_url", "--base-url is required"),
    ({"backend": "openai"}, "model", "--model is required"),
    ({"backend": "fake", "name": ""}, "name", "This field is required."),
])
def test_judge_errors_appear_under_their_field_and_create_nothing(owner_client, story_study, data, field, message):
    response = owner_client.post(reverse("llmjudge:judge_new", args=["story"]),
                                 {"name": "j", "kind": "plain", **data})
    assert response.status_code == 400
    assert message in _field(response.content.decode(), field)
    assert not Judge.objects.exists()


def test_an_existing_judge_name_is_refused_by_the_name_field(owner_client, story_study, make_judge):
    make_judge("taken")
    response = owner_client.post(reverse("llmjudge:judge_new", args=["story"]),
                                 {"name": "taken", "kind": "plain", "backend": "fake"})
    assert "a judge named &#x27;taken&#x27; already exists" in _field(response.content.decode(), "name")
    assert Judge.objects.count() == 1


def test_another_researcher_cannot_reach_the_judge_form_of_a_study(client, other_researcher, story_study):
    client.force_login(other_researcher)
    assert client.get(reverse("llmjudge:judge_new", args=["story"])).status_code == 404
    assert client.post(reverse("llmjudge:judge_new", args=["story"]),
                       {"name": "x", "kind": "plain", "backend": "fake"}).status_code == 404
    assert not Judge.objects.exists()


def test_the_judge_menu_preselects_the_only_judge_and_not_one_of_two(owner_client, story_study, make_judge):
    only = make_judge("only")
    page = owner_client.get(reverse("llmjudge:study_runs", args=["story"])).content.decode()
    assert f'<option value="{only.pk}" selected>only</option>' in page
    make_judge("second")
    page = owner_client.get(reverse("llmjudge:study_runs", args=["story"])).content.decode()
    assert "selected>only" not in page and "selected>second" not in page


def test_run_judge_with_nothing_chosen_shows_the_error_under_the_menu(owner_client, story_study, make_judge):
    make_judge("j")
    response = owner_client.post(reverse("llmjudge:run_start", args=["story"]), {})
    assert response.status_code == 400
    assert "Choose a judge to run." in _field(response.content.decode(), "judge")
    assert not JudgeRun.objects.exists()


def test_a_run_the_service_refuses_shows_why_under_the_menu(owner_client, story_study, make_judge):
    judge = make_judge("j")  # the study has no item: nothing to judge
    response = owner_client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": judge.pk})
    assert response.status_code == 400
    assert "item" in _field(response.content.decode(), "judge")
    assert not JudgeRun.objects.exists()
