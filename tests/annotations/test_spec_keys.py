"""Specs are checked like files (issue 25, item 2): an unknown or misspelt key is refused with its name and the
closest known key, through the check, the study form, `create_study --file` and the API, and nothing is made;
no heading a rater sees names a group or condition, and headings a spec leaves out are neutral."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotations.models import Study, neutral_field_labels
from annotations.spec_schema import STUDY_SPEC_SCHEMA
from annotations.studies import (
    QUESTION_KEYS,
    SCALE_KEYS,
    SPEC_KEYS,
    SPEC_NOTE_KEYS,
    StudySpecError,
    protocol_templates,
    study_create,
    study_spec_check,
)
from tests.support.snapshots import database_snapshot

pytestmark = pytest.mark.django_db

BASE = protocol_templates()["story-likert"]


def _with(**change: object) -> dict:
    return {**copy.deepcopy(BASE), **change}


def _question_with(**extra: object) -> dict:
    spec = copy.deepcopy(BASE)
    spec["questions"][0].update(extra)
    return spec


# (spec, the words of the refusal), written before the check ran on them.
REFUSED = {
    "misspelt raters_per_item": (_with(raters_per_itme=2),
                                 "unknown key 'raters_per_itme' in the study specification: did you mean "
                                 "'raters_per_item'?"),
    "consent_text, not a spec key": (_with(consent_text="I agree."),
                                     "unknown key 'consent_text' in the study specification: no key is like it "
                                     "(the closest is "),
    "a key like nothing known": (_with(zzz=1), "unknown key 'zzz' in the study specification: no key is like it"),
    "misspelt human_instruction": (_with(human_instructions="Rate."),
                                   "unknown key 'human_instructions' in the study specification: did you mean "
                                   "'human_instruction'?"),
    "misspelt question context": (_question_with(contxt="Read it."),
                                  "unknown key 'contxt' in question 1: did you mean 'context'?"),
    "misspelt scale labels": (_with(scale={"min": 1, "max": 5, "lables": {}}),
                              "unknown key 'lables' in scale: did you mean 'labels'?"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_check_refuses_an_unknown_key_naming_it_and_the_closest_known_one(name):
    spec, words = REFUSED[name]
    with pytest.raises(StudySpecError) as refused:
        study_spec_check(spec)
    assert str(refused.value).startswith(words)


def test_the_published_schema_knows_exactly_the_keys_the_check_knows():
    assert STUDY_SPEC_SCHEMA["additionalProperties"] is False
    assert sorted(STUDY_SPEC_SCHEMA["properties"]) == sorted(SPEC_KEYS + SPEC_NOTE_KEYS)
    question = STUDY_SPEC_SCHEMA["properties"]["questions"]["items"]
    assert (question["additionalProperties"], sorted(question["properties"])) == (False, sorted(QUESTION_KEYS))
    numeric = STUDY_SPEC_SCHEMA["properties"]["scale"]["oneOf"][0]
    assert (numeric["additionalProperties"], sorted(numeric["properties"])) == (False, sorted(SCALE_KEYS))


@pytest.mark.parametrize("name", ["misspelt raters_per_item", "misspelt question context"])
def test_create_study_file_refuses_an_unknown_key_and_creates_nothing(name, tmp_path: Path):
    spec, words = REFUSED[name]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    before = database_snapshot()
    with pytest.raises(CommandError) as refused:
        call_command("create_study", "typo", "--file", str(path))
    assert words in str(refused.value)
    assert database_snapshot() == before


@pytest.mark.parametrize("name", ["misspelt raters_per_item", "misspelt scale labels"])
def test_the_study_form_shows_the_unknown_key_under_the_file_and_creates_nothing(client, researcher, name):
    spec, words = REFUSED[name]
    client.force_login(researcher)
    before = database_snapshot()
    upload = SimpleUploadedFile("spec.json", json.dumps(spec).encode())
    response = client.post(reverse("study_new"), {"slug": "typo", "file": upload})
    assert response.status_code == 400
    html = response.content.decode()
    block = html[html.index('id="field-file"'):]
    assert words.replace("'", "&#x27;") in block[:block.index("</div>")]
    assert database_snapshot() == before


@pytest.mark.parametrize("name", ["misspelt raters_per_item", "consent_text, not a spec key"])
def test_the_api_refuses_an_unknown_key_with_a_400_and_creates_nothing(researcher, name):
    spec, words = REFUSED[name]
    api = APIClient()
    api.force_authenticate(researcher)
    before = database_snapshot()
    response = api.post("/api/studies/", {"slug": "typo", "spec": spec}, format="json")
    assert response.status_code == 400 and response.json()["detail"].startswith(words)
    assert database_snapshot() == before


def test_the_protocol_files_note_keys_are_accepted_and_not_stored():
    entry = protocol_templates()["adversarial-meaning"]
    assert {"slug", "human_form", "sanity_check"} <= set(entry)
    study = study_create(slug="notes", spec=entry)
    assert "sanity_check" not in json.dumps(Study.objects.filter(pk=study.pk).values().get(), default=str)


@pytest.mark.parametrize(("fields", "labels"), [
    (["benign_title", "adversarial_title"], ["Title 1", "Title 2"]),
    (["story", "prompt"], ["Story", "Prompt"]),
    (["prompt", "response_a", "response_b"], ["Prompt", "Response A", "Response B"]),
    (["gpt2_story"], ["Story"]),
    (["text"], ["Text"]),
])
def test_headings_a_spec_leaves_out_are_neutral(fields, labels):
    assert list(neutral_field_labels(fields).values()) == labels


MEANING_LIKE = {
    "title": "Compare titles", "groups": ["textfooler", "pwws"], "item_fields": ["benign_title", "adversarial_title"],
    "llm_template": "Title 1:\n{benign_title}\nTitle 2:\n{adversarial_title}\n{question}",
    "scale": {"min": 1, "max": 5}, "questions": [{"key": "meaning", "text": "Same meaning?"}],
}


@pytest.mark.parametrize(("change", "words"), [
    ({"field_labels": {"benign_title": "BENIGN TITLE", "adversarial_title": "ADVERSARIAL TITLE"}},
     "field_labels['benign_title'] ('BENIGN TITLE') names 'benign'"),
    ({"field_labels": {"benign_title": "Title 1", "adversarial_title": "Adversarial title"}},
     "field_labels['adversarial_title'] ('Adversarial title') names 'adversarial'"),
    ({"field_labels": {"benign_title": "Title 1", "adversarial_title": "Title 2 (textfooler)"}},
     "field_labels['adversarial_title'] ('Title 2 (textfooler)') names 'textfooler'"),
    ({"title": "Benign or not"}, "title ('Benign or not') names 'benign'"),
    ({"human_instruction": "Spot the PWWS title\nRead both."}, "the instruction's first line ('Spot the PWWS title') "
                                                              "names 'pwws'"),
])
def test_a_heading_that_names_a_group_or_condition_is_refused(change, words):
    with pytest.raises(StudySpecError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        study_create(slug="leaky", spec={**MEANING_LIKE, **change})
    assert not Study.objects.exists()


def test_a_spec_like_the_meaning_entry_without_labels_shows_neutral_headings():
    study = study_create(slug="neutral", spec=MEANING_LIKE)
    assert [study.field_label(name) for name in study.item_fields] == ["Title 1", "Title 2"]


@pytest.mark.parametrize(("method", "url", "body", "words"), [
    ("post", "/api/studies/", {"slug": "typo", "template": "story-likert", "raters_per_itme": 2},
     "unknown key 'raters_per_itme' in the request: no key is like it"),
    ("patch", "/api/studies/{slug}/", {"human_subst": {"share": 0.2}},
     "unknown key 'human_subst' in the request: did you mean 'human_subset'?"),
])
def test_the_api_refuses_an_unknown_key_beside_the_spec_too(researcher, method, url, body, words):
    # Issue 25 review: a misspelt key beside "template" was dropped without a word (201), and a misspelt
    # "human_subset" read "This field is required."
    study = study_create(slug="existing", spec=protocol_templates()["story-likert"], owner=researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    before = database_snapshot()
    response = getattr(api, method)(url.format(slug=study.slug), body, format="json")
    payload = response.json()
    assert response.status_code == 400 and payload["non_field_errors"][0].startswith(words), payload
    assert database_snapshot() == before
