"""A pairwise answer that scores both responses side by side and says nothing else: the higher score wins.

"Response A: 5/10 ... Response B: 7/10", FastChat's pair format "8 6" on the first line (Assistant 1's score first;
read with ``assistant_names`` only) and a JSON ``{"model_a": 7, "model_b": 4}``. Equal scores are a tie. Scores on
different scales ("4/5" beside "7/10") are ``INCOMPARABLE``; a side scored twice with two numbers (per-criterion
lines) or one side alone give nothing here.
"""

from __future__ import annotations

import re

from llmjudge.parsing.lexicon import FOLDED, Lazy, to_number

# "Response A: 5/10", "**Assistant B** — 7 out of 10", "Output (a): 3". The text has its letters mapped
# already ("Assistant 1" is A where the study names the responses so).
_SIDE = Lazy(
    r"^[^\S\n]*+[#>*_\-]*+[^\S\n]*+(?:response|assistant|output|answer|model|candidate)[^\S\n]*+[(\[]?(?P<side>[ab])"
    r"(?![^\W\d_])[)\]]?[*_]*+[^\S\n]*+(?:'s\s+score|score)?[^\S\n]*+[:=\-\u2013\u2014][^\S\n]*+[*_]*+"
    r"(?P<num>\d+(?:\.\d+)?)(?![\d.])(?:[^\S\n]*+(?:/|out\s+of)[^\S\n]*+(?P<den>\d+(?:\.\d+)?))?(?![\w/])",
    FOLDED | re.MULTILINE,
)
# MT-bench's pair format: the first line holds the two scores and nothing else.
_PAIR_LINE = Lazy(r"\A\s*+(?P<a>\d+(?:\.\d+)?)[^\S\n]+(?P<b>\d+(?:\.\d+)?)[^\S\n]*+(?:\n|\Z)")
_JSON_SIDES = {
    "A": ("model_a", "response_a", "assistant_a", "output_a", "a", "score_a", "assistant_1", "model_1"),
    "B": ("model_b", "response_b", "assistant_b", "output_b", "b", "score_b", "assistant_2", "model_2"),
}
# More side lines than this are a per-criterion table, not two scores.
_MAX_LINES = 4


# Both sides scored on different scales: no choice, and none may be read from the answer's opening either.
INCOMPARABLE = "incomparable"


def _winner(a: float, b: float) -> str:
    return "A" if a > b else "B" if b > a else "tie"


def side_by_side(low: str, *, pair_line: bool) -> str | None:
    """The choice the two scores of the folded ``low`` make, or None when it does not score both sides once.
    ``pair_line``: the study's prompt names the responses "Assistant 1/2", as FastChat's pair format does."""
    pair = _PAIR_LINE.match(low) if pair_line else None
    if pair is not None:
        a, b = to_number(pair.group("a")), to_number(pair.group("b"))
        return _winner(a, b) if a is not None and b is not None else None
    lines = list(_SIDE.finditer(low))
    if not lines or len(lines) > _MAX_LINES:
        return None
    scores: dict[str, set[tuple[float | None, str | None]]] = {"a": set(), "b": set()}
    for line in lines:
        scores[line.group("side")].add((to_number(line.group("num")), line.group("den")))
    if len(scores["a"]) != 1 or len(scores["b"]) != 1:
        return None
    (a, den_a), (b, den_b) = scores["a"].pop(), scores["b"].pop()
    if a is None or b is None:
        return None
    # "Response A: 4/5 ... Response B: 7/10": both scored, on scales that do not compare.
    return _winner(a, b) if den_a == den_b else INCOMPARABLE


def json_sides(value: dict[str, object]) -> str | None:
    """``{"model_a": 7, "model_b": 4}``: the higher-scored side; None unless both sides hold a number."""
    found: dict[str, float] = {}
    for side, keys in _JSON_SIDES.items():
        number = next((value[k] for k in keys if k in value), None)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            found[side] = float(number)
    return _winner(found["A"], found["B"]) if len(found) == 2 else None
