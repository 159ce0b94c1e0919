"""Position bias of a pairwise judge: how often its choice flips when A and B are swapped.

Each pair is one item and question asked twice: once as the study shows it (``original``) and once
with the two responses swapped (``swapped``), the swapped choice already mapped back to the original
orientation (1 = response A, 2 = response B, 3 = tie; NaN = no answer). A judge that reads the
responses gives the same mapped choice both times; a judge that picks a position flips.

- The flip rate: the share of pairs whose two choices differ (a tie against a choice is a flip).
- The first-position share: of the decisive answers of both orientations (ties left out), the share
  that chose the response shown first: an original "A" or a swapped answer mapped back to "B". The
  design is balanced (every pair is asked in both orientations), so a judge without position bias
  has 0.5 whatever its taste in responses.

Both come with Wilson score intervals (the answers are treated as independent trials).

People are not asked both orientations of a pair; a counterbalanced study shows each rater A and B swapped on
about half of the items (annotations.rendering.pair_swapped). Their ``first_position_share`` is the same share
over their decisive choices, each with the orientation its rater saw.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from evalhub.stats.inputs import as_vector

A, B = 1.0, 2.0


@dataclass(frozen=True)
class Proportion:
    """k successes of n trials, with its Wilson interval; ``value`` None (with a reason) when n = 0."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    reason: str = ""


def wilson_interval(k: int, n: int, *, confidence: float = 0.95) -> Proportion:
    """The Wilson score interval of a proportion k / n (Wilson 1927; statsmodels' method="wilson")."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(k=0, n=0, value=None, low=None, high=None, reason="no trials")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Proportion(k=k, n=n, value=p, low=max(0.0, centre - half), high=min(1.0, centre + half))


@dataclass(frozen=True)
class PositionBias:
    n_pairs: int  # pairs with an answer in both orientations
    flip: Proportion  # pairs whose mapped choices differ
    first_position: Proportion  # decisive answers choosing the response shown first
    prefers_first: bool  # the first-position interval lies above 0.5
    prefers_second: bool  # ... below 0.5


def position_bias(
    original: npt.ArrayLike, swapped: npt.ArrayLike, *, confidence: float = 0.95
) -> PositionBias:
    """The flip rate and first-position share of paired choices (see the module's docstring)."""
    first = as_vector(original, "original")
    second = as_vector(swapped, "swapped")
    if first.shape != second.shape:
        raise ValueError(f"original and swapped must have the same length, got {first.size} and {second.size}")
    both = ~np.isnan(first) & ~np.isnan(second)
    first, second = first[both], second[both]
    flips = int(np.count_nonzero(first != second))
    # Shown first: the original A, and in a swapped prompt the original B (its mapped choice is B).
    decisive = int(np.count_nonzero(np.isin(first, (A, B))) + np.count_nonzero(np.isin(second, (A, B))))
    first_wins = int(np.count_nonzero(first == A) + np.count_nonzero(second == B))
    share = wilson_interval(first_wins, decisive, confidence=confidence)
    return PositionBias(
        n_pairs=int(first.size),
        flip=wilson_interval(flips, int(first.size), confidence=confidence),
        first_position=share,
        prefers_first=share.low is not None and share.low > 0.5,
        prefers_second=share.high is not None and share.high < 0.5,
    )


def first_position_share(
    choices: npt.ArrayLike, swapped: npt.ArrayLike, *, confidence: float = 0.95
) -> Proportion:
    """Of the decisive choices (1 = response A, 2 = response B, in the file's orientation; ties and NaN left
    out), the share that chose the response shown first: an A shown unswapped or a B shown swapped.

    ``swapped`` says, per choice, whether its rater saw the pair swapped. Wilson interval; value None (with a
    reason) when no choice is decisive. Without swapped choices the share is only the share of A choices.
    """
    chosen = as_vector(choices, "choices")
    flipped = np.asarray(swapped, dtype=bool)
    if flipped.shape != chosen.shape:
        raise ValueError(f"choices and swapped must have the same length, got {chosen.size} and {flipped.size}")
    decisive = np.isin(chosen, (A, B))
    shown_first = np.where(flipped, chosen == B, chosen == A) & decisive
    return wilson_interval(int(np.count_nonzero(shown_first)), int(np.count_nonzero(decisive)),
                           confidence=confidence)
