"""The score parser, driven by a table of answers real judge models give.

Every row asserts score, status, rationale and reason (STYLE.md rule 8). ``SAME`` means the rationale is
the whole answer stripped, which is the rule for every format except ``[RESULT]`` and JSON. The reason of
an unparseable row is in ``REASONS``, by the row's id.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmjudge.parsing import (
    PARSER_VERSION,
    REFUSAL_PATTERNS,
    ParsedChoice,
    ParsedScore,
    parse_pairwise,
    parse_score,
)

SAME = object()
ADV = {"adversarial": True}
SEVEN = {"scale_max": 7}

CHATGPT_COHESION = (
    "The sentences in the story fragment fit together fairly well. The narrative follows a clear "
    "sequence, although the transition in the third paragraph is abrupt. Overall, I would rate the "
    "cohesiveness of this story fragment as a 4 out of 5."
)
CHATGPT_ECHO = (
    "How well do the sentences in the story fragment fit together? (on a scale of 1-5, with 1 being "
    "the lowest)\n\nI would give it a 3."
)
PROMETHEUS = (
    "Feedback: The response addresses the prompt and keeps a consistent tone, but two sentences "
    "contradict each other, which weakens coherence. [RESULT] 3"
)
LIST_ANSWER = "1. Grammar: the text has a few comma splices.\n2. Flow: the sentences connect well.\nOverall score: 4"

ROWS = [
    # --- davinci-style terse answers
    pytest.param("4", {}, 4.0, "ok", SAME, id="bare-digit"),
    pytest.param(" 5\n", {}, 5.0, "ok", "5", id="bare-digit-whitespace"),
    pytest.param("3.", {}, 3.0, "ok", SAME, id="digit-period"),
    pytest.param("4.5", {}, 4.5, "ok", SAME, id="half-point"),
    pytest.param("\n\n2", {}, 2.0, "ok", "2", id="leading-newlines"),
    pytest.param("3/5", {}, 3.0, "ok", SAME, id="slash-five"),
    pytest.param("4 out of 5", {}, 4.0, "ok", SAME, id="out-of-five"),
    pytest.param("5 stars", {}, 5.0, "ok", SAME, id="stars"),
    pytest.param("4 out of 5 stars", {}, 4.0, "ok", SAME, id="out-of-five-stars"),
    # --- ChatGPT-style prose
    pytest.param("I would rate this story fragment a 4 out of 5.", {}, 4.0, "ok", SAME, id="rate-fragment-a-4"),
    pytest.param(CHATGPT_COHESION, {}, 4.0, "ok", SAME, id="chatgpt-paragraph"),
    pytest.param(CHATGPT_ECHO, {}, 3.0, "ok", SAME, id="question-echo-then-answer"),
    pytest.param(
        "On a scale of 1-5, with 1 being the lowest, I would rate the grammar a 5.",
        {},
        5.0,
        "ok",
        SAME,
        id="scale-phrase-before-score",
    ),
    pytest.param(
        "I would rate the relevance of the story fragment to the prompt as a 2 (on a scale of 1-5, "
        "with 1 being the lowest).",
        {},
        2.0,
        "ok",
        SAME,
        id="scale-phrase-after-score",
    ),
    pytest.param(
        "On a scale from 1 to 5, where 1 is the lowest and 5 is the highest, I'd rate it 3.",
        {},
        3.0,
        "ok",
        SAME,
        id="where-1-is-lowest",
    ),
    pytest.param(
        "Based on the criteria, I give the story fragment 2/5 for enjoyment.", {}, 2.0, "ok", SAME, id="give-2-5"
    ),
    pytest.param(
        "The grammar is mostly correct with a couple of minor errors. Rating: 4/5",
        {},
        4.0,
        "ok",
        SAME,
        id="rating-label-at-end",
    ),
    pytest.param("Rating: 3.5/5", {}, 3.5, "ok", SAME, id="rating-half"),
    pytest.param("Score: 4", {}, 4.0, "ok", SAME, id="score-label"),
    pytest.param("**Score: 4**", {}, 4.0, "ok", SAME, id="bold-score-label"),
    pytest.param("**Rating:** 2", {}, 2.0, "ok", SAME, id="bold-label-then-number"),
    pytest.param("My rating is **4**.", {}, 4.0, "ok", SAME, id="rating-is-bold"),
    pytest.param("**4**", {}, 4.0, "ok", SAME, id="bold-number"),
    pytest.param(
        "The story starts strong. **3/5** - the ending feels rushed.", {}, 3.0, "ok", SAME, id="bold-fraction"
    ),
    pytest.param("Final score: 5", {}, 5.0, "ok", SAME, id="final-score"),
    pytest.param("Overall rating = 2", {}, 2.0, "ok", SAME, id="overall-rating-equals"),
    pytest.param("[SCORE 5]", {}, 5.0, "ok", SAME, id="verbalizer-score-bracket"),
    pytest.param("Score: 4 out of 5", {}, 4.0, "ok", SAME, id="verbalizer-score-out-of"),
    pytest.param("The story is engaging and vivid. I'd give it a solid 4.", {}, 4.0, "ok", SAME, id="give-it-a-solid"),
    pytest.param(
        "This is one of the best fragments I've read; I would rate it 5.", {}, 5.0, "ok", SAME, id="one-in-prose"
    ),
    # Parser 5 (issue 24): a range is two verdicts, as "3-4" is in judge_answers_2026.jsonl; parser 4 took the first.
    pytest.param("I'd rate this 3-4.", {}, None, "unparseable", SAME, id="range-is-two-verdicts"),
    pytest.param("I would rate it between 2 and 3, leaning toward 2.", {}, 2.0, "ok", SAME, id="between-takes-first"),
    # --- explain variant: the score first, then the explanation
    pytest.param(
        "4. The story is coherent and the sentences flow naturally from one to the next.",
        {},
        4.0,
        "ok",
        SAME,
        id="explain-variant-leading-number",
    ),
    pytest.param(
        "3\n\nThe fragment has some grammatical errors, e.g. missing articles.",
        {},
        3.0,
        "ok",
        SAME,
        id="explain-variant-number-line",
    ),
    pytest.param(
        "2 - The story barely relates to the prompt about dragons.", {}, 2.0, "ok", SAME, id="explain-variant-dash"
    ),
    # --- number words
    pytest.param("four", {}, 4.0, "ok", SAME, id="word"),
    pytest.param("Four out of five.", {}, 4.0, "ok", SAME, id="word-out-of-word"),
    pytest.param("Three.", {}, 3.0, "ok", SAME, id="capital-word"),
    pytest.param("I'd give this one a four.", {}, 4.0, "ok", SAME, id="give-this-one-a-four"),
    pytest.param("Rating: five", {}, 5.0, "ok", SAME, id="rating-word"),
    pytest.param("I would rate it three and a half.", {}, 3.5, "ok", SAME, id="word-and-a-half"),
    pytest.param(
        "One of the strengths is the dialogue, but the plot drags.",
        {},
        None,
        "unparseable",
        SAME,
        id="word-one-in-prose-is-no-score",
    ),
    # --- Prometheus absolute grading
    pytest.param(
        PROMETHEUS, {}, 3.0, "ok", PROMETHEUS[len("Feedback: ") : PROMETHEUS.index(" [RESULT]")], id="prometheus"
    ),
    pytest.param(
        "Feedback: Clear and complete. [RESULT]: 5", {}, 5.0, "ok", "Clear and complete.", id="prometheus-colon"
    ),
    pytest.param(
        "Feedback: Mostly relevant. [RESULT] (4)", {}, 4.0, "ok", "Mostly relevant.", id="prometheus-parenthesis"
    ),
    pytest.param(
        "Feedback: Some errors. [Result] 2/5", {}, 2.0, "ok", "Some errors.", id="prometheus-mixed-case-fraction"
    ),
    pytest.param(
        "The response uses 3 examples and cites 2 sources.\n[RESULT] 4",
        {},
        4.0,
        "ok",
        "The response uses 3 examples and cites 2 sources.",
        id="prometheus-numbers-in-feedback",
    ),
    pytest.param(
        "Feedback: Excellent work. [RESULT] 6", {}, None, "unparseable", "Excellent work.", id="prometheus-off-scale"
    ),
    pytest.param(
        "Feedback: The answer has 3 parts. [RESULT]",
        {},
        None,
        "unparseable",
        "The answer has 3 parts.",
        id="prometheus-marker-without-score",
    ),
    # --- FastChat
    pytest.param("[[5]]", {}, 5.0, "ok", SAME, id="fastchat"),
    pytest.param(
        "The assistant's answer is accurate but terse. Rating: [[4]]", {}, 4.0, "ok", SAME, id="fastchat-with-label"
    ),
    pytest.param("[[4.5]]", {}, 4.5, "ok", SAME, id="fastchat-half"),
    # --- JSON answers
    pytest.param(
        '{"score": 4, "explanation": "The sentences connect well."}',
        {},
        4.0,
        "ok",
        "The sentences connect well.",
        id="json",
    ),
    pytest.param(
        '```json\n{"rating": "3", "reason": "Several typos."}\n```', {}, 3.0, "ok", "Several typos.", id="json-fence"
    ),
    pytest.param(
        'Here is my evaluation:\n{"Grade": 2.5, "rationale": "Weak link to the prompt."}',
        {},
        2.5,
        "ok",
        "Weak link to the prompt.",
        id="json-after-prose",
    ),
    pytest.param('{"score": 9, "explanation": "Great."}', {}, None, "unparseable", "Great.", id="json-off-scale"),
    # Without an explanation field the rationale is the whole answer (issue 24's convention; parser 4 gave "").
    pytest.param('{"score": "high"}', {}, None, "unparseable", SAME, id="json-non-numeric"),
    pytest.param('{"score": true}', {}, None, "unparseable", SAME, id="json-bool"),
    pytest.param('{"score": "4/5", "feedback": "Good."}', {}, 4.0, "ok", "Good.", id="json-string-fraction"),
    # --- adversarial study (title 1 / title 2 are removed)
    pytest.param(
        "Title 1 and title 2 convey the same event, only one word differs. I'd say 4.",
        ADV,
        4.0,
        "ok",
        SAME,
        id="adversarial-titles-then-say",
    ),
    pytest.param(
        "The meaning of news title 1 is mostly preserved in news title 2: 4",
        ADV,
        4.0,
        "ok",
        SAME,
        id="adversarial-colon",
    ),
    pytest.param("Title 1 is fluent.", {}, 1.0, "ok", SAME, id="title-1-kept-outside-adversarial-study"),
    # Parser 5: the number closing the answer is its verdict; parser 4 took the first number, "Title 1".
    pytest.param("Title 1 is fluent. 5", {}, 5.0, "ok", SAME, id="closing-number-outside-adversarial-study"),
    pytest.param(
        "Do you agree that the meaning of news title 1 is preserved in news title 2? (on a scale of 1-5, with 1 "
        "being the strongly disagree and 5 being strongly agree.)\n5",
        ADV,
        5.0,
        "ok",
        SAME,
        id="adversarial-full-question-echo",
    ),
    # --- other scales
    pytest.param("6 out of 7", SEVEN, 6.0, "ok", SAME, id="seven-point-out-of"),
    pytest.param("On a scale of 1 to 7 I'd give it 6.", SEVEN, 6.0, "ok", SAME, id="seven-point-to-range"),
    pytest.param("Rating: 7/7", SEVEN, 7.0, "ok", SAME, id="seven-point-max"),
    pytest.param("6/5", SEVEN, None, "unparseable", SAME, id="seven-point-wrong-denominator"),
    pytest.param("0", {"scale_min": 0, "scale_max": 10}, 0.0, "ok", SAME, id="zero-based-scale"),
    # --- refusals
    pytest.param(
        "As an AI language model, I cannot rate the enjoyment of a story as I do not have personal preferences.",
        {},
        None,
        "refused",
        SAME,
        id="refusal-ai-language-model",
    ),
    pytest.param("I'm sorry, but I can't help with that.", {}, None, "refused", SAME, id="refusal-sorry"),
    pytest.param(
        "I cannot provide a rating because the 3 characters are not described.",
        {},
        None,
        "refused",
        SAME,
        id="refusal-with-unrelated-number",
    ),
    pytest.param(
        "As an AI, I do not have personal preferences, so I cannot say whether I enjoyed it.",
        {},
        None,
        "refused",
        SAME,
        id="refusal-no-preferences",
    ),
    pytest.param(
        "As an AI, I cannot experience enjoyment. The story has 2 characters.",
        {},
        None,
        "refused",
        SAME,
        id="refusal-enjoyment-with-number",
    ),
    pytest.param(
        "This content may violate our content policy. If you believe this to be in error, please submit feedback.",
        {},
        None,
        "refused",
        SAME,
        id="refusal-content-policy",
    ),
    pytest.param(
        "As an AI I don't have feelings, but I would rate it 4.", {}, 4.0, "ok", SAME, id="refusal-then-score"
    ),
    pytest.param(
        "As an AI language model, I do not have personal preferences. However, based on the writing quality, "
        "I would give it a 3 out of 5.",
        {},
        3.0,
        "ok",
        SAME,
        id="refusal-however-score",
    ),
    # --- off the scale: never clipped
    pytest.param("0", {}, None, "unparseable", SAME, id="zero"),
    pytest.param("6", {}, None, "unparseable", SAME, id="six"),
    pytest.param("10/10", {}, None, "unparseable", SAME, id="ten-of-ten"),
    pytest.param("-1", {}, None, "unparseable", SAME, id="negative"),
    pytest.param("Score: -1", {}, None, "unparseable", SAME, id="negative-labeled"),
    pytest.param("I would rate it 8/10.", {}, None, "unparseable", SAME, id="other-scale-off"),
    pytest.param("The story gets 4/10.", {}, None, "unparseable", SAME, id="other-scale-in-range-number"),
    pytest.param("Rating: 4/10", {}, None, "unparseable", SAME, id="labeled-other-scale"),
    # --- numbers that are not scores
    pytest.param("The story, written in 1999, is decent. 3", {}, 3.0, "ok", SAME, id="year-skipped"),
    pytest.param("GPT-2 wrote this, I think. 2", {}, 2.0, "ok", SAME, id="model-name-skipped"),
    pytest.param("The text has 3,000 words; it is dull. 2", {}, 2.0, "ok", SAME, id="thousands-skipped"),
    pytest.param("About 90% of it is grammatical. 4", {}, 4.0, "ok", SAME, id="percent-skipped"),
    pytest.param("The 3rd sentence is odd. 3", {}, 3.0, "ok", SAME, id="ordinal-skipped"),
    pytest.param(LIST_ANSWER, {}, 4.0, "ok", SAME, id="numbered-list-markers-removed"),
    pytest.param("1. The grammar is fine.\n2. The story is vivid.\n5", {}, 5.0, "ok", SAME, id="list-then-bare-number"),
    # A count is not a rating (issue 15); parser version 3 took it by the paper's first-number rule.
    pytest.param("The story has 3 sentences.", {}, None, "unparseable", SAME, id="prose-count-is-not-a-score"),
    pytest.param("I think 4 is the best fit for this story.", {}, 4.0, "ok", SAME, id="is-the-best-not-an-echo"),
    pytest.param("(1 = lowest, 5 = highest) My answer: 2", {}, 2.0, "ok", SAME, id="equals-legend-echo"),
    # --- empty and garbage
    pytest.param("", {}, None, "unparseable", "", id="empty"),
    pytest.param("   \n\t", {}, None, "unparseable", "", id="whitespace"),
    pytest.param("The story is great!", {}, None, "unparseable", SAME, id="no-number"),
    pytest.param("asdf qwerty {{{", {}, None, "unparseable", SAME, id="garbage"),
    pytest.param("<html>502 Bad Gateway</html>", {}, None, "unparseable", SAME, id="html-error-page"),
]


REASONS = {
    "range-is-two-verdicts": "two verdicts",
    "word-one-in-prose-is-no-score": "no verdict",
    "prometheus-off-scale": "out of scale",
    "prometheus-marker-without-score": "no verdict",
    "json-off-scale": "out of scale",
    "json-non-numeric": "no verdict",
    "json-bool": "no verdict",
    "seven-point-wrong-denominator": "out of scale",
    "zero": "out of scale",
    "six": "out of scale",
    "ten-of-ten": "out of scale",
    "negative": "out of scale",
    "negative-labeled": "out of scale",
    "other-scale-off": "out of scale",
    "other-scale-in-range-number": "out of scale",
    "labeled-other-scale": "out of scale",
    "prose-count-is-not-a-score": "no verdict",
    "empty": "empty",
    "whitespace": "empty",
    "no-number": "no verdict",
    "garbage": "no verdict",
    "html-error-page": "no verdict",
}


@pytest.mark.parametrize(("text", "options", "score", "status", "rationale"), ROWS)
def test_parse_score_table(text, options, score, status, rationale, request):
    result = parse_score(text, **options)

    reason = REASONS.get(request.node.callspec.id, "")
    assert result == ParsedScore(score, status, text.strip() if rationale is SAME else rationale, reason=reason)


def test_every_unparseable_row_and_only_those_has_a_reason():
    unparseable = {row.id for row in ROWS if row.values[3] == "unparseable"}
    unparseable |= {row.id for row in PAIRWISE_ROWS if row.values[2] == "unparseable"}

    assert unparseable == set(REASONS) | set(PAIRWISE_REASONS)


def test_table_is_large_enough_to_cover_real_outputs():
    assert len(ROWS) >= 70


def test_parser_version_and_patterns_are_exported():
    assert PARSER_VERSION == "8"
    assert all(hasattr(p, "search") for p in REFUSAL_PATTERNS)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(max_size=400)
    | st.from_regex(r"[\[\]{}\"\w\s:./*\-]{0,200}", fullmatch=True)
    | st.sampled_from(["[RESULT] ", "Score: ", '{"score": ', "[[", "**", "four out of "]).flatmap(
        lambda prefix: st.text(max_size=60).map(lambda rest: prefix + rest)
    ),
    scale=st.sampled_from([(1, 5), (1, 7), (0, 10), (1, 3)]),
    adversarial=st.booleans(),
)
def test_parse_score_never_raises_and_stays_on_the_scale(text, scale, adversarial):
    low, high = scale

    result = parse_score(text, scale_min=low, scale_max=high, adversarial=adversarial)

    assert result.status in ("ok", "unparseable", "refused")
    assert isinstance(result.rationale, str)
    if result.status == "ok":
        assert result.score is not None and not math.isnan(result.score)
        assert low <= result.score <= high
    else:
        assert result.score is None


PAIRWISE_ROWS = [
    pytest.param(
        "Feedback: Response A follows the rubric more closely. [RESULT] A",
        "A",
        "ok",
        "Response A follows the rubric more closely.",
        id="prometheus-a",
    ),
    pytest.param("Feedback: B is more precise. [RESULT]: B", "B", "ok", "B is more precise.", id="prometheus-b-colon"),
    pytest.param("Feedback: Equal quality. [RESULT] Tie", "tie", "ok", "Equal quality.", id="prometheus-tie"),
    pytest.param("Feedback: Both are vague. [RESULT]", None, "unparseable", "Both are vague.", id="marker-only"),
    pytest.param("After comparing both answers: [[A]]", "A", "ok", SAME, id="fastchat-a"),
    pytest.param("[[B]]", "B", "ok", SAME, id="fastchat-b"),
    pytest.param("[[C]]", "tie", "ok", SAME, id="fastchat-c-is-tie"),
    pytest.param("Winner: A", "A", "ok", SAME, id="winner-label"),
    pytest.param("Response B is clearly better because it cites sources.", "B", "ok", SAME, id="prose"),
    pytest.param("I'm sorry, but I can't compare these responses.", None, "refused", SAME, id="refusal"),
    pytest.param("", None, "unparseable", "", id="pairwise-empty"),
    pytest.param("A or B? Hard to say.", None, "unparseable", SAME, id="undecided"),
    pytest.param("A", "A", "ok", SAME, id="bare-a"),
    pytest.param(" **B**\n", "B", "ok", "**B**", id="bare-bold-b"),
    pytest.param("Story B.", "B", "ok", SAME, id="bare-story-b"),
    pytest.param("A, because it is shorter.", None, "unparseable", SAME, id="letter-with-more-is-not-bare"),
    pytest.param("Story A or story B", None, "unparseable", SAME, id="both-named"),
]


PAIRWISE_REASONS = {
    "marker-only": "no verdict",
    "pairwise-empty": "empty",
    "undecided": "no verdict",
    "letter-with-more-is-not-bare": "no verdict",
    "both-named": "no verdict",
}


@pytest.mark.parametrize(("text", "choice", "status", "rationale"), PAIRWISE_ROWS)
def test_parse_pairwise_table(text, choice, status, rationale, request):
    result = parse_pairwise(text)

    reason = PAIRWISE_REASONS.get(request.node.callspec.id, "")
    assert result == ParsedChoice(choice, status, text.strip() if rationale is SAME else rationale, reason=reason)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_parse_pairwise_never_raises(text):
    result = parse_pairwise(text)

    assert result.choice in ("A", "B", "tie", None)
    assert (result.choice is None) == (result.status != "ok")
