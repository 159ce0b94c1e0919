"""The study page's settings form (issue 26, 1): every setting saved from a post, a refused one answered 400 with
its field's error and nothing changed, the spec's own rules applied, an open study's locked settings refused even
when the browser sends them, and only the owner may post (CSRF enforced)."""
from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from annotations.models import HumanRating, Study
from annotations.studies import protocol_templates, study_create_from_template
from evalhub.imports.meta_study import meta_study_create
from llmjudge.models import Judge, JudgeRun, LLMRating
from tests.support.raterkit import add_story_items, answer, open_study

pytestmark = pytest.mark.django_db

EVERY_SETTING = {
    "title": "Short stories, rated",
    "human_instruction": "Read the story, then answer each question.",
    "consent_text": "I agree that my answers are used for research.",
    "ask_demographics": "yes",
    "raters_per_item": "4",
    "items_per_rater": "3",
    "ordering": "mixed",
    "attention_positions": "2, 5",
    "attention_rule": "end",
    "groups": "alpha\nbeta, gamma",
    "contrasts": "alpha vs beta\nalpha vs gamma",
    "completion_redirect_url": "https://panel.example.org/done?cc={code}",
    "human_subset": '{"count": 1, "seed": 7}',
    "gold_items": '{"h1": {"grammaticality": 1, "relevance": 5}}',
}


@pytest.fixture
def owner(client, researcher):
    client.force_login(researcher)
    return client


def _post(client: Client, data: dict[str, str], slug: str = "story"):
    return client.post(reverse("study_settings", args=[slug]), data)


def _snapshot(study: Study) -> dict[str, object]:
    study.refresh_from_db()
    return {f.name: getattr(study, f.name) for f in Study._meta.fields}


def test_every_setting_is_saved_from_one_post(owner, story_study):
    add_story_items(story_study)
    response = _post(owner, EVERY_SETTING)
    assert response.status_code == 302 and response["Location"].endswith("/studies/story/home/#settings")
    study = Study.objects.get(slug="story")
    assert (study.title, study.instruction, study.consent_text) == (
        "Short stories, rated", "Read the story, then answer each question.",
        "I agree that my answers are used for research.")
    assert (study.ask_demographics, study.raters_per_item, study.items_per_rater, study.ordering) == (
        True, 4, 3, "mixed")
    assert (study.attention_positions, study.attention_rule) == ([2, 5], "end")
    assert study.groups == ["alpha", "beta", "gamma"]
    assert study.contrasts == [["alpha", "beta"], ["alpha", "gamma"]]
    assert study.completion_redirect_url == "https://panel.example.org/done?cc={code}"
    assert study.human_subset == {"count": 1, "seed": 7}
    assert study.items.filter(in_human_subset=True).count() == 2  # one per group the items name (human, gpt2)
    gold = study.items.get(external_id="h1")
    assert (gold.kind, gold.gold_answers, gold.in_human_subset) == ("gold", {"grammaticality": 1, "relevance": 5},
                                                                    False)
    assert set(study.items.exclude(external_id="h1").values_list("kind", flat=True)) == {"normal"}
    page = html.unescape(owner.get(reverse("study_home", args=["story"])).content.decode())
    assert "Settings saved (" in page and 'value="2, 5"' in page


@pytest.mark.parametrize(("field", "value", "error"), [
    ("title", "", "This field is required."),
    ("raters_per_item", "0", "raters_per_item must be a whole number from 1 to 1000"),
    ("groups", "human\nhuman", "groups lists a name twice"),
    ("groups", "x" * 101, "groups must be a list of non-empty strings of at most 100 characters"),
    ("human_instruction", "Rate the alpha story.\nThen answer.",
     "the instruction's first line ('Rate the alpha story.') names 'alpha', a group or condition"),
    ("human_subset", '{"share": 3}', "human_subset: share must be a number above 0 and at most 1"),
    ("human_subset", "{oops", "not JSON"),
    ("completion_redirect_url", "not a url", "Enter a valid URL."),
    ("items_per_rater", "-2", "Ensure this value is greater than or equal to 0."),
    ("attention_positions", "2, two", "whole numbers of rated items, separated by commas"),
    ("attention_positions", "0", "attention checks: a list of different whole numbers of rated items, each at least 1"),
    ("ordering", "shuffled", "Select a valid choice."),
    ("contrasts", "alpha beta", "write a pair as “a vs b”"),
    ("gold_items", '{"zz": {"grammaticality": 1}}', "gold items: no item 'zz' in this study"),
    ("gold_items", '{"h1": {"grammar": 1}}', "gold items: item 'h1': no question 'grammar'"),
    ("gold_items", '{"h1": {"grammaticality": 6}}', "the answer must be a whole number from 1 to 5, got 6"),
    ("gold_items", '["h1"]', "gold items: an object of item ids, each with its known answers"),
])
def test_a_refused_setting_answers_400_with_its_fields_error_and_changes_nothing(owner, story_study, field, value,
                                                                                  error):
    add_story_items(story_study)
    before = _snapshot(story_study)
    kinds = list(story_study.items.values_list("kind", "gold_answers"))
    response = _post(owner, {**EVERY_SETTING, field: value})
    page = html.unescape(response.content.decode())
    assert response.status_code == 400
    start = page.index(f'id="field-{field}"')
    assert error in page[start:page.index("</div>", start)]
    assert _snapshot(story_study) == before
    assert list(story_study.items.values_list("kind", "gold_answers")) == kinds


def test_gold_items_set_back_to_none_become_normal_items(owner, story_study):
    add_story_items(story_study)
    assert _post(owner, {"gold_items": '{"g1": {"likability": 2}}'}).status_code == 302
    assert list(story_study.items.filter(kind="gold").values_list("external_id", flat=True)) == ["g1"]
    assert _post(owner, {"gold_items": ""}).status_code == 302
    assert [(item.kind, item.gold_answers) for item in story_study.items.all()] == [("normal", {})] * 4


def test_a_setting_left_out_of_the_post_keeps_its_value(owner, story_study):
    story_study.consent_text = "Kept."
    story_study.save()
    assert _post(owner, {"raters_per_item": "5"}).status_code == 302
    study = Study.objects.get(slug="story")
    assert (study.raters_per_item, study.consent_text, study.groups) == (5, "Kept.", ["gpt2", "human"])


def test_an_open_study_refuses_locked_settings_even_when_the_browser_sends_them(owner, story_study):
    add_story_items(story_study)
    open_study(story_study)
    before = _snapshot(story_study)
    for field, value in (("title", "New title"), ("consent_text", "Other terms."), ("ask_demographics", "yes"),
                         ("ordering", "fixed"), ("groups", "a\nb\nc"), ("attention_positions", "3"),
                         ("attention_rule", "end"), ("human_instruction", "Read carefully."),
                         ("gold_items", '{"h2": {"relevance": 4}}')):
        response = _post(owner, {field: value})
        page = html.unescape(response.content.decode())
        assert response.status_code == 400, field
        assert f"{field} cannot change: the study is open and" in page, field
        assert _snapshot(story_study) == before, field
    assert not story_study.items.filter(kind="gold").exists()


def test_an_open_study_still_changes_what_earlier_raters_did_not_see(owner, story_study):
    add_story_items(story_study)
    open_study(story_study)
    page = html.unescape(owner.get(reverse("study_home", args=["story"])).content.decode())
    assert "Fixed while the study is open: raters have agreed to the consent text as it stands." in page
    assert "May still change: seats still to fill; ratings made stay." in page
    response = _post(owner, {"raters_per_item": "5", "items_per_rater": "2",
                             "completion_redirect_url": "https://panel.example.org/c/{code}", "contrasts": ""})
    assert response.status_code == 302
    study = Study.objects.get(slug="story")
    assert (study.raters_per_item, study.items_per_rater, study.contrasts) == (5, 2, [])


def test_the_human_subset_is_locked_once_people_have_rated(owner, story_study, rater):
    add_story_items(story_study)
    open_study(story_study)
    answer(Client(), rater)
    assert HumanRating.objects.filter(question__study=story_study).exists()
    response = _post(owner, {"human_subset": '{"share": 0.5}'})
    assert response.status_code == 400
    assert "human_subset: people have already rated items of this study" in html.unescape(response.content.decode())
    assert Study.objects.get(slug="story").human_subset == {}


def test_only_the_owner_may_post_and_a_read_only_viewer_sees_no_form(client, other_researcher, story_study,
                                                                     django_user_model):
    client.force_login(other_researcher)
    assert _post(client, {"title": "Mine now"}).status_code == 404
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    client.force_login(viewer)
    response = client.get(reverse("study_home", args=["story"]))
    page = response.content.decode()
    assert response.status_code == 200, page[-3000:]
    assert 'id="settings-form"' not in page and "Read-only: settings are changed by the study's owner." in page
    assert _post(client, {"title": "Mine now"}).status_code == 404
    assert Study.objects.get(slug="story").title != "Mine now"


def test_a_post_without_the_csrf_token_is_refused(researcher, story_study):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert _post(client, {"title": "Forged"}).status_code == 403
    assert Study.objects.get(slug="story").title != "Forged"


def test_a_meta_evaluation_study_takes_its_rater_settings_and_keeps_its_spec_ones(owner, story_study, researcher):
    items = add_story_items(story_study)
    run = JudgeRun.objects.create(study=story_study, judge=Judge.objects.create(
        name="j", backend=Judge.Backend.FAKE, model="m"))
    LLMRating.objects.create(run=run, item=items[0], question=story_study.questions.get(key="likability"), sample=0,
                             status=LLMRating.Status.OK, score=4, raw="4. Fine.", rationale="Fine.")
    meta = meta_study_create(slug="meta", run_id=run.pk, question_key="likability", owner=researcher)
    response = _post(owner, {"consent_text": "I agree.", "items_per_rater": "2"}, slug=meta.slug)
    page = html.unescape(response.content.decode())
    assert response.status_code == 302, page[page.index("id=\"settings\""):][:3000]
    meta.refresh_from_db()
    assert (meta.consent_text, meta.items_per_rater) == ("I agree.", 2)
    refused = _post(owner, {"raters_per_item": "5"}, slug=meta.slug)
    assert refused.status_code == 400
    assert "raters_per_item cannot change here: a meta-evaluation study is made from a judge run" in html.unescape(
        refused.content.decode())
    assert Study.objects.get(slug="meta").raters_per_item == meta.raters_per_item
    bad = _post(owner, {"attention_positions": "0"}, slug=meta.slug)  # its other settings keep their rules
    assert bad.status_code == 400 and Study.objects.get(slug="meta").attention_positions == []


@pytest.mark.parametrize("template", sorted(protocol_templates()))
def test_every_templates_study_passes_its_own_check_when_saved_unchanged(owner, researcher, template):
    study = study_create_from_template(slug="t", template=template, owner=researcher)
    response = owner.post(reverse("study_settings", args=["t"]), {})
    assert response.status_code == 302, html.unescape(response.content.decode())
    assert _snapshot(study)["title"] == protocol_templates()[template]["title"]


def test_a_pairwise_studys_pair_order_is_on_the_form_and_checked_by_the_spec(owner, researcher):
    pairwise = next(slug for slug, entry in protocol_templates().items() if entry.get("kind") == "pairwise")
    study_create_from_template(slug="p", template=pairwise, owner=researcher)
    assert 'id="settings_pair_order"' in owner.get(reverse("study_home", args=["p"])).content.decode()
    # The template's instruction tells raters "The order of A and B is random": fixed is refused until it does not.
    refused = owner.post(reverse("study_settings", args=["p"]), {"pair_order": "fixed"})
    assert refused.status_code == 400
    assert "pair_order 'fixed' shows every rater the file's A first, but human_instruction says something is random" \
        in html.unescape(refused.content.decode())
    assert Study.objects.get(slug="p").pair_order == "counterbalanced"
    # The judge's prompt (not a setting of this form) makes the same promise: still refused, by the same rule.
    still = owner.post(reverse("study_settings", args=["p"]),
                       {"pair_order": "fixed", "human_instruction": "Choose the better story\nJudge the texts only."})
    assert re.findall(r"errorlist[^>]*><li>([^<]*)", html.unescape(still.content.decode())) == [
        "pair_order 'fixed' shows every rater the file's A first, but llm_template says something is random: remove "
        "that promise, or counterbalance the order"]
    assert Study.objects.get(slug="p").pair_order == "counterbalanced"


def test_every_demo_study_passes_its_own_check_when_saved_unchanged(owner, researcher):
    from evalhub.demo.loader import demo_load

    for study in demo_load():
        Study.objects.filter(pk=study.pk).update(owner=researcher)
        response = _post(owner, {}, slug=study.slug)
        assert response.status_code == 302, (study.slug, re.findall(r"errorlist[^>]*><li>([^<]*)",
                                                                    html.unescape(response.content.decode())))
