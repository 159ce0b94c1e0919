"""How far an agreement number can be trusted: the notes added beside a defined kappa or alpha (issue 25).

The value stays in the result (and its JSON); the note says why a reader should not take it at face value,
and the pages show the note in its place:

- ``too few items (n = 2)``: kappa, Fleiss' kappa and Krippendorff's alpha rest on fewer than
  ``MIN_ITEMS`` items (alpha: pairable items, with 2 or more ratings). On so few items one item moves the value
  by tenths and the bootstrap over items has a handful of distinct resamples (n = 3: 10), so its interval
  says little. docs/analysis.md documents the minimum.
- ``cut at ...``: the ceiling's t interval reached past what its score can be (above 1 for an accuracy) and
  was cut there; near such a bound a t interval is only approximate, and the cut side says nothing.
- ``no variation: ...``: a bootstrap interval whose bounds are equal. The replicates inside the interval all gave
  one value, so the width 0 reports no uncertainty, only that resampling so few items rarely changed it.
"""

from __future__ import annotations

from evalhub.analysis.result import Interval

MIN_ITEMS = 5
TOO_FEW = "too few items"  # how the note starts: pages find it among a row's notes


def too_few_items(n_items: int) -> str | None:
    """The note for a statistic computed on ``n_items`` items, or None from ``MIN_ITEMS`` items on."""
    return f"{TOO_FEW} (n = {n_items})" if n_items < MIN_ITEMS else None


def degenerate_interval(ci: Interval | None, kind: str = "bootstrap") -> str | None:
    """The note for an interval of width 0 (``kind``: "bootstrap", or "t" for the ceiling's), or None."""
    if ci is None or ci[0] != ci[1]:
        return None
    return f"no variation: the {kind} interval has width 0 (both bounds {ci[0]:.3f})"


def cut_interval(ci: Interval | None, bounds: tuple[float, float]) -> str | None:
    """The note for a t interval of nonzero width cut at ``bounds`` (the score's range; see ``mean_ci``), or None."""
    if ci is None or ci[0] == ci[1]:
        return None
    ends = (("below at", bounds[0], ci[0]), ("above at", bounds[1], ci[1]))
    cut = [f"{edge} {bound:.3f}" for edge, bound, end in ends if end == bound]
    if not cut:
        return None
    return (f"the t interval is cut {' and '.join(cut)}, the score's limit: this close to it a t interval is only "
            "approximate")
