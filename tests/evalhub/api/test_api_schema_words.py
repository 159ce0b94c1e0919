"""Issue 18, finding 6: what schemathesis `--checks all` (.ci/schemathesis_api.sh) holds the API to.

The published schema says what the server enforces and no more: a spec the schema calls invalid is
refused, every real spec is valid, and the statuses for a taken slug and an item's types are the
ones the schema documents.
"""
from __future__ import annotations

import copy

import jsonschema
import pytest
from rest_framework.test import APIClient

from annotations.studies import StudySpecError, protocol_templates, study_spec_check
from tests.support.snapshots import database_snapshot

pytestmark = pytest.mark.django_db

BASE = protocol_templates()["story-likert"]


@pytest.fixture
def owner_api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def schema(client) -> dict:
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def _spec_validator(schema: dict) -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(schema["components"]["schemas"]["StudyFromSpecRequest"]["properties"]["spec"])


def test_every_template_is_valid_against_the_published_spec_schema(schema):
    validator = _spec_validator(schema)
    for slug, spec in protocol_templates().items():
        study_spec_check(spec)
        assert not list(validator.iter_errors(spec)), slug


# Each violates the published schema; the server must refuse each (negative_data_rejection).
SCHEMA_INVALID = {
    "pair_fields null": {"pair_fields": None},
    "pair_fields an object": {"pair_fields": {}},
    "pair_fields of three": {"pair_fields": ["story", "prompt", "story"]},
    "pair_fields not strings": {"pair_fields": [1, 2]},
    "blank title": {"title": " \t"},
    "unknown kind": {"kind": "ranking"},
    "a reserved item field": {"item_fields": ["story", "question"]},
    "an item field twice": {"item_fields": ["story", "story"]},
    "no {question}": {"llm_template": "Rate {story}."},
    "unknown ordering": {"ordering": "random"},
    "ordering a number": {"ordering": 5},
    "raters_per_item 0": {"raters_per_item": 0},
    "a scale of strings": {"scale": {"min": "1", "max": "5"}},
    "a scale past the bound": {"scale": {"min": 1, "max": 2_000_000}},
    "a question key with a space": {"questions": [{"key": "a b", "text": "Rate."}]},
    "a question without text": {"questions": [{"key": "q"}]},
    "a contrast of one": {"contrasts": [["human"]]},
    "field_labels not strings": {"field_labels": {"story": 1}},
    "NUL in a group": {"groups": ["hu\x00man"]},
    "an unknown key": {"raters_per_itme": 2},
    "an unknown question key": {"questions": [{"key": "q", "text": "Rate.", "contxt": "x"}]},
    "an unknown scale key": {"scale": {"min": 1, "max": 5, "lables": {}}},
}


@pytest.mark.parametrize("name", sorted(SCHEMA_INVALID))
def test_a_spec_the_schema_calls_invalid_is_refused(schema, name):
    spec = {**copy.deepcopy(BASE), **SCHEMA_INVALID[name]}
    assert list(_spec_validator(schema).iter_errors(spec)), name
    with pytest.raises(StudySpecError):
        study_spec_check(spec)


def test_a_taken_slug_is_a_documented_409(schema, owner_api, story_study):
    assert "409" in schema["paths"]["/api/studies/"]["post"]["responses"]
    before = database_snapshot()
    response = owner_api.post("/api/studies/", {"slug": story_study.slug, "template": "story-likert"}, format="json")
    assert response.status_code == 409
    assert database_snapshot() == before


@pytest.mark.parametrize("value", [True, None, {}, [1]])
def test_an_item_value_that_is_not_a_string_or_number_is_a_400(schema, owner_api, story_study, value):
    item = schema["components"]["schemas"]["ItemsJSONRequest"]["properties"]["items"]["items"]
    body = {"items": [{"id": "i1", "group": "human", "story": value, "prompt": "P."}]}
    assert list(jsonschema.Draft7Validator(item).iter_errors(body["items"][0]))
    before = database_snapshot()
    response = owner_api.post(f"/api/studies/{story_study.slug}/items/", body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert database_snapshot() == before


def test_the_item_values_the_schema_allows_are_imported(owner_api, story_study):
    body = {"items": [{"id": 7, "group": "human", "story": 1.5, "prompt": "P."}]}
    response = owner_api.post(f"/api/studies/{story_study.slug}/items/", body, format="json")
    assert response.status_code == 201, response.content[:300]


def test_the_run_actions_are_an_enum(schema):
    parameters = schema["paths"]["/api/runs/{run_id}/{action}/"]["post"]["parameters"]
    action = next(p for p in parameters if p["name"] == "action")
    assert sorted(action["schema"]["enum"]) == ["cancel", "pause", "resume"]


def test_an_oversized_anonymous_body_is_a_documented_413(schema, client, settings):
    """The CI's schemathesis pass: an anonymous 600 kB POST got the body limit's 413, which no operation named."""
    settings.ANONYMOUS_BODY_MAX_BYTES = 1024
    response = client.post("/api/studies/", data="x" * 2048, content_type="application/json")
    assert response.status_code == 413
    operation = schema["paths"]["/api/studies/"]["post"]
    documented = operation["responses"]["413"]["content"]["application/json"]["schema"]
    jsonschema.validate(response.json(), documented)
    writes = [(path, method) for path, operations in schema["paths"].items()
              for method in operations if method in ("post", "put", "patch")]
    assert writes and all("413" in schema["paths"][path][method]["responses"] for path, method in writes)
