"""The alternative annotator test's rows of the analysis JSON: may this LLM pool replace the human raters?

One row per question x group x LLM pool, plus, when two or more questions are analysed, rows with
question ``(all)`` that pool every question's instances (each (item, question) pair its own instance).
The rows reuse the cells the analysis has already split (no query of their own): each question x group x
pool is scored once (``alt_test_scores``, integer ids), and the ``(all)`` rows join those scores.
The row is ``result.AltTestRow``; its JSON is a contract: docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Hashable

from evalhub.analysis.cells import Cell
from evalhub.analysis.reading import HUMAN, AnalysisOptions, Pool, StudyData
from evalhub.analysis.result import AltTestRow, AltTestSettings
from evalhub.stats.alt_test import (
    Q_FDR,
    SCORINGS,
    AltTestScores,
    Scoring,
    alt_test_joined,
    alt_test_scores,
    alt_test_verdict,
)

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
    rows = []
    questions = [q.key for q in data.questions]
    # Each question's scores serve its own row and the (all) row: scoring is the costly half of the test, and an
    # (all) instance is an (item, question) pair, scored on that question's ratings alone (stats.alt_test_joined).
    scores: dict[tuple[str, str, str], AltTestScores] = {}
    for question in questions:
        for group in groups:
            humans = cells[(question, group, HUMAN)]
            for pool in llm_pools:
                scores[(question, group, pool.name)] = part = _scores(humans, cells[(question, group, pool.name)],
                                                                      names, settings)
                rows.append(_row(question, group, pool, part, settings))
    if len(questions) >= 2:
        for group in groups:
            for pool in llm_pools:
                joined = alt_test_joined([scores[(q, group, pool.name)] for q in questions], rater_names=names)
                rows.append(_row(ALL_QUESTIONS, group, pool, joined, settings))
    return rows


def _scores(humans: Cell, llm: Cell, names: dict[Hashable, str], settings: AltTestSettings) -> AltTestScores:
    return alt_test_scores(raters=humans.rater, instances=humans.item, labels=humans.score, llm_instances=llm.item,
                           llm_labels=llm.score, scoring=settings.scoring, rater_names=names)


def _row(question: str, group: str, pool: Pool, scores: AltTestScores, settings: AltTestSettings) -> AltTestRow:
    return AltTestRow(question, group, pool.name, test=alt_test_verdict(scores, epsilon=settings.epsilon))
