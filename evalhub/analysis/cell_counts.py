"""What a table 1 cell's n counts, in words: the dashboard's cell and tooltip and the text report's table 1 ask the
same functions (issue 25, ninth review: the report's "full agreement 100%" did not say it rests on 3 items).

``samples`` is the pool's number of samples when it is an LLM pool (its n counts answers, ``samples`` per item
and question), 0 for a human pool (its n counts ratings); docs/analysis.md, "Words". Pure text over a ``CellRow``.
"""

from __future__ import annotations

from evalhub.analysis.result import CellRow


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def counts_head(c: CellRow, samples: int) -> str:
    """A cell's items and its ratings, or an LLM pool's answers: "3 items, 9 ratings",
    "3 items, 27 answers (3 samples of 3 items)"; "1 sample" in the singular (ninth review)."""
    items = _plural(c.n_items, "item")
    if samples:
        return f"{items}, {_plural(c.n_ratings, 'answer')} ({_plural(samples, 'sample')} of {items})"
    return f"{items}, {_plural(c.n_ratings, 'rating')}"


def counts_text(c: CellRow, samples: int) -> str:
    """What a cell's n counts and what its mean and std are over (the dashboard's tooltip): the std of an LLM pool
    is over its answers, not its items."""
    unit = "answers" if samples else "ratings"
    return f"{counts_head(c, samples)}; mean (std) over the {c.n_ratings} {unit}, sample std"


def agreement_text(c: CellRow, samples: int) -> str:
    """What % full agreement is a share of ("1 of 3 items"). It counts the items with 2 or more ratings: that is
    every item when ICC's complete items are all of them; otherwise the count is not in the result, and the words
    say so instead. "" when there is no % full agreement."""
    pct = c.full_agreement_pct
    if pct is None:
        return ""
    among = " among its own samples" if samples else ""
    if c.icc_n_items == c.n_items and c.n_items:
        agree = round(pct * c.n_items / 100)
        return f"{agree} of {_plural(c.n_items, 'item')}{among}"
    return f"of the items with 2 or more {'answers' if samples else 'ratings'}{among}"


def n_text(c: CellRow, samples: int) -> str:
    """The cell's n as the dashboard's cell shows it: "n = 9 ratings", an LLM pool's "n = 27 answers"."""
    return f"n = {_plural(c.n_ratings, 'answer' if samples else 'rating')}"
