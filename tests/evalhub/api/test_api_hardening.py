"""Issue 18, findings 5 and 6: malformed bodies get a 4xx and change nothing; the schema keeps its word."""
from __future__ import annotations

import copy
import json

import pytest
from rest_framework.test import APIClient

from annotations.studies import StudySpecError, protocol_templates, study_spec_check
from tests.support.snapshots import database_snapshot

pytestmark = pytest.mark.django_db

BASE = protocol_templates()["story-likert"]


def _spec(**changes: object) -> dict:
    spec = copy.deepcopy(BASE)
    spec.update(changes)
    return spec


def _question(**changes: object) -> dict:
    return _spec(questions=[{**BASE["questions"][0], **changes}])


def _scale(low: object, high: object) -> dict:
    return _spec(scale={"min": low, "max": high})


# Finding 5's thirteen 500s and finding 6's stored wrong types, by name.
NAMED = {
    "raters_per_item -1": _spec(raters_per_item=-1),
    "raters_per_item 'abc'": _spec(raters_per_item="abc"),
    "raters_per_item 1e20": _spec(raters_per_item=1e20),
    "raters_per_item 10**20": _spec(raters_per_item=10**20),
    "300-character title": _spec(title="t" * 300),
    "null title": _spec(title=None),
    "NUL in the title": _spec(title="a\x00b"),
    "NUL in the template": _spec(llm_template=BASE["llm_template"] + "\x00"),
    "NUL in a question's text": _question(text="q\x00"),
    "300-character question key": _question(key="k" * 300),
    "scale of -10**12..10**12": _scale(-(10**12), 10**12),
    "scale of 1..10**12": _scale(1, 10**12),
    "scale of -10**12..1": _scale(-(10**12), 1),
    "contrasts 'x'": _spec(contrasts="x"),
    "groups 5": _spec(groups=5),
}

# Generated: every field the study stores, given each JSON type it must not have.
WRONG = {"int": 5, "float": 1.5, "bool": True, "null": None, "string": "x", "list": [1], "object": {"a": 1}}
ALLOWED = {
    "title": {"string"},
    "llm_template": {"string"},
    "human_instruction": {"string"},
    "item_fields": {"list"},
    "groups": {"list"},
    "contrasts": {"list"},
    "diff_fields": {"list"},
    "field_labels": {"object"},
    "raters_per_item": {"int"},
    "questions": {"list"},
    "scale": {"object"},
    "kind": {"string"},
}
GENERATED = {
    f"{field} as {name}": _spec(**{field: value})
    for field, allowed in ALLOWED.items()
    for name, value in WRONG.items()
    if name not in allowed
} | {
    f"question {part} as {name}": _question(**{part: value})
    for part in ("key", "text", "context", "rubric")
    for name, value in WRONG.items()
    if name != ("object" if part == "rubric" else "string") and not (part != "rubric" and value is None)
} | {
    f"scale {end} as {name}": _spec(scale={**BASE["scale"], end: value})
    for end in ("min", "max")
    for name, value in WRONG.items()
    if name != "int"
}
MALFORMED = NAMED | GENERATED


def test_enough_generated_cases():
    assert len(GENERATED) >= 30


@pytest.fixture
def owner_api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_spec_is_a_4xx_through_the_api_and_changes_nothing(owner_api, name):
    before = database_snapshot()
    response = owner_api.post("/api/studies/", {"slug": "bad", "spec": MALFORMED[name]}, format="json")
    assert 400 <= response.status_code < 500, (name, response.status_code, response.content[:300])
    assert database_snapshot() == before


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_spec_is_refused_by_the_check_the_command_and_form_share(name):
    with pytest.raises(StudySpecError) as refused:
        study_spec_check(MALFORMED[name])
    assert "\n" not in str(refused.value)


def test_the_templates_still_pass_the_check():
    for spec in protocol_templates().values():
        study_spec_check(spec)


@pytest.mark.parametrize("path", ["/api/studies/", "/api/studies/x/invitations/"])
def test_json_nested_100000_deep_is_a_400(owner_api, path, story_study):
    path = path.replace("/x/", f"/{story_study.slug}/")
    before = database_snapshot()
    body = '{"slug": "deep", "count": 1, "spec": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = owner_api.generic("POST", path, body, content_type="application/json")
    assert response.status_code == 400
    assert database_snapshot() == before


def test_a_spec_nested_deep_but_parseable_is_a_400(owner_api):
    response = owner_api.post("/api/studies/", {"slug": "deep", "spec": _spec(rubric=json.loads("[" * 500 + "]" * 500))},
                              format="json")
    assert response.status_code == 400


def test_invitations_are_capped_per_request_and_per_study(owner_api, story_study, settings):
    url = f"/api/studies/{story_study.slug}/invitations/"
    before = database_snapshot()
    assert owner_api.post(url, {"count": settings.INVITATIONS_PER_REQUEST + 1}, format="json").status_code == 400
    assert owner_api.post(url, {"count": "abc"}, format="json").status_code == 400
    assert database_snapshot() == before
    settings.RATERS_PER_STUDY_MAX = story_study.raters.count() + 3
    assert owner_api.post(url, {"count": 3}, format="json").status_code == 201
    before = database_snapshot()
    response = owner_api.post(url, {"count": 1}, format="json")
    assert response.status_code == 409 and "RATERS_PER_STUDY_MAX" in response.json()["detail"]
    assert database_snapshot() == before


@pytest.mark.parametrize("body", [{"items": []}, {"items": "x"}, {"items": [5]}, {"items": [{"id": "a\x00"}]}, {}])
def test_malformed_items_bodies_are_a_400_and_change_nothing(owner_api, story_study, body):
    before = database_snapshot()
    response = owner_api.post(f"/api/studies/{story_study.slug}/items/", body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert database_snapshot() == before


@pytest.mark.parametrize("path", ["/api/nothing", "/api/studies/x/y/z/", "/api/runs/abc/"])
def test_unknown_api_paths_answer_json(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_the_schema_documents_errors_list_shapes_and_the_create_shapes(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    runs = schema["paths"]["/api/studies/{slug}/runs/"]["get"]["responses"]
    assert runs["200"]["content"]["application/json"]["schema"]["type"] == "array"
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert {"401", "403", "429"} <= set(operation["responses"]), (path, method)
    create = schema["paths"]["/api/studies/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "oneOf" in schema["components"]["schemas"][create["$ref"].rsplit("/", 1)[1]]
    items = schema["paths"]["/api/studies/{slug}/items/"]["post"]["requestBody"]["content"]
    upload = schema["components"]["schemas"][items["multipart/form-data"]["schema"]["$ref"].rsplit("/", 1)[1]]
    assert upload["properties"]["file"] == {"type": "string", "format": "binary",
                                            "description": upload["properties"]["file"]["description"]}


@pytest.mark.usefixtures("fresh_cache")
def test_the_n_plus_first_anonymous_request_is_throttled(client, settings):
    settings.API_THROTTLE_ANON = "3/min"
    codes = [client.get("/api/studies/").status_code for _ in range(4)]
    assert codes == [401, 401, 401, 429]


@pytest.mark.usefixtures("fresh_cache")
def test_a_researcher_is_throttled_per_user(owner_api, settings):
    settings.API_THROTTLE_USER = "2/min"
    codes = [owner_api.get("/api/studies/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
