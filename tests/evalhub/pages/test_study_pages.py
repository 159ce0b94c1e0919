"""The study's home page, its lifecycle buttons and uploads, and "New study": owner only, the same
services and messages as the commands, errors next to their field, nothing written on bad input."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotations.models import HumanRating, Item, Rater, Study
from annotations.selectors import study_overview
from annotations.services import invitations_create
from annotations.studies import protocol_templates, study_create_from_template
from llmjudge.models import Judge, JudgeRun
from tests.support.raterkit import add_story_items, answer, open_study

pytestmark = pytest.mark.django_db

ITEMS_CSV = b"id,group,story,prompt\nn1,human,A story.,A prompt.\nn2,gpt2,Another.,Another prompt.\n"


@pytest.fixture
def owner(client, researcher):
    client.force_login(researcher)
    return client


def _upload(client, slug: str, what: str, name: str, content: bytes, **extra):
    return client.post(reverse("study_upload", args=[slug, what]),
                       {f"{what}-file": SimpleUploadedFile(name, content), **extra})


def test_home_page_shows_status_progress_links_and_runs(owner, researcher, story_study):
    add_story_items(story_study)
    judge = Judge.objects.create(name="j", backend=Judge.Backend.FAKE, model="fake-model", owner=researcher)
    run = JudgeRun.objects.create(study=story_study, judge=judge)
    html = owner.get(reverse("study_home", args=["story"])).content.decode()
    assert 'id="study-status">Draft<' in html
    assert 'id="n-items">4<' in html and 'id="n-seats">0 / 12<' in html
    assert reverse("study_open", args=["story"]) in html
    for url in (reverse("study_dashboard", args=["story"]), reverse("llmjudge:preview", args=["story"]),
                reverse("annotations:study_raters", args=["story"]), reverse("llmjudge:study_runs", args=["story"]),
                reverse("llmjudge:run_detail", args=[run.pk])):
        assert f'href="{url}"' in html, url


def test_another_researcher_gets_404_on_every_study_page_and_action(client, other_researcher, story_study):
    client.force_login(other_researcher)
    add_story_items(story_study)
    assert client.get(reverse("study_home", args=["story"])).status_code == 404
    assert client.post(reverse("study_open", args=["story"])).status_code == 404
    assert _upload(client, "story", "items", "i.csv", ITEMS_CSV).status_code == 404
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.DRAFT and story_study.items.count() == 4


def test_open_is_refused_without_items_then_opens_closes_and_reopens(owner, story_study):
    response = owner.post(reverse("study_open", args=["story"]), follow=True)
    assert "study &#x27;story&#x27; has no item: import items before opening it" in response.content.decode()
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.DRAFT

    add_story_items(story_study)
    assert owner.post(reverse("study_open", args=["story"]))["Location"] == reverse("study_home", args=["story"])
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.OPEN
    owner.post(reverse("study_close", args=["story"]))
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.CLOSED
    html = owner.get(reverse("study_home", args=["story"])).content.decode()
    assert "Reopen the study" in html
    owner.post(reverse("study_open", args=["story"]))
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.OPEN


def test_closing_a_draft_says_why_and_changes_nothing(owner, story_study):
    html = owner.post(reverse("study_close", args=["story"]), follow=True).content.decode()
    assert "is not open (draft): there is nothing to close" in html
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.DRAFT


def test_lifecycle_actions_need_a_post(owner, story_study):
    assert owner.get(reverse("study_open", args=["story"])).status_code == 405


def test_items_upload_imports_the_file(owner, story_study):
    response = _upload(owner, "story", "items", "items.csv", ITEMS_CSV)
    assert response.status_code == 302
    assert sorted(story_study.items.values_list("external_id", flat=True)) == ["n1", "n2"]
    html = owner.get(response["Location"]).content.decode()
    assert "items.csv: Imported 2 items and 0 ratings." in html


def test_a_bad_items_file_imports_nothing_and_the_error_is_under_its_field(owner, story_study):
    bad = ITEMS_CSV + b"n1,human,Again.,Again.\n"
    response = _upload(owner, "story", "items", "bad.csv", bad)
    assert response.status_code == 400
    html = response.content.decode()
    field = html[html.index('id="field-items-file"'):]
    field = field[:field.index("</div>")]
    assert "bad.csv: line 4: duplicate id &#x27;n1&#x27; in the file. Nothing was imported." in field
    assert Item.objects.count() == 0


def test_an_upload_without_a_file_is_an_error_by_the_field(owner, story_study):
    response = owner.post(reverse("study_upload", args=["story", "items"]), {})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_an_unknown_upload_kind_is_404(owner, story_study):
    assert _upload(owner, "story", "plans", "p.csv", ITEMS_CSV).status_code == 404


def test_ratings_upload_imports_human_and_llm_pools(owner, story_study):
    rows = ["item,group,question,pool,rater,score"]
    rows += [f"n1,human,grammaticality,human,r{k},{k + 2}" for k in range(3)]
    rows += ["n1,human,grammaticality,gpt-x,0,4"]
    response = _upload(owner, "story", "ratings", "ratings.csv", "\n".join(rows).encode())
    assert response.status_code == 302
    assert HumanRating.objects.filter(rater__study=story_study).count() == 3
    assert JudgeRun.objects.filter(study=story_study, judge__name__contains="gpt-x").count() == 1


def test_ratings_upload_with_a_score_off_the_scale_imports_nothing(owner, story_study):
    rows = "item,group,question,pool,rater,score\nn1,human,grammaticality,human,r1,3\nn1,human,likability,human,r1,9\n"
    response = _upload(owner, "story", "ratings", "r.csv", rows.encode())
    assert response.status_code == 400
    assert "line 3:" in response.content.decode()
    assert HumanRating.objects.count() == 0 and Item.objects.count() == 0


def test_demographics_upload_sets_raters_demographics_and_replace_is_passed_on(owner, story_study):
    Rater.objects.create(study=story_study, external_id="p1", demographics={"age": "30"})
    content = b"rater,age\np1,40\n"
    refused = _upload(owner, "story", "demographics", "d.csv", content)
    assert refused.status_code == 400
    assert Rater.objects.get(external_id="p1").demographics == {"age": "30"}
    assert _upload(owner, "story", "demographics", "d.csv", content, **{"demographics-replace": "on"}).status_code == 302
    assert Rater.objects.get(external_id="p1").demographics == {"age": "40"}


def test_new_study_from_a_template_goes_to_its_page_owned_by_the_user(owner, researcher):
    response = owner.post(reverse("study_new"), {"slug": "fresh", "template": "story-likert"})
    assert response["Location"] == reverse("study_home", args=["fresh"])
    study = Study.objects.get(slug="fresh")
    assert study.owner == researcher and study.status == Study.Status.DRAFT and study.questions.count() == 4


def test_new_study_from_a_json_file(owner, researcher):
    spec = json.dumps(protocol_templates()["story-likert"]).encode()
    response = owner.post(reverse("study_new"), {"slug": "from-file", "file": SimpleUploadedFile("s.json", spec)})
    assert response.status_code == 302
    assert Study.objects.get(slug="from-file").owner == researcher


@pytest.mark.parametrize(("data", "field", "message"), [
    ({"slug": "x", "file": b"{not json"}, "file", "not a JSON file"),
    ({"slug": "x", "file": b"[1, 2]"}, "file", "must hold one JSON object"),
    ({"slug": "x", "file": b'{"title": "T"}'}, "file", "missing key"),
    ({"slug": "x"}, "template", "choose a template or upload a JSON file"),
    ({"slug": "not a slug", "template": "story-likert"}, "slug", "Enter a valid"),
    ({"slug": "story", "template": "story-likert"}, "slug", "a study with slug &#x27;story&#x27; already exists"),
])
def test_new_study_errors_appear_under_their_field_and_create_nothing(owner, story_study, data, field, message):
    if isinstance(data.get("file"), bytes):
        data = {**data, "file": SimpleUploadedFile("spec.json", data["file"])}
    response = owner.post(reverse("study_new"), data)
    assert response.status_code == 400
    html = response.content.decode()
    block = html[html.index(f'id="field-{field}"'):]
    assert message in block[:block.index("</div>")]
    assert list(Study.objects.values_list("slug", flat=True)) == ["story"]


def test_new_study_needs_a_login(client):
    assert client.get(reverse("study_new"))["Location"].startswith("/accounts/login/")


def test_the_home_page_links_each_study_to_its_page(owner, researcher, other_researcher):
    study_create_from_template(slug="mine", template="story-likert", owner=researcher)
    study_create_from_template(slug="theirs", template="story-likert", owner=other_researcher)
    html = owner.get("/").content.decode()
    assert f'href="{reverse("study_home", args=["mine"])}"' in html
    assert "theirs" not in html
    assert f'href="{reverse("study_new")}"' in html


def test_study_overview_counts_seats_ratings_and_active_raters(story_study):
    open_study(story_study)
    add_story_items(story_study)
    idle, busy = invitations_create(study=story_study, count=2)
    for rater in (idle, busy):
        answer(Client(), rater, 3)  # finishes the first step: the item stays claimed until its last question
    overview = study_overview(study=story_study)
    assert (overview.items, overview.seats, overview.raters, overview.invitations) == (4, 12, 2, 2)
    assert overview.ratings == 2 * 3 and overview.raters_active == 2 and overview.seats_filled == 0
    later = timezone.now() + timedelta(minutes=61)
    assert study_overview(study=story_study, now=later).raters_active == 0


def test_a_file_above_the_import_limit_is_refused_before_it_is_read(owner, story_study, settings):
    settings.IMPORT_MAX_BYTES = 20
    response = _upload(owner, "story", "items", "big.csv", ITEMS_CSV)
    assert response.status_code == 400
    assert f"the file is {len(ITEMS_CSV)} bytes, above the limit of 20 bytes" in response.content.decode()
    assert Item.objects.count() == 0
