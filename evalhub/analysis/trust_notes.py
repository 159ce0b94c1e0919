"""How far an agreement number can be trusted: the notes added beside a defined kappa or alpha (issue 25).

The value stays in the result (and its JSON); the note says why a reader should not take it at face value,
and the pages show the note in its place:

- ``too few items (n = 2)``: kappa, Fleiss' kappa and Krippendorff's alpha rest on fewer than
  ``MIN_ITEMS`` items (alpha: pairable items, with 2 or more ratings). On so few items one item moves the value
  by tenths and the bootstrap over items has a handful of distinct resamples (n = 3: 10), so its interval
  says little. docs/analysis.md documents the minimum.
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
