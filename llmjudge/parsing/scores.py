"""``parse_score``: one judge answer to a score on the study's scale, or an honest status and its reason.

The rules, in the order they are tried, are listed in ``llmjudge.parsing``: the trace split off
(``reasoning``), the answer prepared (``normalize``), then a JSON answer (``score_json``), Prometheus's
``[RESULT]``, or the prose tiers (``verdicts``), and last the scale.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import llmjudge.parsing.forms as forms
from llmjudge.parsing.common import (
    CUT_OFF,
    CUT_OFF_REASONING,
    EMPTY,
    NO_VERDICT,
    OK,
    OUT_OF_SCALE,
    REFUSED,
    RESULT_MARK,
    TWO_VERDICTS,
    UNPARSEABLE,
    ParsedScore,
    feedback_before,
    last_result_mark,
)
from llmjudge.parsing.forms import Verdict, find
from llmjudge.parsing.lexicon import DEN, FOLDED, NUM, Lazy, is_refusal, refusals, to_number
from llmjudge.parsing.normalize import EchoOptions, Finals, Prepared, prepare, window
from llmjudge.parsing.reasoning import split_reasoning
from llmjudge.parsing.score_json import find_score_json, read_score_json
from llmjudge.parsing.verdicts import Options, Scale, label_words, read_prose, resolve

_RESULT = Lazy(
    r"\[\s*result\s*(?:\]|:)\s*+(?:[:=]|-(?!\d))?\s*+(?:(?:score|result)\s*+(?:of\b|[:=])?\s*+)?[(\[]?\s*+" + NUM + DEN,
    FOLDED,
)
_GENERIC_LABELS = {"lowest", "highest"}
_LAST_MARKS = 8
_FINALS = Finals((*forms.FINALS, _RESULT), (*forms.FINAL_KEYS, "[result"))


def _label_values(labels: Mapping[str, str] | None, scale: Scale) -> dict[str, float]:
    """Label word -> value: the study's ``{"5": "5 (highest)"}`` gives "highest" -> 5.

    A study without labels still has a lowest and a highest point.
    """
    if not labels:
        return {"lowest": float(scale.low), "highest": float(scale.high)}
    words: dict[str, float] = {}
    for key, label in labels.items():
        value = to_number(str(key))
        word = re.sub(r"^\s*[-\d.]+\s*", "", str(label)).strip(" ()[]:-=").lower()
        if value is not None and word:
            words[word] = value
    return words


def _judged(verdict: Verdict | None, scale: Scale, rationale: str, *, refused: bool = False) -> ParsedScore:
    """A verdict on the study's scale is the score; off the scale, on another scale or "3 or 4" it is not.

    After a refusal, a verdict that is not one ("Score: 0 — I refuse to rate this") leaves the refusal."""
    if verdict is None:
        return ParsedScore(None, REFUSED if refused else UNPARSEABLE, rationale, reason="" if refused else NO_VERDICT)
    reason = ""
    if verdict.ambiguous:
        reason = TWO_VERDICTS
    elif verdict.value is None:
        reason = NO_VERDICT
    # NaN compares False both ways, so it is never on the scale.
    elif (verdict.den is not None and verdict.den != scale.high) or not scale.low <= verdict.value <= scale.high:
        reason = OUT_OF_SCALE
    if reason:
        return ParsedScore(None, REFUSED if refused else UNPARSEABLE, rationale, reason="" if refused else reason)
    return ParsedScore(verdict.value, OK, rationale)


def _from_result(r: Prepared, answer: str, scale: Scale, words: dict[str, float], refused: bool) -> ParsedScore:
    """Prometheus's ``[RESULT] 4``: the last marker counts, because the verdict closes the feedback; an earlier
    marker with another score makes two verdicts unless a correction stands between them; a marker with no score
    after it is never read from the feedback. The rationale is cut from the answer as written."""
    marks = list(RESULT_MARK.finditer(r.low))
    rationale = feedback_before(answer, last_result_mark(answer))
    match = _RESULT.match(r.low, marks[-1].start())
    if match is not None:
        # "[RESULT] 4 ... [RESULT] 2": two verdicts unless a correction stands between them ("Wait, ... [RESULT] 2").
        # A judge's answer has a marker or two: the last few are compared, so a page of markers costs no more.
        found = [
            forms.verdict_of(m, "result") for x in marks[-_LAST_MARKS:] if (m := _RESULT.match(r.low, x.start()))
        ]
        return _judged(resolve(found, r.low), scale, rationale)
    found = label_words(r.low, words, marks[-1].end())
    return _judged(found[0] if found else None, scale, rationale, refused=refused)


def _read(answer: str, scale: Scale, options: Options) -> ParsedScore:
    label_alt = "|".join(re.escape(w) for w in options.words if w not in _GENERIC_LABELS)
    echo = EchoOptions(scale.low, scale.high, options.adversarial, label_alt, options.question)
    r = prepare(answer, echo, finals=_FINALS)
    refused = refusals(r.low)
    found = find_score_json(window(answer), options.aspect)
    if found is not None:
        read = read_score_json(found, options.aspect, answer)
        verdict = replace(read.verdict, ambiguous=True) if read.verdict and read.ambiguous else read.verdict
        if verdict is None and read.ambiguous:
            verdict = Verdict(None, None, 0, 0, "json", ambiguous=True)
        return _judged(verdict, scale, read.rationale, refused=bool(refused) or is_refusal(read.rationale))
    if RESULT_MARK.search(r.low):
        return _from_result(r, answer, scale, options.words, bool(refused))
    bold = find(forms.BOLD, r.text, r.marked, "bold", prose=True)
    return _judged(read_prose(r, bold, scale, options, refused), scale, answer, refused=bool(refused))


def parse_score(
    text: str,
    *,
    scale_min: float = 1,
    scale_max: float = 5,
    adversarial: bool = False,
    aspect: str | tuple[str, str] | list[str] | None = None,
    labels: Mapping[str, str] | None = None,
    truncated: bool = False,
) -> ParsedScore:
    """Parse one judge answer on the scale [scale_min, scale_max]; see ``llmjudge.parsing``.

    ``aspect`` is the question's key ("fluency") or its (key, question text) pair: that aspect's rating is
    read when the answer rates several, and the question's text repeated in the answer is not read.
    ``labels`` are the study's scale labels (``Study.scale_labels``), whose words count as ratings.
    ``truncated`` says the server stopped the answer at max_tokens: an answer without a verdict is then
    "cut off" rather than "no verdict".
    """
    reasoning, answer, cut_off = split_reasoning(text or "")
    if cut_off:
        return ParsedScore(None, UNPARSEABLE, "", reason=CUT_OFF_REASONING, reasoning=reasoning)
    if not answer:
        return ParsedScore(None, UNPARSEABLE, "", reason=CUT_OFF if truncated else EMPTY, reasoning=reasoning)
    key, question = (aspect, "") if isinstance(aspect, str) or aspect is None else (aspect[0], aspect[1])
    scale = Scale(float(scale_min), float(scale_max))
    options = Options(key or None, question or "", adversarial, _label_values(labels, scale))
    result = _read(answer, scale, options)
    if truncated and result.reason in (NO_VERDICT, TWO_VERDICTS):
        result = replace(result, reason=CUT_OFF)
    return replace(result, reasoning=reasoning)
