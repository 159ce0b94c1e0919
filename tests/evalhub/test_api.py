"""The scripts' API: per-researcher tokens, own studies only, the same validation as the commands."""
from __future__ import annotations

import io

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotations.models import Item, Study


@pytest.fixture
def owner_api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


@pytest.fixture
def other_api(other_researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other_researcher).key}")
    return client


@pytest.mark.django_db
def test_anonymous_and_bad_tokens_are_refused():
    assert APIClient().get("/api/studies/").status_code == 401
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/studies/").status_code == 401


def test_create_a_study_from_a_template_and_see_it_listed(owner_api, researcher):
    response = owner_api.post("/api/studies/", {"slug": "stories", "template": "story-likert"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["questions"][0] == {
        "key": "grammaticality",
        "text": "How grammatically correct is the text of the story fragment? (on a scale of 1-5, with 1 being the lowest)",
    }
    assert Study.objects.get(slug="stories").owner == researcher
    assert [s["slug"] for s in owner_api.get("/api/studies/").json()] == ["stories"]


def test_create_a_study_from_a_json_spec_and_refuse_a_bad_one(owner_api):
    spec = {"title": "T", "item_fields": ["text"], "llm_template": "{text}\n{question}",
            "scale": {"min": 1, "max": 7}, "questions": [{"key": "q", "text": "Q?"}]}
    assert owner_api.post("/api/studies/", {"slug": "custom", "spec": spec}, format="json").status_code == 201
    bad = owner_api.post("/api/studies/", {"slug": "bad", "spec": {**spec, "llm_template": "{text}"}}, format="json")
    assert bad.status_code == 400 and "must contain {question}" in bad.json()["detail"]
    both = owner_api.post("/api/studies/", {"slug": "x", "spec": spec, "template": "story-likert"}, format="json")
    assert both.status_code == 400
    assert list(Study.objects.values_list("slug", flat=True)) == ["custom"]


def test_a_researcher_never_sees_another_researchers_study(owner_api, other_api, story_study):
    assert other_api.get("/api/studies/").json() == []
    assert other_api.get("/api/studies/story/").status_code == 404
    upload = other_api.post("/api/studies/story/items/", {"items": [{"id": "a"}]}, format="json")
    assert upload.status_code == 404
    assert owner_api.get("/api/studies/story/").json()["slug"] == "story"
    assert Item.objects.count() == 0


def test_upload_items_as_json_or_as_a_file(owner_api, story_study):
    items = [{"id": "a", "group": "human", "story": "S", "prompt": "P"}]
    response = owner_api.post("/api/studies/story/items/", {"items": items}, format="json")
    assert (response.status_code, response.json()) == (201, {"created_items": 1})
    csv_file = io.BytesIO(b"id,group,story,prompt\nb,gpt2,S2,P2\n")
    csv_file.name = "items.csv"
    response = owner_api.post("/api/studies/story/items/", {"file": csv_file}, format="multipart")
    assert response.status_code == 201, response.content
    assert sorted(Item.objects.values_list("external_id", "group")) == [("a", "human"), ("b", "gpt2")]


def test_bad_items_are_refused_with_the_line_and_nothing_changes(owner_api, story_study):
    items = [{"id": "a", "group": "human", "story": "S", "prompt": "P"},
             {"id": "b", "group": "robots", "story": "S", "prompt": "P"}]
    response = owner_api.post("/api/studies/story/items/", {"items": items}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == ("line 2: unknown group 'robots'; the study's groups are gpt2, human; "
                                         "nothing was imported")
    assert Item.objects.count() == 0


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_endpoints(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/studies/{slug}/items/" in text and "tokenAuth" in text
