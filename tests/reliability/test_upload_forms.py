"""Every upload form refuses a bad file with a message and a 400, never a 500 (issue 23, finding 7: /new-study/
answered 500 on a spec nested 100,000 deep or holding a 5,000-digit number, where the API answered 400).

The forms: "New study" (a JSON specification), the study home's items, ratings and demographics uploads, and
the admin's items and demographics imports. Each gets the attack's files, then a hypothesis fuzz (derandomized)
of arbitrary bytes and near-miss JSON and CSV; a refused file changes no row.
"""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotations.models import HumanRating, Item, Rater, Study
from llmjudge.models import LLMRating

pytestmark = pytest.mark.django_db

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

DEEP = ("[" * 100_000 + "]" * 100_000).encode()
HUGE_NUMBER = ('{"title": "t", "scale": {"min": 1, "max": ' + "9" * 5000 + "}}").encode()
ATTACK_FILES = {
    "nested 100,000 deep": DEEP,
    "a 5,000-digit number": HUGE_NUMBER,
    "an object nested 100,000 deep": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "latin-1": "Überblick".encode("latin-1"),
    "NUL": b'{"title": "\x00"}',
    "a lone surrogate escape": b'{"title": "\\ud800", "item_fields": ["story"]}',
    "not JSON": b"<html>",
    "empty": b"",
    "a JSON list": b"[1, 2]",
    "NaN": b'{"title": NaN}',
}


def _forms(study: Study) -> dict[str, tuple[str, str, dict[str, str]]]:
    """name -> (URL, file field, other fields)."""
    return {
        "new study": ("/new-study/", "file", {"slug": "fuzzed"}),
        "items upload": (f"/studies/{study.slug}/upload/items/", "items-file", {}),
        "ratings upload": (f"/studies/{study.slug}/upload/ratings/", "ratings-file", {}),
        "demographics upload": (f"/studies/{study.slug}/upload/demographics/", "demographics-file", {}),
        "admin items import": (f"/admin/annotations/study/{study.pk}/import-items/", "file", {}),
        "admin demographics import": (f"/admin/annotations/study/{study.pk}/import-demographics/", "file", {}),
    }


def _counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Study, Item, Rater, HumanRating, LLMRating))


@pytest.fixture
def staff_client(client, story_study, django_user_model):
    staff = django_user_model.objects.create_superuser(username="root", password="pw-root-123")
    Study.objects.filter(pk=story_study.pk).update(owner=staff)
    client.force_login(staff)
    return client


def _post(client, study: Study, form: str, content: bytes, name: str = "upload.json"):
    url, field, data = _forms(study)[form]
    return client.post(url, {**data, field: SimpleUploadedFile(name, content)})


@pytest.mark.parametrize("case", sorted(ATTACK_FILES))
def test_new_study_refuses_a_bad_spec_file_with_a_400_and_a_message(staff_client, story_study, case):
    before = _counts()
    response = _post(staff_client, story_study, "new study", ATTACK_FILES[case])
    assert response.status_code == 400, response.status_code
    html = response.content.decode()
    assert 'class="errorlist' in html  # the reason, under the field
    assert _counts() == before


def test_the_attack_files_get_their_reason(staff_client, story_study):
    deep = _post(staff_client, story_study, "new study", DEEP).content.decode()
    assert "nested too deeply" in deep
    huge = _post(staff_client, story_study, "new study", HUGE_NUMBER).content.decode()
    assert "Exceeds the limit (4300 digits)" in huge


@pytest.mark.parametrize("form", ["items upload", "ratings upload", "demographics upload", "admin items import",
                                  "admin demographics import"])
@pytest.mark.parametrize("case", sorted(ATTACK_FILES))
def test_every_import_form_refuses_the_attack_files(staff_client, story_study, form, case):
    before = _counts()
    response = _post(staff_client, story_study, form, ATTACK_FILES[case], name="upload.jsonl")
    assert response.status_code in (200, 400), response.status_code  # the admin shows its form again (200)
    assert _counts() == before


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
SPEC_KEYS = st.sampled_from(["title", "kind", "item_fields", "llm_template", "scale", "questions", "groups",
                             "ordering", "raters_per_item", "human_instruction", "contrasts", "attention_positions"])
NEAR_SPECS = st.dictionaries(SPEC_KEYS, JSON_VALUES, max_size=8).map(
    lambda spec: json.dumps(spec, allow_nan=True).encode())
CSV_LIKE = st.lists(st.lists(st.text(max_size=8), max_size=5).map(",".join), max_size=6).map(
    lambda rows: "\n".join(["id,group,story,prompt", *rows]).encode("utf-8", "surrogatepass"))
FILES = st.one_of(st.binary(max_size=500), NEAR_SPECS, CSV_LIKE, st.sampled_from(sorted(ATTACK_FILES.values())))


@FUZZ
@given(content=FILES, form=st.sampled_from(["new study", "items upload", "ratings upload", "demographics upload",
                                            "admin items import", "admin demographics import"]))
def test_fuzzed_files_never_break_an_upload_form(staff_client, story_study, content, form):
    before = _counts()
    response = _post(staff_client, story_study, form, content)  # an exception in a view fails the test here
    assert response.status_code in (200, 302, 400), response.status_code
    if response.status_code == 400:
        assert _counts() == before
    Study.objects.filter(slug="fuzzed").delete()  # a fuzzed spec that happened to be valid
