"""Chart data for the dashboard and its JSON endpoint: score distributions and the item-mean scatter."""

from __future__ import annotations

import numpy as np

from evalhub.analysis.cells import Cell, common_items
from evalhub.analysis.reading import HUMAN, Pool, StudyData
from evalhub.analysis.result import Distribution, Scatter


def score_distributions(data: StudyData, cells: dict[tuple[str, str, str], Cell],
                        groups: list[str]) -> list[Distribution]:
    """Share of ratings per half point, per question x group x pool (scores binned to the nearest half point)."""
    domain = np.array(data.domain)
    bins = tuple(domain.tolist())
    out = []
    for question in data.questions:
        for group in groups:
            for pool in data.pools:
                score = cells[(question.key, group, pool.name)].score
                binned = np.clip(np.round(score * 2) / 2, domain[0], domain[-1])
                counts = np.bincount(np.searchsorted(domain, binned), minlength=domain.size) if score.size else \
                    np.zeros(domain.size, dtype=np.int64)
                out.append(Distribution(question.key, group, pool.name, n=int(score.size), bins=bins,
                                        counts=tuple(counts.tolist())))
    return out


def item_mean_scatter(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: list[str],
                      llm_pools: list[Pool]) -> list[Scatter]:
    """Per-item human mean vs LLM mean, aggregated to (x, y, number of items) so any study size draws fast."""
    out = []
    for question in data.questions:
        for group in groups:
            h_items, h_means = cells[(question.key, group, HUMAN)].item_means()
            for pool in llm_pools:
                l_items, l_means = cells[(question.key, group, pool.name)].item_means()
                hi, li = common_items(h_items, l_items)
                # Means of a few ratings take few distinct values; rounding to 1/12 keeps thirds, quarters and
                # halves apart while bounding the number of distinct points. One integer code per (x, y)
                # makes the grouping a 1-D np.unique, far cheaper than np.unique(axis=0).
                x = np.rint(h_means[hi] * 12).astype(np.int64)
                y = np.rint(l_means[li] * 12).astype(np.int64)
                x0, y0 = (int(x.min()), int(y.min())) if x.size else (0, 0)  # scales may start below 0
                width = int(y.max()) - y0 + 1 if y.size else 1
                codes, n = np.unique((x - x0) * width + (y - y0), return_counts=True)
                points = tuple(((code // width + x0) / 12, (code % width + y0) / 12, int(c))
                               for code, c in zip(codes.tolist(), n.tolist(), strict=True))
                out.append(Scatter(question.key, group, pool.name, n_items=int(hi.size), points=points))
    return out
