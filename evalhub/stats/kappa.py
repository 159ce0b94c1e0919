"""Cohen's kappa (unweighted, linear, quadratic) and Fleiss' kappa, with percentile bootstrap CIs over items.

Both kappas are computed from counts that depend only on a few integers per item: the (label, label)
cell of a pair for Cohen's, the vector of category counts for Fleiss'. Resampling items with
replacement is then a multinomial draw of those cells' or patterns' frequencies, as in
``alpha_bootstrap_ci``: a 1000-replicate CI costs milliseconds whatever the number of items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalhub.stats.agreement import majority_choice
from evalhub.stats.confusion import category_index, category_list, majority_pairs
from evalhub.stats.inputs import ValueCounts, as_matrix, as_vector, checked_counts, complete_pairs, unique_first_counts

Weights = Literal["unweighted", "linear", "quadratic"]
WEIGHTS: tuple[Weights, ...] = ("unweighted", "linear", "quadratic")
PoolReduction = Literal["majority", "rounded_mean"]

# Replicates are drawn in chunks so that the (replicates x cells) matrices stay a few tens of MB.
_BOOTSTRAP_CELLS_PER_CHUNK = 4_000_000
_NO_EXPECTED_DISAGREEMENT = "no variation: both label vectors use one and the same category (no expected disagreement)"


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval over items (same fields and rules as ``AlphaCI``)."""

    low: float | None
    high: float | None
    confidence: float
    n_boot: int
    n_valid: int  # replicates whose statistic was defined; the interval uses only these
    reason: str | None = None


@dataclass(frozen=True)
class KappaResult:
    """A kappa that may be undefined (``value`` None exactly when ``reason`` says why), with its CI.

    ``n_items`` items entered the kappa; ``n_tied`` (human majority tied) and ``n_unpaired`` (a label
    missing, or fewer than 2 ratings for Fleiss) were left out.
    """

    value: float | None
    n_items: int
    ci: BootstrapCI
    reason: str | None = None
    n_tied: int = 0
    n_unpaired: int = 0


def _check_bootstrap(n_boot: int, confidence: float) -> None:
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")


def _percentile_ci(replicates: np.ndarray, n_boot: int, confidence: float, what: str) -> BootstrapCI:
    """The percentile interval of the defined (non-NaN) replicates, as ``alpha_bootstrap_ci`` takes it."""
    valid = replicates[~np.isnan(replicates)]
    if valid.size == 0:
        return BootstrapCI(None, None, confidence, n_boot, 0, f"{what} undefined in every replicate")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(valid, [tail, 100 - tail])
    return BootstrapCI(float(low), float(high), confidence, n_boot, int(valid.size))


def _multinomial_replicates(freq: np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    """Chunks of bootstrap frequency draws (rows of ``Multinomial(sum freq, freq / sum freq)``).

    The same distribution as resampling the items with replacement and counting them per cell/pattern.
    """
    rng = np.random.default_rng(seed)
    total = int(freq.sum())
    probabilities = freq / total
    chunk = max(1, _BOOTSTRAP_CELLS_PER_CHUNK // max(len(freq), 1))
    return [
        rng.multinomial(total, probabilities, size=min(chunk, n_boot - start)).astype(float)
        for start in range(0, n_boot, chunk)
    ]


def _weight_matrix(k: int, weights: str) -> np.ndarray:
    """Disagreement weights by position in the category list (as scikit-learn's ``cohen_kappa_score``)."""
    i = np.arange(k, dtype=float)
    if weights == "unweighted":
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(i[:, None] - i[None, :])
    if weights == "quadratic":
        return (i[:, None] - i[None, :]) ** 2
    raise ValueError(f"unknown weights {weights!r}; expected one of {', '.join(WEIGHTS)}")


def _cohen_from_counts(counts: np.ndarray, weightings: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Kappa for each (B, K, K) matrix of whole-number counts, one array per weight matrix; NaN where the expected
    weighted disagreement is 0.

    The margins and the observed disagreement are sums of whole numbers, exact in any order, so they are matrix
    products (numpy sums a short middle axis ten times slower), shared by the weightings; the expected
    disagreement, a sum of fractions, is summed as it always was, so that every value stays the same float.
    """
    b, k, _ = counts.shape
    ones = np.ones(k)
    rows, cols = counts @ ones, ones @ counts
    n = rows @ ones
    expected = rows[:, :, None] * cols[:, None, :] / n[:, None, None]
    flat = counts.reshape(b, k * k)
    out = []
    for w in weightings:
        observed_d = flat @ w.reshape(-1)
        expected_d = (w * expected).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = 1.0 - observed_d / expected_d
        # exact zero test as in scikit-learn: expected_d is a sum of non-negative terms.
        out.append(np.where(expected_d > 0, kappa, np.nan))
    return out


def _cohen(
    a: np.ndarray,
    b: np.ndarray,
    *,
    weights: str | Sequence[str],
    categories: Sequence[float] | None,
    n_boot: int,
    seed: int,
    confidence: float,
    n_tied: int,
    n_unpaired: int,
) -> tuple[KappaResult, ...]:
    """One result per weighting; the weightings share one set of bootstrap draws (the same draws that
    separate calls with the same seed would make, so the results are identical, at a fraction of the cost)."""
    names = (weights,) if isinstance(weights, str) else tuple(weights)
    for name in names:
        _weight_matrix(1, name)  # validates the names before anything else
    _check_bootstrap(n_boot, confidence)
    if a.size == 0:
        reason = "no item has both labels"
        ci = BootstrapCI(None, None, confidence, n_boot, 0, reason)
        return tuple(KappaResult(None, 0, ci, reason, n_tied, n_unpaired) for _ in names)
    cats = category_list(categories, a, b)
    k = cats.size
    cells = category_index(a, cats) * k + category_index(b, cats)
    freq = np.bincount(cells, minlength=k * k).astype(float)
    return _cohen_from_freq(freq, k, names, n_boot=n_boot, seed=seed, confidence=confidence, n_tied=n_tied,
                            n_unpaired=n_unpaired)


def _cohen_from_freq(
    freq: np.ndarray,
    k: int,
    names: tuple[str, ...],
    *,
    n_boot: int,
    seed: int,
    confidence: float,
    n_tied: int,
    n_unpaired: int,
) -> tuple[KappaResult, ...]:
    """``_cohen`` from the flattened K x K cell counts of at least one paired item (the bootstrap only
    needs them)."""
    n_items = int(freq.sum())
    matrices = [_weight_matrix(k, name) for name in names]
    values = [float(kappa[0]) for kappa in _cohen_from_counts(freq.reshape(1, k, k), matrices)]
    used = np.flatnonzero(freq)
    replicates: list[list[np.ndarray]] = [[] for _ in names]
    defined = [n for n, value in enumerate(values) if not np.isnan(value)]
    if defined:
        for draws in _multinomial_replicates(freq[used], n_boot, seed):
            counts = np.zeros((draws.shape[0], k * k))
            counts[:, used] = draws
            kappas = _cohen_from_counts(counts.reshape(-1, k, k), [matrices[n] for n in defined])
            for n, kappa in zip(defined, kappas, strict=True):
                replicates[n].append(kappa)
    results = []
    for value, reps in zip(values, replicates, strict=True):
        if np.isnan(value):
            ci = BootstrapCI(None, None, confidence, n_boot, 0, _NO_EXPECTED_DISAGREEMENT)
            results.append(KappaResult(None, n_items, ci, _NO_EXPECTED_DISAGREEMENT, n_tied, n_unpaired))
        else:
            ci = _percentile_ci(np.concatenate(reps), n_boot, confidence, "kappa")
            results.append(KappaResult(value, n_items, ci, None, n_tied, n_unpaired))
    return tuple(results)


def cohen_kappa(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    weights: str = "unweighted",
    categories: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> KappaResult:
    """Cohen's kappa of two label vectors of the same items, unweighted or weighted, with a bootstrap CI.

    Formula: with O the K x K confusion counts over the category list, E_rc = O_r. O_.c / n and
    disagreement weights w_rc = [r != c] (unweighted), |r - c| (linear) or (r - c)^2 (quadratic),
    r and c being *positions* in the category list: kappa = 1 - sum(w O) / sum(w E). Equal to
    scikit-learn's ``cohen_kappa_score(x, y, labels=categories, weights=...)`` (the tests check it).
    Pass the whole scale as ``categories`` for weighted kappa, so that an unused middle point still
    counts in the distances; it defaults to the sorted union of the observed labels (scikit-learn's
    default). A label outside a given list raises ValueError.

    Missing data: an item where either label is NaN is left out (counted in ``n_unpaired``).

    CI: percentile bootstrap over the paired items, seeded; a replicate is a multinomial draw of the
    cell counts (same distribution as resampling items). Replicates where kappa is undefined are left
    out and counted in ``n_boot - n_valid``.

    Undefined (None, with reason): no item has both labels, or sum(w E) = 0: both vectors use one and
    the same category only (scikit-learn returns NaN there, with a warning). Two vectors that are each
    constant on *different* categories give 0, as in scikit-learn.
    """
    a, b = complete_pairs(x, y)
    n_unpaired = int(np.asarray(x, dtype=float).shape[0] - a.size)
    (result,) = _cohen(
        a,
        b,
        weights=weights,
        categories=categories,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        n_tied=0,
        n_unpaired=n_unpaired,
    )
    return result


def kappa_vs_majority(
    humans: npt.ArrayLike,
    pool: npt.ArrayLike,
    *,
    weights: str = "unweighted",
    categories: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    majority: npt.ArrayLike | None = None,
) -> KappaResult:
    """Cohen's kappa of a pool's label against the human majority label of each item.

    ``humans`` is the items x raters matrix, ``pool`` the pool's label per item (``pool_label``
    reduces several samples to one). The reference is ``majority_choice(humans)``; the formula,
    weights, categories and CI are those of ``cohen_kappa`` over the kept items (the bootstrap
    resamples the kept items only). ``majority`` may pass ``majority_choice(humans)`` already
    computed, to share it between calls (see ``majority_pairs``).

    Missing data: items whose human majority is tied are left out and counted in ``n_tied``; items
    without a human rating or without a pool label are left out and counted in ``n_unpaired``.

    Undefined (None, with reason): as ``cohen_kappa`` (no kept item; one single shared category).
    """
    (result,) = kappas_vs_majority(humans, pool, weights=(weights,), categories=categories, n_boot=n_boot,
                                   seed=seed, confidence=confidence, majority=majority)
    return result


def kappas_vs_majority(
    humans: npt.ArrayLike,
    pool: npt.ArrayLike,
    *,
    weights: Sequence[str] = WEIGHTS,
    categories: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    majority: npt.ArrayLike | None = None,
) -> tuple[KappaResult, ...]:
    """``kappa_vs_majority`` for several weightings at once, one result per name in ``weights``.

    Each result equals ``kappa_vs_majority(..., weights=name)`` with the same seed, CI included: the
    weightings share the pairing and the bootstrap draws, which are the costly part.
    """
    pairs = majority_pairs(humans, pool, majority=majority)
    return _cohen(
        pairs.reference,
        pairs.predicted,
        weights=weights,
        categories=categories,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        n_tied=pairs.n_tied,
        n_unpaired=pairs.n_unpaired,
    )


def kappa_per_rater(
    humans: npt.ArrayLike,
    pool: npt.ArrayLike,
    *,
    weights: str = "unweighted",
    categories: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[KappaResult, ...]:
    """Cohen's kappa of a pool's label against each human rater (one result per column of ``humans``).

    Each result is ``cohen_kappa(humans[:, j], pool, ...)`` over the items both labelled (same formula,
    missing-data rule, CI and undefined cases); every rater's bootstrap uses the same ``seed``.
    Pass ``categories`` so that all raters' kappas use one category list.
    """
    m = as_matrix(humans)
    p = as_vector(pool, "pool")
    if p.shape[0] != m.shape[0]:
        raise ValueError(f"pool has {p.shape[0]} labels for {m.shape[0]} items")
    return tuple(
        cohen_kappa(m[:, j], p, weights=weights, categories=categories, n_boot=n_boot, seed=seed, confidence=confidence)
        for j in range(m.shape[1])
    )


def rater_kappas_and_tests(
    humans: npt.ArrayLike,
    pool: npt.ArrayLike,
    *,
    categories: Sequence[float],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[tuple[KappaResult, KappaTest], ...]:
    """Per column of ``humans``: ``(cohen_kappa(humans[:, j], pool, ...), kappa_z_test(humans[:, j], pool, ...))``.

    Unweighted, over one category list; equal to those calls (same seed per rater, so the same CIs),
    but every rater's cell counts come from one pass over the matrix instead of one per rater and test.
    """
    _check_bootstrap(n_boot, confidence)
    m = as_matrix(humans)
    p = as_vector(pool, "pool")
    if p.shape[0] != m.shape[0]:
        raise ValueError(f"pool has {p.shape[0]} labels for {m.shape[0]} items")
    cats = category_list(categories)
    k = cats.size
    n_raters = m.shape[1]
    paired = ~np.isnan(m) & ~np.isnan(p)[:, None]
    item, rater = np.nonzero(paired)  # in any order: only their counts matter
    cells = (rater * k + category_index(m[item, rater], cats)) * k + category_index(p[item], cats)
    counts = np.bincount(cells, minlength=n_raters * k * k).reshape(n_raters, k * k)
    out = []
    for j in range(n_raters):
        n = int(counts[j].sum())
        n_unpaired = m.shape[0] - n
        if n == 0:
            reason = "no item has both labels"  # as cohen_kappa and kappa_z_test say it
            ci = BootstrapCI(None, None, confidence, n_boot, 0, reason)
            out.append((KappaResult(None, 0, ci, reason, 0, n_unpaired), KappaTest(None, None, 0, reason)))
            continue
        (result,) = _cohen_from_freq(counts[j].astype(float), k, ("unweighted",), n_boot=n_boot, seed=seed,
                                     confidence=confidence, n_tied=0, n_unpaired=n_unpaired)
        out.append((result, _z_test_from_counts(counts[j].reshape(k, k), n)))
    return tuple(out)


def _fleiss_from_weights(weights: np.ndarray, patterns: np.ndarray, agreement: np.ndarray, n_items: int) -> np.ndarray:
    """Fleiss' kappa for each row of pattern frequencies (B, P); NaN where P_e = 1 (one category)."""
    p_bar = weights @ agreement / n_items
    category_totals = weights @ patterns
    p_cat = category_totals / category_totals.sum(axis=1, keepdims=True)
    p_e = (p_cat**2).sum(axis=1)
    # Exact test on the counts, not on the float P_e: undefined when one category holds every rating.
    one_category = (category_totals > 0).sum(axis=1) == 1
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (p_bar - p_e) / (1.0 - p_e)
    return np.where(one_category, np.nan, kappa)


def fleiss_kappa(
    matrix: npt.ArrayLike,
    *,
    categories: Sequence[float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    counts: ValueCounts | None = None,
) -> KappaResult:
    """Fleiss' kappa among the raters of a matrix (items x raters, NaN = missing), with a bootstrap CI.

    Formula: with n_ic the number of item i's ratings in category c and n_i = sum_c n_ic,
    P_i = (sum_c n_ic^2 - n_i) / (n_i (n_i - 1)), P_bar = mean_i P_i,
    p_c = sum_i n_ic / sum_i n_i, P_e = sum_c p_c^2 and kappa = (P_bar - P_e) / (1 - P_e)
    (Fleiss 1971). Equal to statsmodels' ``fleiss_kappa(table)`` of the item x category count table
    when every item has the same number of ratings (the tests check it).

    Missing data: items with fewer than 2 ratings are left out (counted in ``n_unpaired``). Fleiss
    assumes the same number of raters per item, and statsmodels refuses anything else; here items
    with different numbers of ratings are all kept, each item's P_i uses its own n_i and p_c pools all
    ratings. This reduces to Fleiss' formula on balanced data and, unlike keeping only the items with
    the most common number of ratings, throws no rating away. Which rater gave a rating plays no part.
    ``categories`` only checks that every rating is one of them (unused categories change nothing).

    CI: percentile bootstrap over the kept items, seeded; a replicate is a multinomial draw of the
    frequencies of the items' count vectors (same distribution as resampling items). Replicates where
    kappa is undefined are left out and counted in ``n_boot - n_valid``.

    Undefined (None, with reason): no item has 2 ratings, or all kept ratings are one category
    (P_e = 1; statsmodels returns NaN).
    ``counts`` may pass ``value_counts(matrix)`` already computed (the same result, without counting again).
    """
    _check_bootstrap(n_boot, confidence)
    every = checked_counts(counts, as_matrix(matrix))
    kept = every.counts.sum(axis=1) >= 2
    n_items = int(kept.sum())
    n_unpaired = every.counts.shape[0] - n_items
    if n_items == 0:
        reason = "no item has 2 or more ratings"
        return KappaResult(None, 0, BootstrapCI(None, None, confidence, n_boot, 0, reason), reason, 0, n_unpaired)
    # Each kept item's counts of the categories: its counts of the values, moved to their categories' columns.
    sub = every.counts[kept]
    used = sub.any(axis=0)
    cats = category_list(categories, every.values[used])
    k = cats.size
    table = np.zeros((n_items, k), dtype=sub.dtype)
    table[:, category_index(every.values[used], cats)] = sub[:, used]
    max_count = int(table.max())
    if (max_count + 1) ** k < 2**62:
        # One integer per count vector: np.unique on a 1-D array is far faster than np.unique(axis=0).
        powers = (max_count + 1) ** np.arange(k, dtype=np.int64)
        _, first, freq = unique_first_counts(table @ powers)
        patterns = table[first].astype(float)
    else:
        unique_rows, freq = np.unique(table, axis=0, return_counts=True)
        patterns = unique_rows.astype(float)
    n_i = patterns.sum(axis=1)
    agreement = ((patterns**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    value = float(_fleiss_from_weights(freq[None, :].astype(float), patterns, agreement, n_items)[0])
    if np.isnan(value):
        reason = "no variation: every rating is one category (P_e = 1)"
        return KappaResult(None, n_items, BootstrapCI(None, None, confidence, n_boot, 0, reason), reason, 0, n_unpaired)
    replicates = [
        _fleiss_from_weights(draws, patterns, agreement, n_items)
        for draws in _multinomial_replicates(freq.astype(float), n_boot, seed)
    ]
    ci = _percentile_ci(np.concatenate(replicates), n_boot, confidence, "Fleiss' kappa")
    return KappaResult(value, n_items, ci, None, 0, n_unpaired)


def pool_label(samples: npt.ArrayLike, *, reduction: str, scale: Sequence[float] | None = None) -> np.ndarray:
    """One label per item for a pool with several samples per item (items x samples, NaN = missing).

    - ``"majority"`` (nominal data): the most frequent sample label, ``majority_choice``; NaN when the
      most frequent labels tie (no label is favoured to break it) or the item has no sample.
    - ``"rounded_mean"`` (Likert): the mean of the samples, rounded to the nearest point of ``scale``
      (default: the integers). A mean exactly halfway between two points goes to the *higher* point
      (2.5 -> 3 on a 1-5 scale), whatever its parity: numpy's round-half-to-even would send 2.5 to 2
      but 3.5 to 4, a bias that depends on where the scale lies. Means outside the scale go to its
      nearest end. NaN for an item with no sample.

    Kappa and the confusion matrix need one category per item; the alt-test and the human ceiling
    may use the unrounded mean instead (``np.nanmean``).
    """
    m = as_matrix(samples)
    if reduction == "majority":
        return majority_choice(m)
    if reduction != "rounded_mean":
        raise ValueError(f"unknown reduction {reduction!r}; expected majority or rounded_mean")
    out = np.full(m.shape[0], np.nan)
    rated = (~np.isnan(m)).any(axis=1)
    means = np.nanmean(m[rated], axis=1)
    if scale is None:
        # A tolerance far below any rating step absorbs float residue in sums such as 0.1 + 0.2.
        out[rated] = np.floor(means + 0.5 + 1e-9)
        return out
    points = np.unique(np.asarray(scale, dtype=float))
    if points.size == 0 or np.isnan(points).any():
        raise ValueError("scale must list at least one finite point")
    upper = np.clip(np.searchsorted(points, means), 0, points.size - 1)
    lower = np.clip(upper - 1, 0, points.size - 1)
    take_upper = points[upper] - means <= means - points[lower] + 1e-9
    out[rated] = np.where(take_upper, points[upper], points[lower])
    return out


@dataclass(frozen=True)
class KappaTest:
    """The large-sample z-test of Cohen's kappa = 0: ``z`` and its two-sided ``p`` (None with a reason)."""

    z: float | None
    p: float | None
    n_items: int
    reason: str | None = None


def kappa_z_test(x: npt.ArrayLike, y: npt.ArrayLike, *, categories: Sequence[float] | None = None) -> KappaTest:
    """The z-test of H0: unweighted Cohen's kappa = 0, with the variance under H0 of Fleiss, Cohen & Everitt (1969).

    Formula: with p_rc = O_rc / n the cell proportions, p_r. and p_.c the margins and
    p_e = sum_c p_c. p_.c, Var0(kappa) = (p_e + p_e^2 - sum_c p_c. p_.c (p_c. + p_.c)) / (n (1 - p_e)^2),
    z = kappa / sqrt(Var0) and p = 2 (1 - Phi(|z|)). Equal to statsmodels'
    ``cohens_kappa(table).z_value`` and ``.pvalue_two_sided`` (the tests check it). Large-sample:
    on a few dozen items it is approximate.

    Missing data: an item where either label is NaN is left out, as in ``cohen_kappa``.
    Undefined (None, with reason): no paired item, kappa undefined (one shared category), or
    Var0 = 0 (e.g. a single item, or one side with a single category; its numerator at most
    ``NULL_VARIANCE_TOLERANCE``, since rounding can leave 2e-16 there).
    """
    a, b = complete_pairs(x, y)
    n = int(a.size)
    if n == 0:
        return KappaTest(None, None, 0, "no item has both labels")
    cats = category_list(categories, a, b)
    k = cats.size
    counts = np.bincount(category_index(a, cats) * k + category_index(b, cats), minlength=k * k).reshape(k, k)
    return _z_test_from_counts(counts, n)


NULL_VARIANCE_TOLERANCE = 1e-12  # below it Var0's numerator is rounding error, not a variance


def _z_test_from_counts(counts: np.ndarray, n: int) -> KappaTest:
    """``kappa_z_test`` from the K x K cell counts of n >= 1 paired items."""
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_e = float((rows * cols).sum())
    if p_e >= 1.0:
        return KappaTest(None, None, n, _NO_EXPECTED_DISAGREEMENT)
    kappa = (float(np.trace(p)) - p_e) / (1.0 - p_e)
    numerator = p_e + p_e**2 - float((rows * cols * (rows + cols)).sum())
    # Zero exactly when one side gives a single category; in floating point it can come out as 1e-17, which gave
    # p = 1.0 beside its siblings' "undefined" (review 23). A real numerator is at least of the order of 1/n.
    if not numerator > NULL_VARIANCE_TOLERANCE:
        return KappaTest(None, None, n, "the variance of kappa under H0 is 0")
    var0 = numerator / (n * (1.0 - p_e) ** 2)
    z = kappa / float(np.sqrt(var0))
    from scipy import special  # on use: importing scipy.special takes 0.15 s (STYLE 15)

    return KappaTest(z, float(2 * special.ndtr(-abs(z))), n)
