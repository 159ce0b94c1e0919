"""Turn a judge model's free-text answer into a score or a choice, reading it as a careful human does.

Pure functions, no Django: the judging service stores the typed result, the tests feed it a table
of answers (``tests/llmjudge/parsing/parsing_answers.jsonl``). Unparseable is a status, never a guess
(STYLE.md rule 8), so nothing here clips, rescales or re-samples.

How ``parse_score`` decides, in order (the first rule that finds a verdict wins):

1. Empty text -> ``unparseable``. A JSON answer (keys score/rating/grade, or the aspect asked
   about; also inside a ```json fence) -> its value.
2. Echoes of the question are cut, because their numbers are not ratings: the scale's range
   ("on a scale of 1-5", "1 (lowest) to 5 (highest)"), "with 1 being the lowest", "(1 = lowest)";
   "title 1"/"title 2" in adversarial studies. A scale label right after a number is a gloss:
   "5 (highest)" reads as 5. Markdown emphasis and code marks are read through.
3. Prometheus ``[RESULT] 4``: the last marker; a marker with no score after it is unparseable
   (never a number from the feedback), or refused when the answer refuses.
4. In the rest of the answer, in this order: the aspect asked about ("Relevance: 1", when the
   caller passes ``aspect``) > the answer's final word (the last "final score: 4", "so I'd lower it
   to 3") > FastChat ``[[4]]`` > a label ("Score: 4", "Rating: 3.5/5") > bold ``**4**`` > "4 out of
   5"/"4/5" > a rating verb ("I'd rate it 5", "this would be a three", not "I would not give it a
   5") > a number word after an article ("a solid four.") > a label word of the study ("Rating:
   Positive", "I'd rate it the highest") > a number opening the answer ("4. The story ...").
5. A verdict followed by another ("3 or 4") is two verdicts and no final one: ``unparseable``.
6. A refusal ("I cannot assign a score", "I'm unable to provide a rating", "I am not comfortable
   rating this") is ``refused`` unless an explicit verdict stands outside a hypothetical sentence
   ("If it were complete, I might give it a 3" is no verdict).
7. Otherwise the paper's rule (Chiang & Lee 2023): drop "out of 5" and "/5", take the first number,
   skipping what cannot be a rating: counts ("2 twists and 1 major flaw"), examples ("e.g. 3"),
   years, "GPT-2", "3rd", "90%", "3,000".
8. A score off the scale or on another scale ("4/10" on 1-5) is ``unparseable``; half points stay.

Number words (zero..ten, "four and a half") count only in a verdict's place, because "one" in
prose ("one of the best") is not a score. ``parse_pairwise`` follows the same order for choices:
``[RESULT] A`` > ``[[A]]`` > "Winner: A" > prose, in tiers (a stated choice "I prefer Response B" >
a verdict "Output (a) is better" > a description "B is more concise"; two different choices in the
first tier that speaks and no "overall"/"final" one -> unparseable) > an answer that is only, or
opens with, the choice > refusal.

The rationale is the feedback before ``[RESULT]``, the explanation field of a JSON answer, and the
whole answer stripped otherwise.
"""

from __future__ import annotations

from llmjudge.parsing.common import (
    OK,
    REFUSAL_PATTERNS,
    REFUSED,
    UNPARSEABLE,
    ParsedChoice,
    ParsedScore,
)
from llmjudge.parsing.pairwise import parse_pairwise
from llmjudge.parsing.scores import parse_score

# Bump when a change can turn the same text into a different result; stored with every LLM rating
# so old ratings can be re-parsed or told apart.
# 2: a dash right before a number is its sign, not a separator ("[RESULT] -1" was read as 1).
# 3: a pairwise answer that is only the choice ("A", "**B**", "Story B.") is read as that choice.
# 4: issue 15, read as a careful human: final verdicts, the aspect asked about, label and number
#    words, markdown, counts skipped, refusals that mention numbers, pairwise prose, "A or B".
PARSER_VERSION = "4"

__all__ = [
    "OK",
    "PARSER_VERSION",
    "REFUSAL_PATTERNS",
    "REFUSED",
    "UNPARSEABLE",
    "ParsedChoice",
    "ParsedScore",
    "parse_pairwise",
    "parse_score",
]
