"""``parse_pairwise``: a relative-grading answer to "A", "B" or "tie", or an honest status.

Same principles as ``parse_score``: explicit formats first, then prose a careful reader takes as
a choice; two different choices and no final one is ``unparseable``; a refusal without a verdict
is ``refused``.
"""

from __future__ import annotations

import re

from llmjudge.parsing.common import (
    FLAGS,
    OK,
    REFUSED,
    RESULT_MARK,
    UNPARSEABLE,
    ParsedChoice,
    feedback_before,
    is_negated,
    is_refusal,
    plain,
    sentence_at,
)

_NOUN = r"(?:response|output|answer|story|option|summary|candidate|assistant|text|choice)"
# "A", "(a)", "Response B", "Output (a)", "option b)": a lettered choice with its optional noun.
_CHOICE_TOKEN = r"(?:" + _NOUN + r"\s+)?[(\[]?\s*(?P<choice>a|b|c|tie|draw|equal)\b\s*[)\]]?"
_OTHER_CHOICE = re.compile(r"\s*(?:or|/|vs\.?|and)\s*(?:" + _NOUN + r"\s+)?[(\[]?\s*[ab]\b", FLAGS)
_PAIR_RESULT = re.compile(r"\[\s*result\s*\]\s*+[:=\-]?\s*+[(\[]?\s*+" + _CHOICE_TOKEN, FLAGS)
_PAIR_BRACKET = re.compile(r"\[\[\s*+(?P<choice>a|b|c|tie)\s*+\]\]", FLAGS)
_PAIR_LABELED = re.compile(
    r"(?<!\w)(?:winner|verdict|answer|choice|preference|better\s+response|preferred(?:\s+response)?)"
    r"(?:\s*[:=\-]|\s+is\b)\s*+[(\[]?\s*+" + _CHOICE_TOKEN,
    FLAGS,
)
# The whole answer is the choice, as a pairwise study's "(Answer A or B.)" asks; nothing else may follow.
_PAIR_ALONE = re.compile(
    r"\A[\s\[(\"']*+(?:(?:story|response|output|candidate|option)\s+[(\[]?)?(?P<choice>a|b|tie)[\s\])\"'.!]*+\Z",
    FLAGS,
)
# The answer opens with the choice, then explains it ("Response A. It is more concise."), as the
# explain variant of a score does ("4. The story ..."); after a bare letter a comma does not close
# the choice ("A, because ..." may go on to compare), after "Response B" it does.
_PAIR_LEADING = re.compile(
    r"\A[\s\[(]*(?:" + _NOUN + r"\s+[(\[]?(?-i:(?P<n>[AB]))[)\]]?\s*[.:!,\n]"
    r"|[(\[]?(?-i:(?P<choice>[AB]))[)\]]?\s*(?:[.:!]|\n))",
    FLAGS,
)
# A bare capital letter counts in prose ("I'd choose B."), a lower-case one only with its noun or
# parentheses, so "I prefer a shorter answer" is no choice. Ordinals ("the second one") are not
# read: the prompt names the responses A and B.
_PROSE_TOKEN = r"(?:" + _NOUN + r"\s+[(\[]?(?P<n>[ab])\b[)\]]?|\((?P<p>[ab])\)|(?-i:\b(?P<c>[AB])\b))"
_END = r"(?=\s*(?:[.!\n]|\Z))"
# "B is better." is a verdict; "A is better written" or "better at X" only describes one side.
_UNQUALIFIED = r"(?=\s*(?:[.,;:!)\n]|\Z|(?:than|because|since|overall|here|in\s+general)\b))"
# Tiers, strongest first: a stated choice ("I prefer B", "so A."), then a verdict ("B is better",
# "both are equally good"), then a description ("Summary B is more faithful"). The first tier that
# speaks decides, so "B is more concise. I would choose A." is A.
_TIERS: tuple[tuple[re.Pattern[str], ...], ...] = (
    (
        re.compile(
            r"\b(?:prefer|preferred|choose|chose|pick|picked|select|selected|go\s+with|favou?r|vote\s+for|"
            r"recommend|lean(?:ing)?\s+towards?)\s+" + _PROSE_TOKEN,
            FLAGS,
        ),
        re.compile(
            r"\b(?:better|preferred|stronger|winning)\s+(?:response|output|answer|one|option|story|summary)\s+is\s+"
            + _PROSE_TOKEN,
            FLAGS,
        ),
        re.compile(r"\b(?:i'd|i\s+would)\s+say\s+" + _PROSE_TOKEN + _END, FLAGS),
        re.compile(r"\b(?:so|therefore|thus|hence)[,:]?\s+" + _PROSE_TOKEN + _END, FLAGS),
    ),
    (
        re.compile(
            _PROSE_TOKEN + r"\s+(?:is|was|seems|reads)\s+(?:\w+ly\s+|much\s+|far\s+|a\s+bit\s+|the\s+)?"
            r"(?:better|superior|preferable|preferred|stronger|winner)\b" + _UNQUALIFIED,
            FLAGS,
        ),
        re.compile(
            r"\b(?P<tie>it'?s\s+a\s+tie|(?:they|both(?:\s+\w+){0,3}?)\s+are\s+(?:equally\s+(?:good|strong|bad|weak)|"
            r"of\s+equal\s+quality|tied))\b",
            FLAGS,
        ),
    ),
    (
        re.compile(
            _PROSE_TOKEN
            + r"\s+(?:is|was|seems|reads)\s+(?:\w+ly\s+|much\s+|far\s+)?(?:more\s+\w+|better|stronger|superior)",
            FLAGS,
        ),
    ),
)
_FINAL_WORDS = re.compile(r"\b(?:overall|final|finally|in the end|ultimately|therefore|so|on balance)\b", FLAGS)


def _choice_of(token: str) -> str:
    token = token.lower()
    if token in ("a", "b"):
        return token.upper()
    # FastChat's pairwise prompt uses [[C]] for a tie.
    return "tie"


def _letter(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups.get("tie"):
        return "tie"
    return str(groups.get("n") or groups.get("p") or groups.get("c")).upper()


def _prose_choice(text: str) -> str | None:
    """The choice the prose states; None when it states none, "" when it states two and none is final."""
    for tier in _TIERS:
        found = sorted(
            (match.start(), _letter(match))
            for pattern in tier
            for match in pattern.finditer(text)
            if not is_negated(text, match.start())
        )
        if not found:
            continue
        if len({choice for _, choice in found}) == 1:
            return found[0][1]
        last_pos, last_choice = found[-1]
        return last_choice if _FINAL_WORDS.search(sentence_at(text, last_pos)) else ""
    return None


def parse_pairwise(text: str) -> ParsedChoice:
    """Parse a relative-grading answer (Prometheus ``[RESULT] A``, FastChat ``[[A]]``/``[[C]]``, prose)."""
    if not text or not text.strip():
        return ParsedChoice(None, UNPARSEABLE, "")
    full = text.strip()
    text_ = plain(full)
    marks = list(RESULT_MARK.finditer(text_))
    if marks:
        # The last marker counts because the verdict closes the feedback; a marker with no verdict
        # after it, or with two ("[RESULT] A or B"), is unparseable.
        rationale = feedback_before(full, list(RESULT_MARK.finditer(full))[-1].start())
        match = _PAIR_RESULT.match(text_, marks[-1].start())
        if match is None or _OTHER_CHOICE.match(text_, match.end()):
            return ParsedChoice(None, UNPARSEABLE, rationale)
        return ParsedChoice(_choice_of(match.group("choice")), OK, rationale)
    for pattern in (_PAIR_BRACKET, _PAIR_LABELED):
        match = pattern.search(text_)
        if match:
            if pattern is _PAIR_LABELED and _OTHER_CHOICE.match(text_, match.end()):
                return ParsedChoice(None, UNPARSEABLE, full)
            return ParsedChoice(_choice_of(match.group("choice")), OK, full)
    choice = _prose_choice(text_)
    if choice == "":
        return ParsedChoice(None, UNPARSEABLE, full)
    if choice is not None:
        return ParsedChoice(choice, OK, full)
    match = _PAIR_ALONE.search(text_) or _PAIR_LEADING.search(text_)
    if match:
        return ParsedChoice(_choice_of(match.group("choice") or match.group("n")), OK, full)
    if is_refusal(full):
        return ParsedChoice(None, REFUSED, full)
    return ParsedChoice(None, UNPARSEABLE, full)
