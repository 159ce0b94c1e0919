"""dbscan_labels (scipy's connected components) gives scikit-learn's DBSCAN labels, so scikit-learn need not
be a runtime dependency (issue 18, finding 9). scikit-learn is the reference here, a dev-only import."""
from __future__ import annotations

import numpy as np
import pytest

from llmjudge.kinds.roleplay.clustering import cosine_distances, dbscan_labels

DBSCAN = pytest.importorskip("sklearn.cluster").DBSCAN


def _clustered(rng: np.random.Generator, clusters: int, size: int, spread: float) -> np.ndarray:
    centres = rng.normal(size=(clusters, 8))
    return np.vstack([c + rng.normal(scale=spread, size=(size, 8)) for c in centres])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("min_samples", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.02, 0.1, 0.3])
def test_the_labels_are_scikit_learns_dbscan_labels(seed, min_samples, eps):
    rng = np.random.default_rng(seed)
    vectors = _clustered(rng, clusters=1 + seed % 4, size=2 + seed % 5, spread=0.05 + 0.05 * (seed % 3))
    vectors = vectors[rng.permutation(len(vectors))]
    distances = cosine_distances(vectors, vectors)
    # Only cases away from the boundary: a distance within 1e-9 of eps is decided by rounding alone.
    if np.any(np.abs(distances - eps) < 1e-9):
        pytest.skip("a distance on the eps boundary")
    expected = DBSCAN(eps=eps, min_samples=min_samples, metric="cosine").fit_predict(vectors)
    assert dbscan_labels(distances, eps=eps, min_samples=min_samples).tolist() == expected.tolist()


def test_with_min_samples_one_the_labels_are_the_components_of_the_eps_graph():
    # a-b and b-c are within eps, a-c is not: one chain, one cluster; d is alone.
    distances = np.array([[0, 0.1, 0.3, 1], [0.1, 0, 0.1, 1], [0.3, 0.1, 0, 1], [1, 1, 1, 0]], dtype=float)
    assert dbscan_labels(distances, eps=0.15, min_samples=1).tolist() == [0, 0, 0, 1]
    assert dbscan_labels(distances, eps=0.15, min_samples=3).tolist() == [0, 0, 0, -1]  # b core; a, c border
    assert dbscan_labels(distances, eps=0.05, min_samples=2).tolist() == [-1, -1, -1, -1]
