"""Typed results of the statistics: a value that may be undefined always comes with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Stat:
    """A statistic that may be undefined: ``value`` is None exactly when ``reason`` says why."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class AlphaCI:
    """Percentile bootstrap interval for Krippendorff's alpha."""

    low: float | None
    high: float | None
    confidence: float
    n_boot: int
    n_valid: int  # replicates whose alpha was defined; the interval uses only these
    reason: str | None = None


@dataclass(frozen=True)
class ICCResult:
    """ICC(1) and ICC(1,k) with the data they rest on: ICC uses complete items only (every kept rater
    rated them), so ``n_items`` may be far fewer than the items rated (``n_rated_items``)."""

    icc1: Stat
    icc1k: Stat
    n_items: int  # complete items the ANOVA used
    n_raters: int  # raters (columns with at least one rating) the ANOVA used
    n_rated_items: int  # items with at least one rating


@dataclass(frozen=True)
class TauResult:
    tau: float | None
    p: float | None
    n: int
    reason: str | None = None
    # How p was computed, as scipy's kendalltau(method="auto") chose: "exact" or "asymptotic"; None with p undefined.
    p_method: str | None = None


@dataclass(frozen=True)
class PairwiseTau:
    mean_tau: float | None
    n_pairs: int  # rater pairs whose tau was defined and entered the mean
    reason: str | None = None
    # The pairs left out: (column i, column j, kendall_tau's reason, e.g. "x is constant over the 3 paired items").
    undefined: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class WelchResult:
    t: float | None
    df: float | None
    p: float | None
    mean_diff: float | None
    cohens_d: float | None
    n_a: int
    n_b: int
    unit: str
    reason: str | None = None


@dataclass(frozen=True)
class CorrResult:
    r: float | None
    p: float | None
    n: int
    reason: str | None = None


@dataclass(frozen=True)
class Describe:
    n_items: int
    n_ratings: int
    mean: float | None
    std: float | None
    reason: str | None = None
