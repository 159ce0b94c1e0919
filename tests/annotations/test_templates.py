"""The protocol templates reproduce ../shared/protocols/chiang-lee-2023.json character for character."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Item, Study
from annotations.rendering import llm_prompt, rater_page
from annotations.studies import PROTOCOL_FILE, StudySpecError, study_create, study_create_from_template
from tests.conftest import shared_path

TEMPLATES = ["story-likert", "adversarial-fluency", "adversarial-meaning"]


def _protocol() -> dict[str, dict]:
    data = json.loads(shared_path("protocols", "chiang-lee-2023.json").read_text(encoding="utf-8"))
    return {entry["slug"]: entry for entry in data["studies"]}


def test_the_project_copy_of_the_protocol_file_is_identical_to_the_shared_one():
    assert PROTOCOL_FILE.read_bytes() == shared_path("protocols", "chiang-lee-2023.json").read_bytes()


@pytest.mark.parametrize("template", TEMPLATES)
def test_template_texts_match_the_protocol_character_for_character(db, template):
    entry = _protocol()[template]
    call_command("create_study", f"s-{template}", "--template", template)
    study = Study.objects.get(slug=f"s-{template}")
    assert study.llm_template == entry["llm_template"]
    assert study.instruction == entry.get("human_instruction", entry["llm_template"].split("\n")[0])
    assert study.item_fields == entry["item_fields"]
    assert study.groups == entry["groups"]
    assert (study.scale_min, study.scale_max) == (entry["scale"]["min"], entry["scale"]["max"])
    assert study.scale_labels == entry["scale"]["labels"]
    got = [(q.key, q.text, q.context, q.reveals) for q in study.questions.order_by("order")]
    want = [(q["key"], q["text"], q.get("context", ""), q.get("reveals", "")) for q in entry["questions"]]
    assert got == want


def test_story_relevance_prompt_is_the_papers_query_exactly(story_study):
    item = Item.objects.create(study=story_study, external_id="1", group="human",
                               fields={"story": "Once upon a time.", "prompt": "Write about time."})
    relevance = story_study.questions.get(key="relevance")
    assert llm_prompt(study=story_study, item=item, question=relevance) == (
        "Please rate the story fragment\n"
        "The goal of this task is to rate story fragment.\n"
        "Note: Please take the time to fully read and understand the story fragment. We will reject submissions"
        " from workers that are clearly spamming the task.\n"
        "Story fragment:\nOnce upon a time.\n(End of story fragment)\n"
        "Now read the PROMPT based on which the story fragment was written.\n"
        "Prompt: Write about time.\n(End of prompt)\n"
        "How relevant is the story fragment to the prompt? (on a scale of 1-5, with 1 being the lowest)"
    )
    grammar = story_study.questions.get(key="grammaticality")
    assert llm_prompt(study=story_study, item=item, question=grammar).endswith(
        "(End of story fragment)\nHow grammatically correct is the text of the story fragment?"
        " (on a scale of 1-5, with 1 being the lowest)"
    )


def test_story_rater_page_hides_the_prompt_until_the_relevance_question(story_study):
    item = Item.objects.create(study=story_study, external_id="1", group="human",
                               fields={"story": "A story.", "prompt": "SECRET PROMPT"})
    page = rater_page(study=story_study, item=item, questions=list(story_study.questions.all()))
    assert page.fields == {"story": "A story."}
    assert [q.key for q in page.questions] == ["grammaticality", "cohesiveness", "likability", "relevance"]
    assert [bool(q.context) for q in page.questions] == [False, False, False, True]
    assert "SECRET PROMPT" in page.questions[3].context


def test_meaning_template_keeps_the_strongly_agree_labels(meaning_study):
    assert meaning_study.label_for(1) == "1 (strongly disagree)"
    assert meaning_study.label_for(5) == "5 (strongly agree)"
    assert meaning_study.label_for(3) == "3"


def test_custom_study_from_a_json_file(db, tmp_path: Path):
    spec = {"title": "Summaries", "groups": ["a", "b"], "item_fields": ["summary"],
            "llm_template": "Read:\n{summary}\n{question}", "scale": {"min": 1, "max": 7, "labels": {}},
            "questions": [{"key": "fluency", "text": "How fluent? (1-7)"}], "ordering": "fixed"}
    path = tmp_path / "study.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    call_command("create_study", "summaries", "--file", str(path))
    study = Study.objects.get(slug="summaries")
    assert (study.scale_max, study.ordering, study.instruction) == (7, "fixed", "Read:")
    assert list(study.questions.values_list("key", flat=True)) == ["fluency"]


BAD_SPECS = [
    ({"title": "t"}, "missing key 'item_fields'"),
    ({"item_fields": []}, "item_fields must be a non-empty list"),
    ({"llm_template": "{story} {nope} {question}"}, "unknown placeholders ['nope']"),
    ({"llm_template": "{story}"}, "must contain {question}"),
    ({"scale": {"min": 5, "max": 1}}, "scale min must be below max"),
    ({"scale": {"min": "1", "max": 5}}, "integer min and max"),
    ({"questions": []}, "questions must be a non-empty list"),
    ({"questions": [{"key": "a", "text": "x"}, {"key": "a", "text": "y"}]}, "appears twice"),
    ({"questions": [{"key": "a", "text": "x", "reveals": "ghost"}]}, "reveals unknown field 'ghost'"),
    ({"questions": [{"key": "a", "text": "x", "context": "{ghost}"}]}, "unknown fields ['ghost']"),
    ({"ordering": "sideways"}, "ordering must be one of"),
    ({"llm_template": "{story {question}"}, "not a valid template"),
    # Plain {name} placeholders only: a format spec would build megabytes from a 130-byte spec.
    ({"llm_template": "{story}\n{question:>20000000}"}, "placeholder '{question:>20000000}' is not a plain {name}"),
    ({"llm_template": "{story!r}\n{question}"}, "placeholder '{story!r}' is not a plain {name}"),
    ({"llm_template": "{story.__class__}\n{question}"}, "placeholder '{story.__class__}' is not a plain {name}"),
    ({"llm_template": "{story[0]}\n{question}"}, "placeholder '{story[0]}' is not a plain {name}"),
    ({"llm_template": "{}\n{question}"}, "placeholder '{}' is not a plain {name}"),
    ({"llm_template": "{0}\n{question}"}, "placeholder '{0}' is not a plain {name}"),
    ({"questions": [{"key": "a", "text": "x", "context": "{story:>999999}"}]},
     "question 'a': context: placeholder '{story:>999999}' is not a plain {name}"),
]


@pytest.mark.parametrize(("change", "message"), BAD_SPECS)
def test_bad_study_specifications_are_refused_with_a_reason_and_create_nothing(db, change, message):
    spec = {"title": "t", "item_fields": ["story"], "llm_template": "{story}\n{question}",
            "scale": {"min": 1, "max": 5}, "questions": [{"key": "q", "text": "Q?"}], **change}
    if change == {"title": "t"}:
        del spec["item_fields"]
    with pytest.raises(StudySpecError, match=re.escape(message)):
        study_create(slug="bad", spec=spec)
    assert not Study.objects.exists()


def test_create_study_command_reports_unknown_templates_and_duplicate_slugs(db):
    with pytest.raises(CommandError):
        call_command("create_study", "x", "--template", "nope")
    study_create_from_template(slug="dup", template="story-likert")
    with pytest.raises(CommandError, match="slug 'dup' is not available"):
        call_command("create_study", "dup", "--template", "story-likert")
    assert Study.objects.count() == 1
