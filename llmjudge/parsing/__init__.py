"""Turn a judge model's free-text answer into a score or a choice, reading it as a careful human does.

Pure functions, no Django: the judging service stores the typed result, the tests feed it tables of answers
(``tests/llmjudge/parsing/``: ``parsing_answers.jsonl`` of issue 15, ``judge_answers_2026.jsonl`` and
``prometheus_eval_cases.jsonl`` of issue 24). Unparseable is a status with a reason, never a guess (STYLE.md
rule 8), so nothing here clips, rescales or re-samples.

How ``parse_score`` decides, in order:

1. The reasoning trace is split off (``split_reasoning``: ``<think>…</think>``, a lone ``</think>``, gpt-oss
   channels, Ollama's "Thinking… …done thinking.") and never read for the verdict. An answer that ends inside
   its trace is unparseable, "cut off while reasoning"; an empty answer is "empty" ("cut off" when the server
   says it stopped at max_tokens).
2. The answer is prepared (``normalize``): its first 2 KB and last 6 KB, full-width digits, keycaps, stars with
   halves ("★★★½☆" is 3.5/5), decimal commas, number words in a verdict's place in ten languages; the
   question's echoes are blanked (the scale's range, "with 1 being the lowest", format placeholders, repeated
   instructions, the question text, a reference answer's "(Score 5)"). A long answer is read in its first 2 KB,
   its last 6 KB and the last two explicit final markers of its middle.
3. A JSON answer (also loosely written) gives the aspect's key, else ``overall``/``final_score``, else
   ``score``/``rating``/... (``score_json``).
4. Prometheus ``[RESULT] 4``: the last marker; an earlier one with another score, and no correction between them,
   makes two verdicts; a marker with nothing readable after it is no verdict.
5. Otherwise the prose, tier by tier (``verdicts``): the aspect asked ("Fluency: 5", "流畅度：5分") > the final
   markers ("Final answer: 4", ``\\boxed{4}``, ``<score>4</score>``, ``[[4]]``, "Overall: 4", "so I'd lower it
   to 3", "which maps to a 4", "3... no, 4") > with an aspect asked and absent, the other aspects' ratings are
   dropped > a sole verdict, in classes (labels "Score: 4" in every language, named criteria, rating verbs,
   "a perfect score", "4 out of 5"/"4 von 5"/"5段階中4", bold, "a solid four", the study's label words,
   ranges, a number opening or closing the answer) > a refusal > the paper's first-number rule. A verdict that is
   one end of a range ("somewhere between 3 and 4", "60–70/100") is two verdicts unless a commitment follows.
   Within a tier, verdicts that agree are one; the later of two after a self-correction ("Wait", "actually",
   "nein, eher") stands; otherwise they are "two verdicts". Struck-through numbers ("~~4~~ 3") and the first
   number of a revision arrow ("3 -> 4") are blanked beforehand. After the verdict, an indecision between
   numbers ("3 or 4, I can't decide between them") makes two verdicts and an announced correction that never
   comes ("Wait, I need to revise.") leaves none; a refusal that closes the answer and declines the rating as
   a whole ("I withdraw the rating and decline to evaluate this response.") withdraws every number before it.
6. Never a score: counts ("gave 7, two of which"), years, dates, section and list numbers ("1. Accuracy: ..."),
   the scale's range, the maximum of an "X of Y" form, a repeated format example ("Example: Score: 5", "Example
   output: {"score": 3}"), a negated or hypothetical number ("a 5 would require ...", "1/5 would be unfair",
   "a 5... if the citations were real"), a number inside a refusal. A
   refusal in any of the ten languages is ``refused`` unless a verdict stands apart from it: after a
   contrast ("I can't comment on X, but I'd give it a 4"), as a final marker, a label on a line of its own,
   or a rating in the judge's own voice; a sentence end alone does not set a number apart ("I cannot rate
   this. Giving it 2/5 would be misleading." is refused). Pairwise choices follow the same two rules.
7. Off the scale or on another scale ("8/10" on 1-5, "70%", "Schulnote: 2") is "out of scale".

``parse_pairwise`` follows the same principles for A/B/tie; see ``llmjudge.parsing.pairwise``. The rationale
is the feedback before ``[RESULT]``, the explanation field of a JSON answer, and the whole answer (trace
split off) otherwise. docs/judges.md gives the rules with examples and the tables' counts.
"""

from __future__ import annotations

from llmjudge.parsing.common import (
    CUT_OFF,
    CUT_OFF_REASONING,
    EMPTY,
    NO_VERDICT,
    OK,
    OUT_OF_SCALE,
    PARSER_ERROR,
    REASONS,
    REFUSAL_PATTERNS,
    REFUSED,
    TWO_VERDICTS,
    UNPARSEABLE,
    ParsedChoice,
    ParsedScore,
)
from llmjudge.parsing.pairwise import parse_pairwise
from llmjudge.parsing.reasoning import split_reasoning
from llmjudge.parsing.scores import parse_score

# Bump when a change can turn the same text into a different result; stored with every LLM rating
# so old ratings can be re-parsed or told apart.
# 2: a dash right before a number is its sign, not a separator ("[RESULT] -1" was read as 1).
# 3: a pairwise answer that is only the choice ("A", "**B**", "Story B.") is read as that choice.
# 4: issue 15, read as a careful human: final verdicts, the aspect asked about, label and number
#    words, markdown, counts skipped, refusals that mention numbers, pairwise prose, "A or B".
# 5: issue 24: the reasoning trace split off and never scored, final markers, several aspects, ten
#    languages, glyphs, "X of Y" in any language, reasons for unparseable answers, pairwise [[A>B]] forms.
# 6: fewer silent wrong scores: refusals found by their construction (a declining verb, then what it declines),
#    suppositions and other raters' numbers, "N or M" in ten languages, "N <short word> <top>", XML sub-scores,
#    revisions in seven languages.
# 7: fewer silent wrong scores on a fresh blind table: self-corrections in every form (struck through, "3 -> 4",
#    "Edit: ... Changing to 3", "I'll stay with 5", "the original 3 was right after all"); a closing refusal of the
#    rating as a whole withdraws what was rated before it; hedges ("3/5, maybe 4/5", "I can't decide between
#    them") and contradicted pairwise verdicts are two verdicts; an announced correction never given is no
#    verdict; "A 5 here would require ..." and "a 10-step guide" are no verdicts.
# 8: fewer silent wrong readings on a third blind table: a range without a commitment is two verdicts ("between 3 and
#    4", "60–70/100"); a labelled format example ("Example output: {...}") is never the verdict; two disagreeing final
#    markers ([[A>B]] ... [[B>A]], [RESULT] 4 ... [RESULT] 2) and a summing-up prose choice contradicted by the
#    marker after it are two verdicts; side-by-side pairwise scores choose the higher; an answer cut off after
#    "Verdict: Response A is" and a list number opening a line give none; "EDIT: I mistakenly ...", "Looking again",
#    "As it stands" correct; "if I'm forced to pick one: B" commits.
PARSER_VERSION = "8"

__all__ = [
    "CUT_OFF",
    "CUT_OFF_REASONING",
    "EMPTY",
    "NO_VERDICT",
    "OK",
    "OUT_OF_SCALE",
    "PARSER_ERROR",
    "PARSER_VERSION",
    "REASONS",
    "REFUSAL_PATTERNS",
    "REFUSED",
    "TWO_VERDICTS",
    "UNPARSEABLE",
    "ParsedChoice",
    "ParsedScore",
    "parse_pairwise",
    "parse_score",
    "split_reasoning",
]
