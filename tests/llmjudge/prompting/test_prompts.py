"""Judges read what raters read: prompts come from the rendering function the rater page uses."""
from __future__ import annotations

import json

import pytest

from annotations.models import Item
from annotations.rendering import llm_prompt, rater_page
from llmjudge.parsing import PARSER_VERSION
from llmjudge.prompting.study_prompt import chat_turn_texts, judge_prompts, template_version, variant_affixes
from llmjudge.runs.config import JudgeConfig

PROTOCOL = json.loads(open("annotations/protocols/chiang-lee-2023.json", encoding="utf-8").read())
PERSONA = "(You are a human worker hired to rate the story fragment.)\n"
EXPLAIN = " Please also explain your decision."


def _config(**kwargs) -> JudgeConfig:
    return JudgeConfig(judge_id=1, name="j", kind="plain", backend="fake", model="m", **kwargs)


def _rater_texts(study, item, questions):
    """Every text a rater reads for ``item``, paired with the question whose prompt must hold it."""
    page = rater_page(study=study, item=item, questions=questions)
    texts = []
    for question, shown in zip(questions, page.questions, strict=True):
        texts += [(question, shown.text), (question, shown.context)]
        texts += [(question, value) for value in page.fields.values()]
    return page, [(q, t) for q, t in texts if t]


@pytest.mark.django_db
@pytest.mark.parametrize("variant", ["original", "persona", "explain"])
def test_every_text_a_rater_reads_appears_verbatim_in_the_judges_prompt(story_with_items, variant):
    questions = list(story_with_items.questions.order_by("order"))
    for item in story_with_items.items.all():
        prompts = dict(zip(questions, judge_prompts(
            study=story_with_items, config=_config(variant=variant), item=item, questions=questions
        ), strict=True))
        page, texts = _rater_texts(story_with_items, item, questions)
        for question, text in texts:
            assert text in prompts[question], (item.external_id, question.key, text)
        for prompt in prompts.values():
            # The paper capitalises "NOTE:" for humans and writes "Note:" to the LLM; nothing else differs.
            assert page.instruction.lower() in prompt.lower()
            assert page.instruction.replace("NOTE:", "Note:") in prompt


@pytest.mark.django_db
def test_the_story_prompt_is_revealed_only_at_the_relevance_question(story_with_items):
    questions = list(story_with_items.questions.order_by("order"))
    item = story_with_items.items.get(external_id="s1")
    prompts = judge_prompts(study=story_with_items, config=_config(), item=item, questions=questions)
    assert [item.fields["prompt"] in p for p in prompts] == [False, False, False, True]


@pytest.mark.django_db
def test_adversarial_rater_texts_appear_verbatim_including_the_instruction(meaning_study):
    item = Item.objects.create(
        study=meaning_study, external_id="m1", group="bae",
        fields={"benign_title": "Stocks rise on Friday", "adversarial_title": "Stocks climb on Friday"},
    )
    questions = list(meaning_study.questions.all())
    (prompt,) = judge_prompts(study=meaning_study, config=_config(), item=item, questions=questions)
    page, texts = _rater_texts(meaning_study, item, questions)
    assert page.instruction in prompt
    for _, text in texts:
        assert text in prompt


@pytest.mark.django_db
def test_original_prompt_is_the_protocols_llm_query_exactly(story_with_items):
    questions = list(story_with_items.questions.order_by("order"))
    item = story_with_items.items.get(external_id="s1")
    prompts = judge_prompts(study=story_with_items, config=_config(), item=item, questions=questions)
    assert prompts[0] == (
        "Please rate the story fragment\n"
        "The goal of this task is to rate story fragment.\n"
        "Note: Please take the time to fully read and understand the story fragment. "
        "We will reject submissions from workers that are clearly spamming the task.\n"
        "Story fragment:\n"
        "The lighthouse keeper counted the ships. None came back.\n"
        "(End of story fragment)\n"
        "How grammatically correct is the text of the story fragment? (on a scale of 1-5, with 1 being the lowest)"
    )
    assert prompts[3].endswith(
        "(End of story fragment)\n"
        "Now read the PROMPT based on which the story fragment was written.\n"
        "Prompt: Write about a lighthouse.\n"
        "(End of prompt)\n"
        "How relevant is the story fragment to the prompt? (on a scale of 1-5, with 1 being the lowest)"
    )
    assert prompts == [llm_prompt(study=story_with_items, item=item, question=q) for q in questions]


@pytest.mark.django_db
def test_persona_variant_prepends_the_protocols_sentence_and_changes_nothing_else(story_with_items):
    questions = list(story_with_items.questions.order_by("order"))
    item = story_with_items.items.first()
    original = judge_prompts(study=story_with_items, config=_config(), item=item, questions=questions)
    persona = judge_prompts(study=story_with_items, config=_config(variant="persona"), item=item, questions=questions)
    assert PROTOCOL["variants"]["persona"]["instruction_prefix"] == PERSONA
    assert persona == [PERSONA + p for p in original]


@pytest.mark.django_db
def test_explain_variant_appends_the_request_right_after_the_question(story_with_items):
    questions = list(story_with_items.questions.order_by("order"))
    item = story_with_items.items.first()
    original = judge_prompts(study=story_with_items, config=_config(), item=item, questions=questions)
    explain = judge_prompts(study=story_with_items, config=_config(variant="explain"), item=item, questions=questions)
    assert explain == [p + EXPLAIN for p in original]
    assert explain[1].endswith("with 1 being the lowest) Please also explain your decision.")


def test_custom_variant_uses_the_judges_own_prefix_and_suffix():
    config = _config(variant="custom", instruction_prefix="You are strict.\n", question_suffix=" Answer with a digit.")
    assert variant_affixes(config) == ("You are strict.\n", " Answer with a digit.")
    assert variant_affixes(_config(variant="explain")) == ("", EXPLAIN)


@pytest.mark.django_db
def test_chat_turns_ask_the_instruction_and_story_once_then_only_what_is_new(story_with_items):
    questions = list(story_with_items.questions.order_by("order"))
    item = story_with_items.items.get(external_id="s1")
    prompts = judge_prompts(study=story_with_items, config=_config(variant="explain"), item=item, questions=questions)
    turns = chat_turn_texts(prompts)
    assert turns[0] == prompts[0]
    assert turns[1] == questions[1].text + EXPLAIN
    assert turns[2] == questions[2].text + EXPLAIN
    assert turns[3] == (
        "Now read the PROMPT based on which the story fragment was written.\n"
        "Prompt: Write about a lighthouse.\n(End of prompt)\n" + questions[3].text + EXPLAIN
    )
    # Nothing a rater reads is lost: the conversation's user turns together hold every prompt's lines.
    conversation = "\n".join(turns)
    for prompt in prompts:
        assert all(line in conversation for line in prompt.split("\n"))


def test_template_version_names_the_parser_version(story_study):
    version = template_version(story_study)
    assert version.startswith(story_study.template_version)
    assert version.endswith(f"+parser{PARSER_VERSION}")


@pytest.mark.django_db
def test_a_kind_judge_reads_each_field_under_the_label_the_rater_reads(story_study):
    from annotations.rendering import display_fields
    from llmjudge.kinds.common.items import item_text

    story_study.item_fields = ["response_a", "response_b"]
    story_study.save()
    item = Item.objects.create(study=story_study, external_id="p1", fields={"response_a": "One.", "response_b": "Two."})
    questions = [q for q in story_study.questions.all() if not q.context]  # the story study's context needs {prompt}
    labels = [f.label for f in display_fields(study=story_study, page=rater_page(study=story_study, item=item, questions=questions))]
    assert labels == ["Response A", "Response B"]  # neutral headings (annotations.models.neutral_field_labels)
    assert item_text(story_study, item) == "Response A: One.\n\nResponse B: Two."


def test_the_plain_judge_reads_the_rating_of_the_question_asked_and_the_studys_label_words(story_study, meaning_study):
    from llmjudge.prompting.study_prompt import study_parser

    relevance = story_study.questions.get(key="relevance")
    answer = "The text is fluent (5/5) but it ignores the prompt entirely. Relevance: 1"
    parsed = study_parser(story_study, relevance)(answer)
    assert (parsed.score, parsed.status) == (1.0, "ok")
    meaning = meaning_study.questions.get(key="meaning")
    label = meaning_study.scale_labels.get("5")
    assert label, "the meaning study labels its scale"
    parsed = study_parser(meaning_study, meaning)(f"I would answer: {label}.")
    assert (parsed.score, parsed.status) == (5.0, "ok")
