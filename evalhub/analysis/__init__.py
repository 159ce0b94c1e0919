"""The analysis: a study's ratings -> matrices -> the agreement tables of Chiang & Lee (2023).

Split by job, in the order the data flows:

- ``reading``: the options, the pools, and each pool's ratings read into numpy arrays;
- ``cells``: the ratings split per question x group x pool, and each cell's matrices;
- ``tables``: the tables, ``study_analysis``;
- ``result``: what ``study_analysis`` returns, as frozen dataclasses; ``AnalysisResult.to_json`` is the analysis
  JSON (docs/analysis.md);
- ``ppi_rows``: prediction-powered inference's rows, or why it does not apply (issue 27);
- ``human_subset``: which items people rate (the setting saved and drawn) and how many (the budget plan);
- ``chart_data``: the dashboard's score distributions and item-mean scatter;
- ``cache``: ``study_analysis_cached``, the analysis through the cache.

The names callers use are re-exported here; the modules import one another directly, never this package.
"""

from __future__ import annotations

from evalhub.analysis.cache import CACHE_SECONDS, ratings_fingerprint, study_analysis_cached
from evalhub.analysis.reading import (
    ALL_GROUPS,
    CI_LEVEL,
    HUMAN,
    HUMAN_LABEL,
    AnalysisOptions,
    Pool,
    StudyData,
    WelchUnit,
    fetch_matrix,
    human_rows_sql,
    llm_rows_sql,
    pool_labels,
    pool_names,
    study_data,
)
from evalhub.analysis.result import AnalysisResult
from evalhub.analysis.tables import PAIRWISE_MAX_RATERS, SCHEMA_VERSION, analysis_from_data, contrasts, study_analysis

__all__ = [
    "ALL_GROUPS",
    "CACHE_SECONDS",
    "CI_LEVEL",
    "HUMAN",
    "HUMAN_LABEL",
    "PAIRWISE_MAX_RATERS",
    "SCHEMA_VERSION",
    "AnalysisOptions",
    "AnalysisResult",
    "Pool",
    "StudyData",
    "WelchUnit",
    "analysis_from_data",
    "contrasts",
    "fetch_matrix",
    "human_rows_sql",
    "llm_rows_sql",
    "pool_labels",
    "pool_names",
    "ratings_fingerprint",
    "study_analysis",
    "study_analysis_cached",
    "study_data",
]
