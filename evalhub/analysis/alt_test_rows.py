"""The alternative annotator test's rows of the analysis JSON: may this LLM pool replace the human raters?

One row per question x group x LLM pool, plus, when two or more questions are analysed, rows with
question ``(all)`` that pool every question's instances (each (item, question) pair its own instance).
The rows reuse the cells the analysis has already split (no query of their own) and call
``stats.alt_test_long`` once per row with integer ids. The row is ``result.AltTestRow``; its JSON is a
contract: docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from evalhub.analysis.cells import Cell
from evalhub.analysis.reading import HUMAN, AnalysisOptions, Pool, StudyData
from evalhub.analysis.result import AltTestRow, AltTestSettings
from evalhub.stats.alt_test import Q_FDR, SCORINGS, Scoring, alt_test_long

ALL_QUESTIONS = "(all)"  # parentheses keep it apart from question keys (slugs), as ALL_GROUPS from group names


def alt_test_settings(data: StudyData, options: AnalysisOptions) -> AltTestSettings:
    """Nominal data (pairwise choices, categorical labels) is scored by accuracy, Likert scores by negative RMSE."""
    epsilon = data.study.alt_epsilon if options.alt_epsilon is None else options.alt_epsilon
    scoring: Scoring = options.alt_scoring or ("accuracy" if data.nominal else "neg_rmse")
    if scoring not in SCORINGS:
        raise ValueError(f"unknown alt-test scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    if not 0.0 < epsilon < 1.0:
        raise ValueError(f"alt-test epsilon must be strictly between 0 and 1, got {epsilon}")
    return AltTestSettings(epsilon=float(epsilon), scoring=scoring, q_fdr=Q_FDR,
                           sample_rule="majority" if scoring == "accuracy" else "mean")


def alt_test_rows(data: StudyData, cells: dict[tuple[str, str, str], Cell], groups: list[str],
                  settings: AltTestSettings) -> list[AltTestRow]:
    """The rows, in the order question (the study's, then ``(all)``) x group x LLM pool."""
    human = next(p for p in data.pools if p.kind == "human")
    llm_pools = [p for p in data.pools if p.kind == "llm"]
    if not llm_pools:
        return []
    # Cells hold rater indices into the human pool's raters; the rows name them by external id.
    names: dict[Hashable, str] = {
        int(k): human.rater_labels.get(int(pk), f"rater-{int(pk)}") for k, pk in enumerate(human.raters)}
    n_items = max(int(data.item_ids.size), 1)
    rows = []
    questions = [q.key for q in data.questions]
    for question in questions:
        for group in groups:
            humans = cells[(question, group, HUMAN)]
            for pool in llm_pools:
                rows.append(_row(question, group, pool, [(0, humans, cells[(question, group, pool.name)])],
                                 names, n_items, settings))
    if len(questions) >= 2:
        for group in groups:
            for pool in llm_pools:
                # Question k's instances are k * n_items + item: every (item, question) pair is its own instance.
                parts = [(k, cells[(q, group, HUMAN)], cells[(q, group, pool.name)]) for k, q in enumerate(questions)]
                rows.append(_row(ALL_QUESTIONS, group, pool, parts, names, n_items, settings))
    return rows


def _row(question: str, group: str, pool: Pool, parts: list[tuple[int, Cell, Cell]], names: dict[Hashable, str],
         n_items: int, settings: AltTestSettings) -> AltTestRow:
    def joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
        if len(arrays) == 1:  # one question: the cell's own arrays, no copy
            return arrays[0].astype(dtype, copy=False)
        return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.empty(0, dtype=dtype)

    result = alt_test_long(
        raters=joined([h.rater for _, h, _ in parts], np.int64),
        instances=joined([k * n_items + h.item if k else h.item for k, h, _ in parts], np.int64),
        labels=joined([h.score for _, h, _ in parts], float),
        llm_instances=joined([k * n_items + llm.item if k else llm.item for k, _, llm in parts], np.int64),
        llm_labels=joined([llm.score for _, _, llm in parts], float),
        scoring=settings.scoring,
        epsilon=settings.epsilon,
        rater_names=names,
    )
    return AltTestRow(question, group, pool.name, test=result)
