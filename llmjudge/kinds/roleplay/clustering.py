"""Near-duplicate roles removed (DRPE step 3): DBSCAN on the cosine distances of the roles' embeddings, one
role kept per cluster.

DBSCAN is written here over scipy's connected components rather than taken from scikit-learn, which is a
development dependency only (the tests compare the two: tests/llmjudge/kinds/test_dbscan_labels.py).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llmjudge.kinds.roleplay.embedding import Embedder, minilm_embedder
from llmjudge.kinds.roleplay.roles import Role

# Cosine distance under which two role descriptions count as the same role. The paper gives no
# value; 0.15 (cosine similarity 0.85 with all-MiniLM-L6-v2) merges rewordings of one reader type
# ("Horror fan" / "Fan of horror fiction") and keeps different ones apart (tests/llmjudge/kinds).
DEFAULT_EPS = 0.15


def cosine_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    return 1.0 - xn @ yn.T


def dbscan_labels(distances: np.ndarray, *, eps: float, min_samples: int) -> np.ndarray:
    """DBSCAN's labels from a distance matrix, with scipy's connected components (no scikit-learn).

    Why it is DBSCAN: two points are neighbours when their distance is at most ``eps``; a point is a
    core point when it has at least ``min_samples`` neighbours, itself included. DBSCAN's clusters are
    the connected components of the neighbour graph restricted to core points; with ``min_samples=1``
    (the default) every point is core, so the partition is exactly the components of the eps-graph.
    A non-core point next to a core point (a border point) joins a cluster: scikit-learn expands
    clusters one at a time, from the unlabelled core point of lowest index, so a border point joins
    the reachable cluster whose lowest core index is smallest; we do the same. The rest is noise (-1).
    Clusters are numbered in the order of their lowest core index, as scikit-learn numbers them.
    """
    from scipy.sparse import csr_matrix  # noqa: PLC0415 (scipy is a base dependency; keep import cost here)
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    near = distances <= eps
    core = near.sum(axis=1) >= min_samples
    core_index = np.flatnonzero(core)
    labels = np.full(len(distances), -1, dtype=int)
    if core_index.size == 0:
        return labels
    _, components = connected_components(csr_matrix(near[np.ix_(core_index, core_index)]), directed=False)
    # Renumber components by their lowest member (core_index is sorted, so first appearance is lowest).
    order: dict[int, int] = {}
    for component in components.tolist():
        order.setdefault(component, len(order))
    labels[core_index] = [order[c] for c in components.tolist()]
    for point in np.flatnonzero(~core):
        reachable = labels[core_index[near[point, core_index]]]
        if reachable.size:
            labels[point] = int(reachable.min())
    return labels


def dedupe_roles(
    roles: Sequence[Role], *, eps: float, min_samples: int = 1, embed: Embedder | None = None
) -> list[Role]:
    """Remove near-duplicate roles: DBSCAN (cosine distance, ``eps``, ``min_samples``; ``dbscan_labels``) over the
    embeddings of ``"name: description"``; one role is kept per cluster (a static one if the cluster
    has one, else the member closest to the cluster's mean embedding, the earlier one on a tie).
    DBSCAN's noise points (only possible with ``min_samples > 1``) are unlike every other role and
    are all kept. The kept roles stay in their input order. ``embed`` defaults to ``minilm_embedder()``.
    """
    if not 0 < eps < 2:
        raise ValueError(f"eps is a cosine distance and must be in (0, 2), got {eps}")
    if len(roles) < 2:
        return list(roles)
    embed = embed or minilm_embedder()
    vectors = np.asarray(embed([r.text() for r in roles]), dtype=float)
    if vectors.ndim != 2 or vectors.shape[0] != len(roles):
        raise ValueError(f"embedder returned shape {vectors.shape} for {len(roles)} roles")
    labels = dbscan_labels(cosine_distances(vectors, vectors), eps=eps, min_samples=min_samples)
    keep: set[int] = set()
    for label in sorted(set(labels.tolist())):
        members = [i for i, lab in enumerate(labels) if lab == label]
        if label == -1:
            keep.update(members)
            continue
        statics = [i for i in members if roles[i].kind == "static"]
        if statics:
            keep.add(statics[0])
            continue
        center = vectors[members].mean(axis=0, keepdims=True)
        distances = cosine_distances(vectors[members], center)[:, 0]
        keep.add(members[int(np.argmin(distances))])  # argmin takes the first of equal distances
    return [r for i, r in enumerate(roles) if i in keep]
