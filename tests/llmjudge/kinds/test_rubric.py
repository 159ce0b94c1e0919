"""Rubric (Prometheus) judge: prompts equal the published templates character for character, the
rubric validates with clear messages, and the parsers read real Prometheus outputs."""

from __future__ import annotations

import pytest

from llmjudge.kinds.rubric import prompts as rb
from llmjudge.parsing import OK, REFUSED, UNPARSEABLE, ParsedChoice, ParsedScore

# Transcribed from prometheus-eval, libs/prometheus-eval/prometheus_eval/prompts.py (Prometheus 2,
# ABSOLUTE_PROMPT, ABSOLUTE_PROMPT_WO_REF, RELATIVE_PROMPT, RELATIVE_PROMPT_WO_REF, SCORE_RUBRIC_TEMPLATE).
PE_ABSOLUTE = """###Task Description:
An instruction (might include an Input inside it), a response to evaluate, a reference answer that gets a score of 5, and a score rubric representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of the response strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, write a score that is an integer between 1 and 5. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"
4. Please do not generate any other opening, closing, and explanations.

###The instruction to evaluate:
{instruction}

###Response to evaluate:
{response}

###Reference Answer (Score 5):
{reference_answer}

###Score Rubrics:
{rubric}

###Feedback: """

PE_ABSOLUTE_WO_REF = """###Task Description:
An instruction (might include an Input inside it), a response to evaluate, and a score rubric representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of the response strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, write a score that is an integer between 1 and 5. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"
4. Please do not generate any other opening, closing, and explanations.

###The instruction to evaluate:
{instruction}

###Response to evaluate:
{response}

###Score Rubrics:
{rubric}

###Feedback: """

PE_RELATIVE = """###Task Description:
An instruction (might include an Input inside it), a response to evaluate, a reference answer, and a score rubric representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of two responses strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, choose a better response between Response A and Response B. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (A or B)"
4. Please do not generate any other opening, closing, and explanations.

###Instruction:
{instruction}

###Response A:
{response_A}

###Response B:
{response_B}

###Reference Answer:
{reference_answer}

###Score Rubric:
{rubric}

###Feedback: """

PE_RELATIVE_WO_REF = """###Task Description:
An instruction (might include an Input inside it), a response to evaluate, and a score rubric representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of two responses strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, choose a better response between Response A and Response B. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (A or B)"
4. Please do not generate any other opening, closing, and explanations.

###Instruction:
{instruction}

###Response A:
{response_A}

###Response B:
{response_B}

###Score Rubric:
{rubric}

###Feedback: """

PE_SCORE_RUBRIC_TEMPLATE = """
[{criteria}]
Score 1: {score1_description}
Score 2: {score2_description}
Score 3: {score3_description}
Score 4: {score4_description}
Score 5: {score5_description}
""".strip()

# Prometheus 1 (the seed paper's appendix "Prompt for Prometheus" and the v1 model cards): the same
# text as Prometheus 2's except the output-format line, which starts with "Feedback: ".
P1_FORMAT_LINE = '3. The output format should look as follows: "Feedback: (write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"'
P2_FORMAT_LINE = '3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"'

PE_ABS_SYSTEM = "You are a fair judge assistant tasked with providing clear, objective feedback based on specific criteria, ensuring each assessment reflects the absolute standards set for performance."
PE_REL_SYSTEM = "You are a fair judge assistant assigned to deliver insightful feedback that compares individual performances, highlighting how each stands relative to others within the same cohort."

COHESION = {
    "criteria": "How well do the sentences in the story fragment fit together?",
    "score1_description": "The sentences are unrelated; no sequence of events can be followed.",
    "score2_description": "A few sentences connect, but most jumps are unexplained.",
    "score3_description": "The story can be followed, with some abrupt or contradictory transitions.",
    "score4_description": "The sentences fit together, with at most one weak transition.",
    "score5_description": "Every sentence follows from the one before; the fragment reads as one piece.",
}
RUBRIC = rb.Rubric.from_json(COHESION)
STORY = "Marta still climbs the hundred and twelve steps each evening. {braces stay}"
PROMPT = "A lighthouse keeper realises the ships stopped coming years ago, but the light must stay on."


def test_rubric_text_equals_prometheus_eval_score_rubric_template():
    assert RUBRIC.absolute_text() == PE_SCORE_RUBRIC_TEMPLATE.format(**COHESION)
    assert RUBRIC.relative_text() == PE_SCORE_RUBRIC_TEMPLATE.format(**COHESION).split("\n")[0]


def test_absolute_v2_with_reference_equals_prometheus_eval_character_for_character():
    got = rb.absolute_prompt(instruction=PROMPT, response=STORY, rubric=RUBRIC, reference_answer="Ref.", version="v2")
    assert got == PE_ABSOLUTE.format(instruction=PROMPT, response=STORY, reference_answer="Ref.", rubric=RUBRIC.absolute_text())


def test_absolute_v2_without_reference_equals_prometheus_eval_wo_ref():
    got = rb.absolute_prompt(instruction=PROMPT, response=STORY, rubric=RUBRIC, reference_answer=None, version="v2")
    assert got == PE_ABSOLUTE_WO_REF.format(instruction=PROMPT, response=STORY, rubric=RUBRIC.absolute_text())
    assert "None" not in got and "Reference Answer" not in got


def test_absolute_v1_is_the_paper_prompt_whose_format_line_starts_with_feedback():
    got = rb.absolute_prompt(instruction=PROMPT, response=STORY, rubric=RUBRIC, reference_answer="Ref.")
    expected = PE_ABSOLUTE.replace(P2_FORMAT_LINE, P1_FORMAT_LINE).format(
        instruction=PROMPT, response=STORY, reference_answer="Ref.", rubric=RUBRIC.absolute_text()
    )
    assert got == expected
    got_noref = rb.absolute_prompt(instruction=PROMPT, response=STORY, rubric=RUBRIC, reference_answer=None, version="v1")
    assert got_noref == PE_ABSOLUTE_WO_REF.replace(P2_FORMAT_LINE, P1_FORMAT_LINE).format(
        instruction=PROMPT, response=STORY, rubric=RUBRIC.absolute_text()
    )


def test_absolute_prompt_has_the_papers_sections_in_order():
    got = rb.absolute_prompt(instruction=PROMPT, response=STORY, rubric=RUBRIC, reference_answer="Ref.")
    sections = [
        "###Task Description:",
        "###The instruction to evaluate:",
        "###Response to evaluate:",
        "###Reference Answer (Score 5):",
        "###Score Rubrics:",
        "###Feedback: ",
    ]
    positions = [got.index(s) for s in sections]
    assert positions == sorted(positions)
    assert got.endswith("###Feedback: ")
    assert "[How well do the sentences in the story fragment fit together?]\nScore 1: " in got


def test_relative_prompts_equal_prometheus_eval():
    got = rb.relative_prompt(instruction=PROMPT, response_a="A story", response_b="B story", rubric=RUBRIC, reference_answer="Ref.")
    assert got == PE_RELATIVE.format(
        instruction=PROMPT, response_A="A story", response_B="B story", reference_answer="Ref.", rubric=RUBRIC.relative_text()
    )
    got = rb.relative_prompt(instruction=PROMPT, response_a="A story", response_b="B story", rubric=RUBRIC, reference_answer=None)
    assert got == PE_RELATIVE_WO_REF.format(
        instruction=PROMPT, response_A="A story", response_B="B story", rubric=RUBRIC.relative_text()
    )
    assert "Score 1:" not in got


def test_system_prompts_equal_prometheus_eval():
    assert rb.system_prompt("absolute") == PE_ABS_SYSTEM
    assert rb.system_prompt("relative") == PE_REL_SYSTEM
    with pytest.raises(ValueError, match="'absolute' or 'relative'"):
        rb.system_prompt("pairwise")


def test_unknown_template_versions_are_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown absolute template version 'v9' \(known: v1, v2\)"):
        rb.absolute_prompt(instruction="i", response="r", rubric=RUBRIC, reference_answer=None, version="v9")
    with pytest.raises(ValueError, match=r"unknown relative template version 'v1' \(known: v2\)"):
        rb.relative_prompt(instruction="i", response_a="a", response_b="b", rubric=RUBRIC, reference_answer=None, version="v1")


def test_rubric_from_json_accepts_the_scores_shape_and_a_default_criteria():
    r = rb.Rubric.from_json({"scores": {"1": "bad", "2": "weak", "3": "ok", "4": "good", "5": "great"}}, default_criteria="Q?")
    assert r == rb.Rubric(criteria="Q?", descriptions=("bad", "weak", "ok", "good", "great"))
    assert rb.Rubric.from_json(r.to_json()) == r


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "rubric must be a JSON object, got list"),
        ({"criteria": "C", "score1_description": "a"}, "rubric is missing score2_description, score3_description, score4_description, score5_description"),
        ({"criteria": "C", "scores": {"1": "a", "2": "b", "3": "c", "4": "d"}}, r"exactly the keys 1..5; missing \['5'\], unexpected \[\]"),
        ({"criteria": "C", "scores": {"0": "z", "1": "a", "2": "b", "3": "c", "4": "d", "5": "e"}}, r"unexpected \['0'\]"),
        ({"scores": {"1": "a", "2": "b", "3": "c", "4": "d", "5": "e"}}, "criteria must be a non-empty text"),
        ({"criteria": "C", "scores": {"1": "a", "2": " ", "3": "c", "4": "d", "5": "e"}}, "description for score 2 must be a non-empty text"),
        ({"criteria": "C", "scores": {"1": "a", "2": 2, "3": "c", "4": "d", "5": "e"}}, "description for score 2 must be a text"),
        ({"criteria": 3, "scores": {}}, "'criteria' must be a text"),
    ],
)
def test_invalid_rubrics_fail_with_a_clear_message(data, message):
    with pytest.raises(ValueError, match=message):
        rb.Rubric.from_json(data)


def test_item_mapping_for_the_story_study_and_its_errors():
    fields = {"prompt": PROMPT, "story": STORY, "ref": "  "}
    assert rb.ItemMapping().apply(fields) == (PROMPT, STORY, None)
    mapping = rb.ItemMapping.from_options({"instruction": "Write a story: {prompt}", "reference_field": "ref"})
    assert mapping.apply(fields) == ("Write a story: " + PROMPT, STORY, None)
    assert mapping.apply({**fields, "ref": "Gold."}) == ("Write a story: " + PROMPT, STORY, "Gold.")
    with pytest.raises(ValueError, match="uses item field 'prompt', which the item lacks \\(it has title\\)"):
        rb.ItemMapping().apply({"title": "x"})
    with pytest.raises(ValueError, match="option 'response' must be a text"):
        rb.ItemMapping.from_options({"response": 3})


def test_rubric_judge_needs_a_one_to_five_scale():
    rb.check_study_scale((1, 5))
    with pytest.raises(ValueError, match="needs a 1-5 study scale, this study's is 1-7"):
        rb.check_study_scale((1, 7))


PROMETHEUS2_ABS = (
    "The response follows the prompt closely and the sentences are ordered logically. However, the "
    "second paragraph introduces a character who is never mentioned again, which creates a small gap. "
    "Overall the fragment is cohesive with one weak transition. [RESULT] 4"
)
PROMETHEUS1_ABS = (
    "Feedback: The story fragment jumps from the phone to the lake without any link, and the mother's "
    "call about the weather is unrelated to the 3 a.m. messages. So the overall score is 2. [RESULT] 2"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PROMETHEUS2_ABS, ParsedScore(4.0, OK, PROMETHEUS2_ABS.split(" [RESULT]")[0])),
        (
            PROMETHEUS1_ABS,
            ParsedScore(
                2.0,
                OK,
                "The story fragment jumps from the phone to the lake without any link, and the mother's call "
                "about the weather is unrelated to the 3 a.m. messages. So the overall score is 2.",
            ),
        ),
        ("Feedback: Clear and vivid.\n[RESULT] (5)", ParsedScore(5.0, OK, "Clear and vivid.")),
        ("Feedback: Weak. [RESULT] 4/5", ParsedScore(4.0, OK, "Weak.")),
        ("Feedback: Rambling answer. [RESULT]", ParsedScore(None, UNPARSEABLE, "Rambling answer.", reason="no verdict")),
        ("Feedback: Good story. [RESULT] 7", ParsedScore(None, UNPARSEABLE, "Good story.", reason="out of scale")),
        ("The response is coherent. Score: 3", ParsedScore(3.0, OK, "The response is coherent. Score: 3")),
        ("", ParsedScore(None, UNPARSEABLE, "", reason="empty")),
        (
            "I'm sorry, but I cannot evaluate this content.",
            ParsedScore(None, REFUSED, "I'm sorry, but I cannot evaluate this content."),
        ),
    ],
)
def test_parse_absolute_reads_real_prometheus_answers(text, expected):
    assert rb.parse_absolute(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Response A keeps the lighthouse image throughout while Response B drifts. [RESULT] A",
            ParsedChoice("A", OK, "Response A keeps the lighthouse image throughout while Response B drifts."),
        ),
        ("Feedback: Both are fluent; B is tighter. [RESULT] B", ParsedChoice("B", OK, "Both are fluent; B is tighter.")),
        ("Both responses are fine. [RESULT]", ParsedChoice(None, UNPARSEABLE, "Both responses are fine.", reason="no verdict")),
        # Parser 5 reads "the first/second response" (issue 24); parser 4 left ordinals unread.
        ("I prefer the second one.", ParsedChoice("B", OK, "I prefer the second one.")),
    ],
)
def test_parse_relative_reads_real_prometheus_answers(text, expected):
    assert rb.parse_relative(text) == expected


def test_shipped_story_rubrics_cover_the_protocols_questions():
    import json

    from annotations.studies import PROTOCOL_FILE

    rubrics = rb.shipped_rubrics()
    protocol = json.loads(PROTOCOL_FILE.read_text(encoding="utf-8"))
    story = next(s for s in protocol["studies"] if s["slug"] == "story-likert")
    assert sorted(rubrics) == sorted(q["key"] for q in story["questions"])
    for question in story["questions"]:
        # The criteria is the question without its "(on a scale of 1-5 ...)" echo.
        assert question["text"].startswith(rubrics[question["key"]].criteria)
    with pytest.raises(ValueError, match="unknown prompt file 'nope'"):
        rb.shipped_rubrics("nope")
