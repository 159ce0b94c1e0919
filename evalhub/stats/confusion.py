"""The confusion matrix of a label vector against the human majority label, and the helpers kappa shares.

Labels are floats (a nominal label is its code in the study's category list; NaN = missing), as
everywhere in the statistics. A *category list* fixes the rows and columns and, for weighted kappa,
their order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalhub.stats.agreement import majority_choice
from evalhub.stats.inputs import as_matrix, as_vector, positions_in


@dataclass(frozen=True)
class Confusion:
    """Counts of (reference, predicted) label pairs over a fixed category list.

    ``counts[r][c]`` = items whose reference label is ``categories[r]`` and whose predicted label is
    ``categories[c]`` (rows = reference, as scikit-learn's ``confusion_matrix(y_true, y_pred)``).
    """

    categories: tuple[float, ...]
    counts: tuple[tuple[int, ...], ...]
    n_items: int  # items counted (both labels defined)
    n_tied: int = 0  # items left out because the human majority is tied
    n_unpaired: int = 0  # items left out because a label is missing (no rating, or no pool label)


@dataclass(frozen=True)
class MajorityPairs:
    """The pool's labels and the human majority labels of the items where both are defined."""

    reference: np.ndarray  # human majority label per kept item
    predicted: np.ndarray  # pool label per kept item
    n_tied: int
    n_unpaired: int


def majority_pairs(
    humans: npt.ArrayLike, pool: npt.ArrayLike, *, majority: npt.ArrayLike | None = None
) -> MajorityPairs:
    """Pair each item's pool label with its human majority label (``majority_choice``).

    ``majority`` may pass ``majority_choice(humans)`` already computed, so that the kappas, the
    confusion matrix and the pools of one question share it (it is the costly step on large studies).

    Missing data: an item with at least one human rating whose most frequent values are tied has no
    majority; it is left out and counted in ``n_tied`` (as the pairwise majority agreement does).
    An item with no human rating, or with no pool label (NaN), is left out and counted in
    ``n_unpaired``. ``n_tied + n_unpaired + len(reference)`` is the number of items.
    """
    m = as_matrix(humans)
    p = as_vector(pool, "pool")
    if p.shape[0] != m.shape[0]:
        raise ValueError(f"pool has {p.shape[0]} labels for {m.shape[0]} items")
    if majority is None:
        reference = majority_choice(m)
    else:
        reference = as_vector(majority, "majority")
        if reference.shape[0] != m.shape[0]:
            raise ValueError(f"majority has {reference.shape[0]} labels for {m.shape[0]} items")
    rated = (~np.isnan(m)).any(axis=1)
    tied = rated & np.isnan(reference)
    keep = ~np.isnan(reference) & ~np.isnan(p)
    return MajorityPairs(
        reference=reference[keep],
        predicted=p[keep],
        n_tied=int(tied.sum()),
        n_unpaired=int((~keep & ~tied).sum()),
    )


def category_list(categories: Sequence[float] | None, *observed: np.ndarray) -> np.ndarray:
    """The categories as a float array: the given list (order kept), else the sorted observed values.

    Bad input (a repeated or missing category) raises ValueError.
    """
    if categories is None:
        values = [v[~np.isnan(v)] for v in observed]
        return np.unique(np.concatenate(values)) if values else np.empty(0)
    cats = np.asarray(categories, dtype=float)
    if cats.ndim != 1 or np.isnan(cats).any() or np.isinf(cats).any():
        raise ValueError("categories must be a flat list of finite numbers")
    if np.unique(cats).size != cats.size:
        raise ValueError("categories must not repeat a value")
    return cats


def category_index(labels: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Position of each (non-NaN) label in ``cats``; a label outside the list raises ValueError."""
    if cats.size == 0:
        if labels.size:
            raise ValueError(f"label {labels[0]:g} is not one of the categories (none given)")
        return np.zeros(0, dtype=np.intp)
    order = np.argsort(cats, kind="stable")
    sorted_cats = cats[order]
    pos = np.minimum(positions_in(sorted_cats, labels), sorted_cats.size - 1)
    found = sorted_cats[pos] == labels
    if not found.all():
        outside = labels[~found][0]
        raise ValueError(f"label {outside:g} is not one of the categories {', '.join(f'{c:g}' for c in cats)}")
    return order[pos]


def confusion_matrix(
    reference: npt.ArrayLike, predicted: npt.ArrayLike, *, categories: Sequence[float] | None = None
) -> Confusion:
    """Confusion matrix of two label vectors of the same items.

    Formula: counts[r][c] = #{i : reference_i == categories[r] and predicted_i == categories[c]}.
    Missing data: an item where either label is NaN is left out and counted in ``n_unpaired``.
    ``categories`` defaults to the sorted union of the observed labels; a label outside a given list
    raises ValueError. Never undefined: no items give a matrix of zeros (``n_items`` = 0).
    """
    ref, pred = as_vector(reference, "reference"), as_vector(predicted, "predicted")
    if ref.shape != pred.shape:
        raise ValueError(f"reference and predicted differ in length: {ref.shape[0]} != {pred.shape[0]}")
    keep = ~(np.isnan(ref) | np.isnan(pred))
    return _confusion(ref[keep], pred[keep], categories, n_tied=0, n_unpaired=int((~keep).sum()))


def confusion_vs_majority(
    humans: npt.ArrayLike,
    pool: npt.ArrayLike,
    *,
    categories: Sequence[float] | None = None,
    majority: npt.ArrayLike | None = None,
) -> Confusion:
    """Confusion matrix of a pool's label (rows: human majority label, columns: pool label).

    ``humans`` is the items x raters matrix, ``pool`` the pool's label per item (see
    ``stats.pool_label`` for a pool with several samples per item). Same formula as
    ``confusion_matrix`` with reference = ``majority_choice(humans)``; items with a tied human
    majority are left out and counted in ``n_tied``, items without a rating or pool label in
    ``n_unpaired`` (see ``majority_pairs``, which also describes ``majority``). Never undefined.
    """
    pairs = majority_pairs(humans, pool, majority=majority)
    return _confusion(pairs.reference, pairs.predicted, categories, n_tied=pairs.n_tied, n_unpaired=pairs.n_unpaired)


def _confusion(
    ref: np.ndarray, pred: np.ndarray, categories: Sequence[float] | None, *, n_tied: int, n_unpaired: int
) -> Confusion:
    cats = category_list(categories, ref, pred)
    k = cats.size
    cells = category_index(ref, cats) * k + category_index(pred, cats)
    counts = np.bincount(cells, minlength=k * k).reshape(k, k)
    return Confusion(
        categories=tuple(float(c) for c in cats),
        counts=tuple(tuple(int(v) for v in row) for row in counts),
        n_items=int(ref.size),
        n_tied=n_tied,
        n_unpaired=n_unpaired,
    )
