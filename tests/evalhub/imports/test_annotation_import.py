"""import_annotations: annotator-keyed JSON ({annotator: {instance: label}}, {llm: {instance: label}}) into
a study's human raters and imported LLM pools; --create derives the study from the files. All or nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotations.models import HumanRating, Item, Question, Rater, Study
from annotations.studies import study_create
from llmjudge.models import Judge, JudgeRun, LLMRating

pytestmark = pytest.mark.django_db

HUMANS = {
    "ann-1": {"r1__food": "Positive", "r1__service": "Negative", "r2__food": "unknown"},
    "ann-2": {"r1__food": "Positive", "r2__food": "Negative"},
}
LLMS = {"gpt-4o": {"r1__food": "Positive", "r2__food": "Negative"}, "llama-31": {"r1__food": "Negative"}}


def write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def run(slug: str, humans: Path, llm: Path | None = None, *args: str) -> None:
    call_command("import_annotations", slug, "--humans", str(humans), *(["--llm", str(llm)] if llm else []), *args)


def counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Study, Question, Item, Rater, HumanRating, Judge, JudgeRun, LLMRating))


def test_create_makes_a_categorical_study_its_items_raters_and_one_pool_per_llm(tmp_path):
    run("aspects", write(tmp_path, "h.json", HUMANS), write(tmp_path, "l.json", LLMS), "--create", "--questions", "auto")

    study = Study.objects.get(slug="aspects")
    assert (study.kind, study.category_labels()) == ("categorical", ["Negative", "Positive", "unknown"])
    assert list(study.questions.values_list("key", flat=True)) == ["food", "service"]
    assert [(i.external_id, i.fields, i.group) for i in study.items.all()] == [
        ("r1", {"text": ""}, "imported"), ("r2", {"text": ""}, "imported")]
    assert set(study.raters.values_list("external_id", "source")) == {("ann-1", "imported"), ("ann-2", "imported")}
    humans = set(HumanRating.objects.values_list("rater__external_id", "item__external_id", "question__key", "score"))
    assert humans == {("ann-1", "r1", "food", 2.0), ("ann-1", "r1", "service", 1.0), ("ann-1", "r2", "food", 3.0),
                      ("ann-2", "r1", "food", 2.0), ("ann-2", "r2", "food", 1.0)}
    llm = set(LLMRating.objects.values_list("run__judge__name", "item__external_id", "question__key", "sample",
                                            "score", "status"))
    assert llm == {("gpt-4o", "r1", "food", 0, 2.0, "ok"), ("gpt-4o", "r2", "food", 0, 1.0, "ok"),
                   ("llama-31", "r1", "food", 0, 1.0, "ok")}
    assert set(Judge.objects.values_list("name", "backend")) == {("gpt-4o", "imported"), ("llama-31", "imported")}


def test_numeric_labels_make_a_likert_scale_from_the_smallest_to_the_largest(tmp_path):
    humans = {"a": {"x": 2, "y": 6}, "b": {"x": 0}}
    run("stars", write(tmp_path, "h.json", humans), None, "--create")
    study = Study.objects.get(slug="stars")
    assert (study.kind, study.scale_min, study.scale_max) == ("likert", 0, 6)
    assert list(study.questions.values_list("key", flat=True)) == ["label"]
    assert sorted(HumanRating.objects.values_list("item__external_id", "score")) == [("x", 0.0), ("x", 2.0),
                                                                                     ("y", 6.0)]


def test_an_llm_label_list_is_one_sample_per_label(tmp_path):
    run("samples", write(tmp_path, "h.json", {"a": {"x": 1, "y": 5}}),
        write(tmp_path, "l.json", {"m": {"x": [1, 2, 2], "y": 4}}), "--create")
    assert sorted(LLMRating.objects.values_list("item__external_id", "sample", "score")) == [
        ("x", 0, 1.0), ("x", 1, 2.0), ("x", 2, 2.0), ("y", 0, 4.0)]


@pytest.fixture
def two_questions(researcher):
    spec = {"title": "t", "kind": "categorical", "item_fields": ["review"], "llm_template": "{review}\n{question}",
            "scale": {"labels": ["Positive", "Negative", "unknown"]},
            "questions": [{"key": "food", "text": "Food?"}, {"key": "service", "text": "Service?"}]}
    study = study_create(slug="two", spec=spec, owner=researcher)
    for n, name in enumerate(["r1", "r2", "r1__x"]):
        Item.objects.create(study=study, external_id=name, group="g", position=n, fields={"review": "text"})
    return study


def test_an_id_item__question_maps_to_that_item_and_question_of_an_existing_study(tmp_path, two_questions):
    run("two", write(tmp_path, "h.json", HUMANS))
    assert HumanRating.objects.filter(item__external_id="r1", question__key="service").count() == 1
    assert HumanRating.objects.filter(item__study=two_questions).count() == 5
    # The existing study's own label order decides the codes: Positive = 1, Negative = 2, unknown = 3.
    assert HumanRating.objects.get(rater__external_id="ann-1", item__external_id="r2").score == 3.0


def test_an_id_without_a_question_is_the_item_of_a_study_with_one_question(tmp_path, researcher):
    spec = {"title": "t", "item_fields": ["text"], "llm_template": "{text}\n{question}", "scale": {"min": 1, "max": 5},
            "questions": [{"key": "quality", "text": "Quality?"}]}
    study = study_create(slug="one", spec=spec, owner=researcher)
    for n, name in enumerate(["a__b", "c"]):
        Item.objects.create(study=study, external_id=name, group="g", position=n, fields={"text": "t"})
    run("one", write(tmp_path, "h.json", {"h": {"a__b": 4, "c": 2}}))
    assert sorted(HumanRating.objects.values_list("item__external_id", "question__key", "score")) == [
        ("a__b", "quality", 4.0), ("c", "quality", 2.0)]


def test_an_id_naming_no_question_of_a_study_with_several_is_refused(tmp_path, two_questions):
    before = counts()
    with pytest.raises(CommandError, match=r"annotator 'h', instance 'r1': the id names none of the study's "
                                           r"questions \(food, service\)"):
        run("two", write(tmp_path, "h.json", {"h": {"r1__food": "Positive", "r1": "Negative"}}))
    assert counts() == before


def test_without_create_an_unknown_item_is_an_error_naming_annotator_and_instance(tmp_path, two_questions):
    before = counts()
    with pytest.raises(CommandError) as caught:
        run("two", write(tmp_path, "h.json", {"h": {"r1__food": "Positive", "r9__food": "Negative"}}))
    assert "annotator 'h', instance 'r9__food': unknown item 'r9' in study 'two'" in str(caught.value)
    assert str(caught.value).endswith("nothing was imported")
    assert counts() == before


BAD = [
    # (humans file, llm file, extra arguments, message)
    ("{not json", None, ["--create"], "not JSON (Expecting property name"),
    ([1, 2], None, ["--create"], "expected an object {annotator: {instance: label}}"),
    ({}, None, ["--create"], "no annotators"),
    ({"a": [1, 2]}, None, ["--create"], "annotator 'a': expected an object"),
    ({"a": {}}, None, ["--create"], "annotator 'a' has no labels"),
    ({"a": {"x": [1, 2]}}, None, ["--create"], "annotator 'a', instance 'x': label a list is not a string or a finite"),
    ({"a": {"x": None}}, None, ["--create"], "annotator 'a', instance 'x': label None is not a string"),
    ({"a": {"x": {"v": 1}}}, None, ["--create"], "annotator 'a', instance 'x': label an object is not a string"),
    ({"a": {"x": 1, "y": 2}}, {"m": {"x": {"v": 1}}}, ["--create"], "LLM 'm', instance 'x': label an object is not"),
    ({"a": {"x": 1, "y": 2}}, {"m": {"x": [1, [2]]}}, ["--create"], "LLM 'm', instance 'x': label a list is not"),
    ({"a": {"x": True, "y": 2}}, None, ["--create"], "annotator 'a', instance 'x': label True is not a string"),
    ('{"a": {"x": NaN, "y": 2}}', None, ["--create"], "instance 'x': label nan is not a string or a finite"),
    ('{"a": {"x": 1}, "a": {"y": 2}}', None, ["--create"], "annotator 'a' appears twice"),
    ('{"a": {"x": 1, "x": 2}}', None, ["--create"], "annotator 'a', instance 'x' appears twice"),
    ({"a": {"x": 1, "y": "Positive"}}, None, ["--create"], "annotator 'a', instance 'x': label 1 is a number, but"),
    ({"a": {"x": 3, "y": 3}}, None, ["--create"], "every label is 3: a scale needs at least two values"),
    ({"a": {"x": 1, "y": 2}}, {"human": {"x": 1}}, ["--create"], "LLM 'human': the name is the human pool's"),
    ({"a": {"x": 1, "y": 2}}, {"m": {"x": []}}, ["--create"], "LLM 'm', instance 'x': an empty list of samples"),
    ({"a": {"x__q": 1, "y": 2}}, None, ["--create", "--questions", "auto"], "instance 'y': --questions auto needs"),
    ({"a": {"x": 1, "y": 2}}, None, ["--create", "--questions", "a b"], "question 'a b' must be letters"),
    ({"a": {"x": 1, "y": 2}}, None, [], "no study 'new'; create it first, or pass --create"),
]


@pytest.mark.parametrize(("humans", "llm", "args", "message"), BAD)
def test_bad_files_are_refused_with_one_line_and_change_nothing(tmp_path, humans, llm, args, message):
    before = counts()
    with pytest.raises(CommandError) as caught:
        run("new", write(tmp_path, "h.json", humans), write(tmp_path, "l.json", llm) if llm else None, *args)
    text = str(caught.value)
    assert message in text and "\n" not in text and text.endswith("nothing was imported")
    assert counts() == before


@pytest.mark.parametrize(("humans", "message"), [
    ({"h": {"r1__food": "Neutral"}}, "annotator 'h', instance 'r1__food': label 'Neutral' is not one of the study's "
                                     "labels (Positive, Negative, unknown)"),
    ({"h": {"r1__food": 2}}, "annotator 'h', instance 'r1__food': label 2 is a number; the study's labels are"),
    ({"h": {"r1__food": "Positive", "r1__x__food": "Negative", "r1__x": "Positive"}},
     "instance 'r1__x': the id names none of the study's questions"),
])
def test_labels_the_existing_study_cannot_hold_are_refused(tmp_path, two_questions, humans, message):
    before = counts()
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run("two", write(tmp_path, "h.json", humans))
    assert counts() == before


def test_labels_off_a_likert_scale_are_refused(tmp_path, story_study):
    Item.objects.create(study=story_study, external_id="s1", group="human", fields={"story": "s", "prompt": "p"})
    before = counts()
    with pytest.raises(CommandError, match="annotator 'h', instance 's1__grammaticality': label 6 is outside the "
                                           "scale 1-5"):
        run(story_study.slug, write(tmp_path, "h.json", {"h": {"s1__grammaticality": 6}}))
    with pytest.raises(CommandError, match="label 'good' is not a number"):
        run(story_study.slug, write(tmp_path, "h.json", {"h": {"s1__grammaticality": "good"}}))
    assert counts() == before


def test_create_refuses_an_existing_study(tmp_path, two_questions):
    before = counts()
    with pytest.raises(CommandError, match="study 'two' already exists; leave out --create"):
        run("two", write(tmp_path, "h.json", HUMANS), None, "--create")
    assert counts() == before


def test_two_ids_of_one_item_and_question_are_a_duplicate(tmp_path, researcher):
    spec = {"title": "t", "item_fields": ["text"], "llm_template": "{text}\n{question}", "scale": {"min": 1, "max": 5},
            "questions": [{"key": "q", "text": "Q?"}]}
    study = study_create(slug="dup", spec=spec, owner=researcher)
    Item.objects.create(study=study, external_id="x", group="g", fields={"text": "t"})
    before = counts()
    with pytest.raises(CommandError, match="annotator 'h', instance 'x': item 'x', question 'q' is also instance "
                                           "'x__q'"):
        run("dup", write(tmp_path, "h.json", {"h": {"x__q": 1, "x": 2}}))
    assert counts() == before


def test_a_failure_while_writing_rolls_back_the_created_study_and_everything_else(tmp_path, make_judge_named_gpt4o):
    # The LLM pool's name is a live judge's of the study's owner (names are unique per owner): refused by the
    # pool writer, after the study, items and human ratings were written in the same transaction.
    before = counts()
    with pytest.raises(CommandError, match="pool 'gpt-4o' is the name of one of the study owner's live judges"):
        run("aspects", write(tmp_path, "h.json", HUMANS), write(tmp_path, "l.json", LLMS), "--create",
            "--questions", "auto", "--owner", "owner")
    assert counts() == before


@pytest.fixture
def make_judge_named_gpt4o(researcher):
    return Judge.objects.create(name="gpt-4o", owner=researcher, backend=Judge.Backend.FAKE, model="m")


def test_importing_the_same_ratings_twice_is_refused_and_changes_nothing(tmp_path, two_questions):
    path = write(tmp_path, "h.json", HUMANS)
    run("two", path)
    before = counts()
    with pytest.raises(CommandError, match="rater 'ann-1' already rated item"):
        run("two", path)
    assert counts() == before
