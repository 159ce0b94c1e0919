"""parse_label: a judge's answer read as one of a categorical study's labels, every field asserted."""
from __future__ import annotations

import pytest

from llmjudge.parsing import OK, UNPARSEABLE, ParsedScore
from llmjudge.parsing.labels import parse_label

SENTIMENT = ("Positive", "Negative", "unknown")
LGBTEEN = ("Irrelevant", "No", "No response", "Partially", "Yes")
FRAMING = ("n/a: problem is resolved", "no", "yes")

CASES = [
    # (answer, labels, expected score, expected status)
    ("Positive", SENTIMENT, 1.0, OK),
    ("negative", SENTIMENT, 2.0, OK),
    ("**Negative**", SENTIMENT, 2.0, OK),
    ("'unknown'.", SENTIMENT, 3.0, OK),
    ("2", SENTIMENT, 2.0, OK),
    ("Label: Negative", SENTIMENT, 2.0, OK),
    ("The service was slow.\nAnswer: negative", SENTIMENT, 2.0, OK),
    ("Feedback: Both follow the prompt; one is tighter. [RESULT] Positive", SENTIMENT, 1.0, OK),
    ("[[unknown]]", SENTIMENT, 3.0, OK),
    ("Winner: Positive", SENTIMENT, 1.0, OK),
    ('{"label": "Negative", "explanation": "slow service"}', SENTIMENT, 2.0, OK),
    ('```json\n{"answer": 3}\n```', SENTIMENT, 3.0, OK),
    ("The review praises the food, so the food aspect is positive.", SENTIMENT, 1.0, OK),
    ("Answer: the sentiment toward the food is negative.", SENTIMENT, 2.0, OK),
    # A label inside a longer label is not counted: "No response" is one label, not "No" too.
    ("No response", LGBTEEN, 3.0, OK),
    ("The comment gives no response to the question: No response.", LGBTEEN, 3.0, OK),
    ("No", LGBTEEN, 2.0, OK),
    ("n/a: problem is resolved", FRAMING, 1.0, OK),
    ("YES", FRAMING, 3.0, OK),
    # Several labels named, none, a number off the list, or an explicit answer that is no label: unparseable.
    ("It is Positive, not Negative.", SENTIMENT, None, UNPARSEABLE),
    ("The food was fine.", SENTIMENT, None, UNPARSEABLE),
    ("4", SENTIMENT, None, UNPARSEABLE),
    ("0", SENTIMENT, None, UNPARSEABLE),
    ("Label: Neutral", SENTIMENT, None, UNPARSEABLE),
    ("[RESULT] 7", SENTIMENT, None, UNPARSEABLE),
    # Numbers in prose are not labels ("one of the best" is no answer 1).
    ("This is one of the best places in town, 2 visits were enough.", SENTIMENT, None, UNPARSEABLE),
    # A label word must be whole: "Positively" is not "Positive", "yesterday" not "yes".
    ("Positively surprising", SENTIMENT, None, UNPARSEABLE),
    ("yesterday it was resolved", ("no", "yes"), None, UNPARSEABLE),
    ("", SENTIMENT, None, UNPARSEABLE),
    ("   \n", SENTIMENT, None, UNPARSEABLE),
]


@pytest.mark.parametrize(("text", "labels", "score", "status"), CASES)
def test_parse_label_reads_the_answer_as_a_label_code_or_says_it_cannot(text, labels, score, status):
    parsed = parse_label(text, labels=labels)
    assert isinstance(parsed, ParsedScore)
    assert (parsed.score, parsed.status) == (score, status)
    assert parsed.details is None
    if text.strip():
        assert parsed.rationale.startswith(text.strip())
    else:
        assert parsed.rationale == ""


def test_an_explicit_answer_that_is_no_label_says_which_value_was_refused():
    parsed = parse_label("Label: Neutral", labels=SENTIMENT)
    assert parsed.rationale == "Label: Neutral\n[Neutral: not one of the labels]"


def test_the_last_explicit_answer_counts():
    assert parse_label("Label: Positive\n...on reflection...\nLabel: Negative", labels=SENTIMENT).score == 2.0


def test_the_module_is_free_of_django():
    import llmjudge.parsing.labels as module

    source = open(module.__file__, encoding="utf-8").read()
    assert "django" not in source
