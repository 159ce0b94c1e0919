"""``parse_pairwise``: a relative-grading answer to "A", "B" or "tie", or an honest status and its reason.

Same principles as ``parse_score``: the reasoning trace is split off and never read; explicit formats first
(``[RESULT] A``, a JSON ``winner``, ``[[A>B]]``, ``\\boxed{A}``, ``[Response B]``, "Winner: B", a correction
"B, no wait, A"), then prose a careful reader takes as a choice, in tiers (a stated choice "I prefer the second
response" > a verdict "Output (a) is better", "Antwort B ist besser" > a description "B is more concise"), then an
answer that is only, opens or closes with the choice; an answer that only scores both sides ("Response A: 5/10 ...
Response B: 7/10") chooses the higher (``side_scores``). Two different choices and no final one are "two
verdicts" (also two final markers that disagree, and a summing-up choice before a marker for the other side); naming
both ("A or B") is no verdict; an answer cut off right after "Verdict: Response A is" is no verdict; a refusal
without a verdict is ``refused``.
"Assistant 1/2" are read as A/B only when the study's prompt names the responses so (``assistant_names``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from llmjudge.parsing.common import (
    CUT_OFF,
    CUT_OFF_REASONING,
    EMPTY,
    NO_VERDICT,
    OK,
    REFUSED,
    RESULT_MARK,
    TWO_VERDICTS,
    UNPARSEABLE,
    ParsedChoice,
    feedback_before,
    is_conditional,
    is_negated,
    last_result_mark,
    own_sentence,
    sentence_at,
    set_apart,
)
from llmjudge.parsing.forms import bounded, is_hypothetical_choice, tail
from llmjudge.parsing.jsonish import find_json
from llmjudge.parsing.lexicon import FLAGS, FOLDED, LEX, Lazy, fold, is_refusal, refusals
from llmjudge.parsing.normalize import EchoOptions, Finals, Prepared, prepare, window
from llmjudge.parsing.reasoning import split_reasoning
from llmjudge.parsing.score_json import RATIONALE_KEYS
from llmjudge.parsing.side_scores import INCOMPARABLE, json_sides, side_by_side


@dataclass(frozen=True)
class Choice:
    choice: str  # "A" | "B" | "tie"
    start: int
    kind: str = ""
    ambiguous: bool = False  # two choices and no final one
    alternatives: bool = False  # "A or B": both options named, none chosen


def _c(pattern: str) -> Lazy:
    return Lazy(pattern, FOLDED)


_NOUN = LEX.pair_nouns
_ORDINAL = rf"the\s+(?:(?P<first>{LEX.pair_first})|(?P<second>{LEX.pair_second}))\s+(?:{_NOUN}|one)\b"
# A bare letter counts in prose only as a capital ("I'd choose B."; checked on the original text: groups
# named "cap"), a lower-case one only with its noun or parentheses, so "I prefer a shorter answer" is no choice.
# The ordinal and the noun of any language: "la primera respuesta", "die zweite Antwort", "第二个回答", "두 번째 응답".
_FOREIGN_ORDINAL = rf"(?:(?P<first>{LEX.pair_first})|(?P<second>{LEX.pair_second}))[^\S\n]*+(?:{_NOUN})"
_NOT = r"(?<!\w)(?:no|not|nicht|kein|pas|non|não|не|nie)\b|不|没"
_GAP_CHAR = r"[^.!?\n,;:、]"
_TOKEN = rf"(?:{_NOUN}\s+[(\[]?(?P<n>[ab])\b[)\]]?|\((?P<p>[ab])\)|\b(?P<cap>[ab])\b|{_ORDINAL})"
_CHOICE_TOKEN = rf"(?:{_NOUN}\s+)?[(\[]?\s*(?P<choice>a|b|c|tie|draw|equal)\b\s*[)\]]?"
_OTHER_CHOICE = _c(
    rf"(?P<dots>[^\S\n]*(?:\.\.\.|,))?\s*(?:or|/|vs\.?|and)\s*(?P<isit>is\s+it\s+)?(?:{_NOUN}\s+)?[(\[]?\s*[ab]\b"
)
_RESULT = _c(rf"\[\s*result\s*(?:\]|:)\s*+[:=\-]?\s*+[(\[]?\s*+{_CHOICE_TOKEN}")
_LABELED = _c(
    r"(?<!\w)(?:winner|verdict|answer|choice|preference|better\s+response|preferred(?:\s+response)?)"
    rf"(?:\s*[:=\-]|\s+is\b)\s*+[(\[]?\s*+{_CHOICE_TOKEN}"
)
# After a choice's letter no Latin or Cyrillic letter may follow; a Chinese one may ("A更好").
_LETTER_END = r"(?![0-9a-z_\u00c0-\u024f\u0400-\u04ff])"
# "Veredicto: B", "Urteil: Antwort B", "判定：B", "El ganador es B", "勝者はB": the other languages' labels. The
# letter must be a capital ("Veredicto: a favor de B" names no A).
_FOREIGN_LABELED = _c(
    rf"{LEX.pair_labels}(?:[^\S\n]*+[:=\-\u2013\u2014]|[^\S\n]+(?:es|é|est|è|ist|это)\b|[^\S\n]*+(?:是|は|는|은|为))"
    rf"[^\S\n]*+(?:(?:{_NOUN})[^\S\n]*+)?[(\[]?[^\S\n]*+(?:(?P<cap>[ab]){_LETTER_END}|(?P<tie>{LEX.pair_tie}))"
)
# "Prefiero la respuesta B", "Ich bevorzuge Antwort A", "我更喜欢回答B", "Я выбираю ответ Б", "je choisis la seconde".
# One adverb may stand between ("ich bevorzuge aber Antwort B"), not a negation; the noun may go unsaid after
# an ordinal ("je choisis la seconde").
_FOREIGN_PREFER = _c(
    rf"{LEX.pair_prefer}[^\S\n]*+(?:(?!{_NOT})[^\W\d_]{{2,12}}[^\S\n]+)??(?:(?:la|el|die|den|das|le|a|o|il|lo)[^\S\n]+)?"
    rf"(?:(?:(?:{_NOUN})[^\S\n]*+)?[(\[]?(?P<cap>[ab]){_LETTER_END}"
    rf"|(?:(?P<first>{LEX.pair_first})|(?P<second>{LEX.pair_second}))(?:[^\S\n]*+(?:{_NOUN}))?{_LETTER_END})"
)
_FINAL: tuple[Lazy, ...] = (
    _c(r"\[\[\s*+(?P<left>[ab])\s*+(?P<op>>>|>|=|<<|<)\s*+(?P<right>[ab])\s*+\]\]"),
    _c(r"(?P<left>[ab])(?<![\w<>=\[][ab])[^\S\n]*+(?P<op>>>|>|=|<<|<)[^\S\n]*+(?P<right>[ab])(?![\w<>=\]])"),
    _c(r"\[\[\s*+(?P<choice>a|b|c|tie)\s*+\]\]"),
    _c(r"\\boxed\{\s*+(?:\\text\{\s*+)?(?P<choice>a|b|tie)\b\s*+\}?\s*+\}"),
    _c(rf"\[\s*+(?:{_NOUN})\s+(?P<choice>a|b)\s*+\]"),
    _LABELED,
    _FOREIGN_LABELED,
    # "Both are fine. But if I'm forced to pick one: B": a commitment, not a supposition.
    _c(
        r"\bif\s+(?:(?:i(?:'m|\s+am|\s+was)\s+)?(?:forced|made|pushed|required|asked)\s+to|i\s+(?:must|had\s+to|have\s+to))"
        r"\s+(?:pick|choose)(?:\s+(?:one|1))?[^\S\n]*+[,:\u2013\u2014]?[^\S\n]*+(?:i'd\s+(?:say|pick|go\s+with)\s+|it'?s\s+)?"
        + _TOKEN
    ),
)
# The final markers searched in the middle of a long answer, and the words one of which each match holds.
_FINALS = Finals(
    _FINAL,
    ("[", "\\boxed", ">", "<", "=", "winner", "verdict", "answer", "choice", "prefer", "better response")
    + ("pick", "choose")
    + LEX.pair_label_words,
)
_CORRECTION = _c(
    rf"{LEX.corrections}[\s,.:;!\u2013\u2014\-]*+(?:(?:{_NOUN}\s+)?[(\[]?(?P<cap>[ab])\b(?!\s+is\s+(?:not|worse))"
    rf"|(?:actually[\s,]+)?{_ORDINAL})"
)
_END = r"(?=\s*(?:[.!\n]|\Z))"
# "B is better." is a verdict; "A is better written" or "better at X" only describes one side.
_UNQUALIFIED = r"(?=\s*(?:[.,;:!)\n]|\Z|(?:than|because|since|overall|here|in\s+general)\b))"
# "Unentschieden", "平局": a tie word alone.
_BARE_TIE = _c(rf"(?P<tie>{LEX.pair_tie})")
_TIERS: tuple[tuple[Lazy, ...], ...] = (
    (
        _c(
            r"\b(?:prefer|preferred|choose|chose|pick|picked|select|selected|go\s+with|favou?r|vote\s+for|"
            r"recommend|lean(?:ing)?\s+towards?)\s+" + _TOKEN
        ),
        _c(
            r"\b(?:better|preferred|stronger|winning)\s+(?:response|output|answer|one|option|story|summary)\s+is\s+"
            r"(?:\w+ly\s+)?" + _TOKEN
        ),
        _FOREIGN_PREFER,
        _c(r"\b(?:i'd|i\s+would)\s+say\s+" + _TOKEN + _END),
        _c(r"\b(?:so|therefore|thus|hence)[,:]?\s+" + _TOKEN + _END),
        _c(rf"[:\u2013\u2014]\s+(?:{_NOUN}\s+)(?P<cap>[ab])\.(?:\s|\Z)"),
    ),
    (
        _c(
            _TOKEN
            + r"\s+(?:is|was|seems|reads)\s+(?:\w+ly\s+|much\s+|far\s+|a\s+bit\s+|the\s+)?"
            + LEX.pair_better
            + _UNQUALIFIED
        ),
        _c(
            _TOKEN
            + r"\s+(?:gives|provides|offers|writes|has)\s+the\s+(?:more\s+\w+|better|stronger)\s+(?:answer|response)"
        ),
        _c(_TOKEN + r"\s+(?:\w+ly\s+)?(?:wins|is\s+the\s+winner|comes\s+out\s+ahead)\b"),
        # "B is the better response", "A is clearly the stronger answer overall".
        _c(
            _TOKEN
            + rf"\s+is\s+(?:\w+ly\s+)?the\s+(?:{LEX.pair_better})\s+(?:{_NOUN}|one)\b"
            + r"(?=\s*(?:[.,;:!)\n]|\Z|(?:overall|here|of\s+the\s+two)\b))"
        ),
        _c(rf"(?:{_NOUN})\s*(?P<cap>[ab])(?![a-z])[^.!?\n]{{0,14}}?{LEX.pair_better_foreign}"),
        # "La primera respuesta es mejor", "Die zweite Antwort ist besser", "第二个回答更好", "Первый ответ лучше".
        _c(rf"{_FOREIGN_ORDINAL}(?:(?!{_NOT}){_GAP_CHAR}){{0,14}}?{LEX.pair_better_foreign}"),
        _c(
            r"\b(?P<tie>it'?s\s+a\s+tie|(?:they|both(?:\s+\w+){0,3}?)\s+are\s+(?:equally\s+(?:good|strong|bad|weak)|"
            r"of\s+equal\s+quality|tied))\b"
        ),
        _BARE_TIE,
    ),
    (_c(_TOKEN + r"\s+(?:is|was|seems|reads)\s+(?:\w+ly\s+|much\s+|far\s+)?(?:more\s+\w+|better|stronger|superior)"),),
)
_SENTENCE_BREAK = _c(r"[.!?;\n]")
_FINAL_WORDS = _c(r"\b(?:overall|final|finally|in the end|ultimately|therefore|so|on balance)\b")
# An answer that stops right after a copula: "... Response A is", "Verdict: B seems".
_UNFINISHED = _c(
    r"(?<![^\W\d_])(?P<letter>[ab])(?![^\W\d_])[\s*_:]*+(?:is|was|seems|appears|looks|would\s+be|remains)"
    r"(?:[^\S\n]+(?:clearly|also|still|slightly|much|far|definitely|overall|the))?[\s*_:,]*+\Z"
)
_UNFINISHED_REACH = 60
# The markers before the last that are compared with it: a judge's answer has one or two.
_LAST_MARKS = 8
_SUMMING = _c(r"\b(?:overall|in\s+the\s+end|ultimately|on\s+balance|all\s+in\s+all|in\s+sum(?:mary)?|to\s+sum\s+up)\b")
_CUE = _c(rf"{LEX.corrections}|{LEX.revisions}|reconsider|second\s+thought|closer\s+inspection")
# The whole answer is the choice, as a pairwise study's "(Answer A or B.)" asks; nothing else may follow.
_ALONE = _c(rf"\A[\s\[(\"']*+(?:(?:{_NOUN})\s+[(\[]?)?(?P<choice>a|b|tie)[\s\])\"'.!]*+\Z")
# The answer opens with the choice, then explains it ("Response A. It is more concise."); after a bare
# letter a comma does not close the choice ("A, because ..." may go on to compare), after "Response B" it does.
_LEADING = _c(
    rf"\A[\s\[(]*(?:{_NOUN}\s+[(\[]?(?P<cap>[ab])[)\]]?\s*[.:!,\n]|[(\[]?(?P<cap2>[ab])[)\]]?\s*(?:[.:!]|\n))"
)
# The answer closes with the choice alone: "... [Response B]", "... Response B Response A" (two).
_CLOSING = _c(rf"(?:\A|[.!?:\n])\s*+((?:(?:{_NOUN})\s+[(\[]?[ab][)\]]?[\s,.]*+){{1,3}})\Z")
_CLOSING_LETTER = Lazy(rf"(?:{LEX.pair_nouns.replace('(?:', '(?i:', 1)})\s+[(\[]?(?P<cap>[AB])")
_CYRILLIC = {"\u0410": "A", "\u0411": "B"}
_CYRILLIC_LETTER = re.compile(r"(?<![\w])([\u0410\u0411])(?![\w])")
_MODEL_KEY = Lazy(r"\bmodel_(?P<c>[ab])\b", FLAGS)
_ASSISTANT_NUMBER = Lazy(r"\b(assistant|response|answer|output)\s?([12])\b", FLAGS)
_JSON_CHOICE_KEYS = ("winner", "preferred", "preference", "choice", "verdict", "better", "better_response", "answer")


def _choice_of(token: str) -> str:
    token = token.strip().lower()
    if token in ("a", "b"):
        return token.upper()
    # FastChat's pairwise prompt uses [[C]] for a tie.
    return "tie"


def _letter(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups.get("tie"):
        return "tie"
    if groups.get("first") or groups.get("second"):
        return "A" if groups.get("first") else "B"
    if groups.get("op"):
        if groups["op"] == "=":
            return "tie"
        return groups["left"].upper() if groups["op"].startswith(">") else groups["right"].upper()
    token = next(groups[g] for g in ("choice", "n", "p", "cap", "cap2") if groups.get(g))
    return _choice_of(token)


def _capitals(text: str, match: re.Match[str]) -> bool:
    """A bare letter ("cap" groups, "A>B") is a choice only as a capital in the original text."""
    for group in ("cap", "cap2", "left", "right"):
        if match.groupdict().get(group) and not text[match.start(group)].isupper():
            return False
    return True


def _letters(text: str, assistant_names: bool) -> str:
    """One spelling of the choices: Cyrillic "Ответ Б" is B, ``model_a`` is "Model A", and "Assistant 1/2" are
    A/B when the study's prompt names the responses so."""
    text = _CYRILLIC_LETTER.sub(lambda m: _CYRILLIC[m.group(1)], text)
    text = _MODEL_KEY.sub(lambda m: f"Model {m.group('c').upper()}", text)
    if assistant_names:
        text = _ASSISTANT_NUMBER.sub(lambda m: f"{m.group(1)} {'A' if m.group(2) == '1' else 'B'}", text)
    return text


def _resolve(found: list[Choice], low: str) -> Choice | None:
    if not found:
        return None
    ordered = sorted(found, key=lambda c: c.start)
    last = ordered[-1]
    if any(c.ambiguous for c in ordered):
        return replace(last, ambiguous=True)
    if any(c.alternatives for c in ordered):
        return replace(last, alternatives=True)
    differing = [c for c in ordered if c.choice != last.choice]
    if not differing:
        return last
    if last.kind == "correction" or _CUE.search(low, differing[-1].start, max(differing[-1].start, last.start)):
        return last
    # "Final answer: [[A>B]] [[B>A]]": two choices side by side in one statement are two verdicts, final or not.
    if _SENTENCE_BREAK.search(low, differing[-1].start, last.start) is None:
        return replace(last, ambiguous=True)
    # "My final verdict is: [[A>B]] ... My final verdict is: [[B>A]]": two final verdicts, none corrected.
    if _FINAL_WORDS.search(sentence_at(low, last.start)) and not (
        differing[-1].kind == "final" and _FINAL_WORDS.search(sentence_at(low, differing[-1].start))
    ):
        return last
    return replace(last, ambiguous=True)


def _in_refusal(r: Prepared, start: int, refused: list[re.Match[str]], kind: str) -> bool:
    """A choice after a refusal belongs to it unless a contrast sets it apart, or, for an explicit verdict
    (``[[A>B]]``, "Verdict: B"), a line of its own, or, for a choice stated in prose ("I can't compare them
    on speed. Response B is better overall."), a sentence of its own that does not take it back."""
    return any(
        x.start() < start
        and not set_apart(r.low, x.end(), start, own_line=kind == "final")
        and not (kind == "prose" and own_sentence(r.low, x.end(), start))
        for x in refused
    )


def _found(pattern: Lazy, r: Prepared, kind: str, refused: list[re.Match[str]]) -> list[Choice]:
    found = []
    for match in bounded(pattern, r.low):
        if is_negated(r.low, match.start()) or not _capitals(r.text, match):
            continue
        if is_hypothetical_choice(r.low, match.end()) or _in_refusal(r, match.start(), refused, kind):
            continue
        # In an answer that refuses, "If I were to judge ..., it would be [[A>B]]" is no choice.
        if refused and is_conditional(r.low, match.start()):
            continue
        choice = Choice(_letter(match), match.start(), kind)
        other = _OTHER_CHOICE.match(r.low, match.end())
        if other is not None:
            # "B... or is it A?" takes a choice back: two verdicts; "A or B" only names the options.
            taken_back = bool(other.group("isit") or other.group("dots"))
            choice = replace(choice, ambiguous=taken_back, alternatives=not taken_back)
        found.append(choice)
    return found


def _from_json(answer: str) -> tuple[str | None, str] | None:
    """The choice of a JSON answer (``{"winner": "model_b"}``, ``{"preferred": "A", "reason": ...}``) and its
    rationale; None when the answer holds no such JSON."""

    def wanted(value: dict[str, object] | list[object], whole: bool) -> bool:
        return isinstance(value, dict) and (any(k in value for k in _JSON_CHOICE_KEYS) or json_sides(value) is not None)

    found = find_json(window(answer), wanted)
    if found is None or not isinstance(found.value, dict):
        return None
    obj = found.value
    explanation = next((obj[k] for k in RATIONALE_KEYS if isinstance(obj.get(k), str)), None)
    raw = next((obj[k] for k in _JSON_CHOICE_KEYS if k in obj), None)
    if raw is None:
        return json_sides(obj), str(explanation).strip() if explanation is not None else answer
    match = _ALONE.match(fold(_letters(raw, assistant_names=False))) if isinstance(raw, str) else None
    choice = _choice_of(match.group("choice")) if match else None
    return choice, str(explanation).strip() if explanation is not None else answer


def _from_result(r: Prepared, answer: str) -> ParsedChoice:
    """``[RESULT] A``: the last marker counts because the verdict closes the feedback; a marker with no
    verdict after it, or with two ("[RESULT] A or B"), is unparseable; an earlier marker with the other choice
    makes two verdicts unless a correction stands between them (as ``[RESULT] 4 ... [RESULT] 2`` for scores)."""
    rationale = feedback_before(answer, last_result_mark(answer))
    marks = list(RESULT_MARK.finditer(r.low))
    match = _RESULT.match(r.low, marks[-1].start())
    earlier = [m for x in marks[-_LAST_MARKS:-1] if (m := _RESULT.match(r.low, x.start())) is not None]
    if match is not None and any(
        _choice_of(m.group("choice")) != _choice_of(match.group("choice"))
        and not _CUE.search(r.low, m.end(), match.start())
        for m in earlier
    ):
        return ParsedChoice(None, UNPARSEABLE, rationale, reason=TWO_VERDICTS)
    if match is None:
        refused = bool(refusals(r.low))
        return ParsedChoice(None, REFUSED if refused else UNPARSEABLE, rationale, reason="" if refused else NO_VERDICT)
    if _OTHER_CHOICE.match(r.low, match.end()):
        return ParsedChoice(None, UNPARSEABLE, rationale, reason=NO_VERDICT)
    return ParsedChoice(_choice_of(match.group("choice")), OK, rationale)


def _prose(r: Prepared, refused: list[re.Match[str]]) -> Choice | None:
    """The choice the prose states, tier by tier: the first tier that speaks decides."""
    for tier in _TIERS:
        found = [
            c
            for pattern in tier
            # In a refusal, a bare "tie" ("[[C]] pour une égalité") names an option, it does not choose one.
            if not (refused and pattern is _BARE_TIE)
            for c in _found(pattern, r, "prose", refused)
            if not is_conditional(r.low, c.start) or c.choice == "tie"
        ]
        resolved = _resolve(found, r.low)
        if resolved is not None:
            return resolved
    return None


def _opening_or_closing(r: Prepared, refused: list[re.Match[str]]) -> Choice | None:
    for pattern in (_ALONE, _LEADING):
        match = pattern.search(r.low)
        if match and _capitals(r.text, match):
            return Choice(_letter(match), match.start())
    closing = _CLOSING.search(r.low, *tail(r.low))
    if closing is None or _in_refusal(r, closing.start(1), refused, "final"):
        return None
    letters = {m.group("cap") for m in _CLOSING_LETTER.finditer(r.text, *closing.span(1))}
    if not letters:
        return None
    return Choice(letters.pop(), closing.start(), ambiguous=len(letters) > 0)


def _final(r: Prepared, refused: list[re.Match[str]]) -> Choice | None:
    found = [c for p in _FINAL for c in _found(p, r, "final", refused)]
    for match in bounded(_CORRECTION, r.low):
        # A correction corrects something: a choice stands shortly before it.
        if _capitals(r.text, match) and re.search(
            r"(?<![a-z])[ab](?![a-z])", r.low[max(0, match.start() - 60) : match.start()]
        ):
            # "Response A, no, actually the second one": the ordinal names the choice.
            found.append(Choice(_letter(match), match.start(), "correction"))
    return _resolve(found, r.low)


def _contradicted(r: Prepared, final: Choice, refused: list[re.Match[str]]) -> Choice:
    """An explicit verdict that the explanation after it contradicts, with no correction between ("[[A>B]] ...
    so B is the better response"), is two verdicts: stated choices and verdicts after it must agree with it."""
    before: list[Choice] = []
    for tier in _TIERS[:2]:
        for pattern in tier:
            for choice in _found(pattern, r, "prose", refused):
                if choice.alternatives or is_conditional(r.low, choice.start):
                    continue
                if choice.start < final.start:
                    before.append(choice)
                    continue
                if choice.choice == final.choice or _CUE.search(r.low, final.start, choice.start):
                    continue
                return replace(final, ambiguous=True)
    # "Response A is more helpful ... My final verdict is: [[B>A]]": the prose's last choice of one response before a
    # marker for the other must agree with it too, unless a correction stands between them (a tie is no such side).
    # A description ("A is more helpful") is a verdict there when its sentence sums up ("Overall, ...").
    before += [
        c
        for c in _found(_TIERS[2][0], r, "prose", refused)
        if c.start < final.start and not c.alternatives and _SUMMING.search(sentence_at(r.low, c.start))
    ]
    last = max(before, key=lambda c: c.start, default=None)
    if last is None or "tie" in (last.choice, final.choice) or final.kind == "correction":
        return final
    if last.choice != final.choice and not _CUE.search(r.low, last.start, final.start):
        return replace(final, ambiguous=True)
    return final


def _by_scores(r: Prepared, prose: Choice | None, assistant_names: bool) -> Choice | None:
    """Side-by-side scores ("Response A: 5/10 ... Response B: 7/10") choose the higher; a prose choice that
    disagrees with them makes two verdicts."""
    side = side_by_side(r.low, pair_line=assistant_names)
    if side is None:
        return prose
    if side == INCOMPARABLE:
        return prose or Choice("A", 0, "scores", ambiguous=True)
    if prose is None or prose.ambiguous or prose.alternatives:
        return Choice(side, 0, "scores") if prose is None else prose
    return prose if prose.choice == side else replace(prose, ambiguous=True)


def _read(answer: str, assistant_names: bool) -> ParsedChoice:
    from_json = _from_json(answer)
    if from_json is not None:
        choice, rationale = from_json
        if choice is None:
            declined = is_refusal(rationale)
            return ParsedChoice(
                None, REFUSED if declined else UNPARSEABLE, rationale, reason="" if declined else NO_VERDICT
            )
        return ParsedChoice(choice, OK, rationale)
    r = prepare(answer, EchoOptions(), letters=lambda text: _letters(text, assistant_names), finals=_FINALS)
    if RESULT_MARK.search(r.low):
        return _from_result(r, answer)
    refused = refusals(r.low)
    found = _final(r, refused)
    if found is not None and not found.ambiguous:
        found = _contradicted(r, found, refused)
    found = found or _by_scores(r, _prose(r, refused), assistant_names) or _opening_or_closing(r, refused)
    # A refusal that names the options ("the format would be [[A]] or [[B]]") or quotes several of them
    # states no choice: it stays a refusal.
    if found is None or found.alternatives or (refused and found.ambiguous):
        refusal = bool(refused)
        return ParsedChoice(None, REFUSED if refusal else UNPARSEABLE, answer, reason="" if refusal else NO_VERDICT)
    if found.ambiguous:
        return ParsedChoice(None, UNPARSEABLE, answer, reason=TWO_VERDICTS)
    if _unfinished(r.low, found):
        return ParsedChoice(None, UNPARSEABLE, answer, reason=NO_VERDICT)
    return ParsedChoice(found.choice, OK, answer)


def _unfinished(low: str, found: Choice) -> bool:
    """ "**Verdict:** Response A is": the answer stops in the verdict's sentence, before what it says of the choice
    ("... is worse", "... is not better"); the subject named is no verdict."""
    cut = _UNFINISHED.search(low, max(0, len(low) - _UNFINISHED_REACH))
    if cut is None or found.start > cut.start() or _choice_of(cut.group("letter")) != found.choice:
        return False
    return cut.start() - found.start <= _UNFINISHED_REACH and not _SENTENCE_BREAK.search(low, found.start, cut.start())


def parse_pairwise(text: str, *, assistant_names: bool = False, truncated: bool = False) -> ParsedChoice:
    """Parse a relative-grading answer; see the module docstring for the forms and their order.

    ``assistant_names``: the study's prompt calls the responses "Assistant 1" and "Assistant 2".
    ``truncated``: the server stopped the answer at max_tokens, so an answer without a verdict is "cut off".
    """
    reasoning, answer, cut_off = split_reasoning(text or "")
    if cut_off:
        return ParsedChoice(None, UNPARSEABLE, "", reason=CUT_OFF_REASONING, reasoning=reasoning)
    if not answer:
        return ParsedChoice(None, UNPARSEABLE, "", reason=CUT_OFF if truncated else EMPTY, reasoning=reasoning)
    result = _read(answer, assistant_names)
    if truncated and result.reason in (NO_VERDICT, TWO_VERDICTS):
        result = replace(result, reason=CUT_OFF)
    return replace(result, reasoning=reasoning)
