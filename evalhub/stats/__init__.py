"""Agreement and comparison statistics for EvalHub, free of Django.

Every function takes plain numpy data. A *matrix* is a float array with rows = items,
columns = raters and NaN = missing rating. Statistics that can be undefined return a value
of None together with a human-readable reason instead of raising or returning a misleading
0 or 1. Invalid input (not 2-D, infinite values, unknown level) raises ValueError.

One module per family of statistic; this package re-exports the public names, so callers write
``from evalhub import stats`` and ``stats.krippendorff_alpha(...)``:

- ``results``: the typed results (``Stat``, ``AlphaCI``, ``TauResult``, ...);
- ``alpha``: Krippendorff's alpha and its bootstrap CI;
- ``agreement``: full agreement, majority choice and vote, nominal agreement, ICC;
- ``correlation``: Kendall's tau (pairs and between raters), Pearson, Spearman, the tau bands;
- ``comparison``: Welch's t-test and the Benjamini-Hochberg adjustment of a family of tests;
- ``descriptives``: item means and a matrix's summary;
- ``inputs``: the checks of a matrix and of paired vectors, and each item's counts of each value (``value_counts``),
  which alpha, Fleiss' kappa and the majority choice may share;
- ``kappa``: Cohen's kappa (unweighted, linear, quadratic; per rater, against the human majority), Fleiss'
  kappa, their bootstrap CIs, and one label per item for a pool with several samples;
- ``confusion``: the confusion matrix of a pool's label against the human majority label;
- ``ceiling``: the human ceiling (each rater's agreement with the others, the judge's on the same items);
- ``alt_test``: the alternative annotator test (may an LLM replace the human raters?).
- ``ppi.mean``: prediction-powered inference (PPI++) of a group's mean human score and of two groups' difference
  from the judge's scores on every item and human ratings on a random subset; the subset's seeded draw;
- ``ppi.active``: the same with inclusion probabilities that follow the judge's uncertainty (inverse-probability
  weighted);
- ``ppi.plan``: human-rated items per group for a target width of the difference, with and without the judge.
"""

from __future__ import annotations

from evalhub.stats.agreement import (
    agreement_pct,
    full_agreement_pct,
    icc1,
    icc1_and_icc1k,
    icc1k,
    icc_one_way,
    majority_choice,
    majority_vote,
)
from evalhub.stats.alpha import (
    alpha_all_levels,
    alpha_bootstrap_ci,
    alpha_with_ci,
    krippendorff_alpha,
    ratio_scale_reason,
)
from evalhub.stats.alt_test import (
    DEFAULT_EPSILON,
    EPSILON_GUIDANCE,
    Q_FDR,
    AltTestHuman,
    AltTestResult,
    EpsilonGuide,
    alt_test,
    alt_test_long,
)
from evalhub.stats.ceiling import (
    LOW_HUMAN_ALPHA,
    SCORINGS,
    HumanCeiling,
    MeanCI,
    RaterCeiling,
    human_ceiling,
    mean_ci,
    score_range,
)
from evalhub.stats.comparison import bh_adjust, welch
from evalhub.stats.confusion import Confusion, confusion_matrix, confusion_vs_majority
from evalhub.stats.correlation import kendall_tau, mean_pairwise_kendall, pearson, spearman, tau_band
from evalhub.stats.descriptives import describe, item_means
from evalhub.stats.inputs import ValueCounts, item_value_counts, value_counts
from evalhub.stats.kappa import (
    WEIGHTS,
    BootstrapCI,
    KappaResult,
    KappaTest,
    cohen_kappa,
    fleiss_kappa,
    kappa_per_rater,
    kappa_vs_majority,
    kappa_z_test,
    kappas_vs_majority,
    pool_label,
    rater_kappas_and_tests,
)
from evalhub.stats.ppi.active import ActivePPIMean, active_inclusion_probabilities, active_ppi_mean, draw_active_subset
from evalhub.stats.ppi.mean import PPIDifference, PPIGroup, PPIMean, draw_human_subset, ppi_mean, ppi_mean_difference
from evalhub.stats.ppi.plan import BudgetPlan, BudgetPoint, GroupMoments, pilot_moments, plan_human_budget
from evalhub.stats.results import (
    LEVELS,
    AlphaCI,
    CorrResult,
    Describe,
    ICCResult,
    Level,
    PairwiseTau,
    Stat,
    TauResult,
    WelchResult,
)

__all__ = [
    "DEFAULT_EPSILON",
    "EPSILON_GUIDANCE",
    "Q_FDR",
    "AltTestHuman",
    "AltTestResult",
    "EpsilonGuide",
    "alt_test",
    "alt_test_long",
    "LEVELS",
    "AlphaCI",
    "ICCResult",
    "CorrResult",
    "Describe",
    "Level",
    "PairwiseTau",
    "Stat",
    "TauResult",
    "WelchResult",
    "agreement_pct",
    "alpha_all_levels",
    "alpha_bootstrap_ci",
    "alpha_with_ci",
    "describe",
    "full_agreement_pct",
    "icc1",
    "icc1_and_icc1k",
    "icc_one_way",
    "icc1k",
    "item_means",
    "kendall_tau",
    "krippendorff_alpha",
    "ratio_scale_reason",
    "majority_choice",
    "majority_vote",
    "mean_pairwise_kendall",
    "pearson",
    "spearman",
    "tau_band",
    "welch",
    "Confusion",
    "confusion_matrix",
    "confusion_vs_majority",
    "WEIGHTS",
    "BootstrapCI",
    "KappaResult",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_per_rater",
    "kappa_vs_majority",
    "kappa_z_test",
    "kappas_vs_majority",
    "KappaTest",
    "pool_label",
    "rater_kappas_and_tests",
    "LOW_HUMAN_ALPHA",
    "SCORINGS",
    "HumanCeiling",
    "RaterCeiling",
    "human_ceiling",
    "score_range",
    "MeanCI",
    "mean_ci",
    "bh_adjust",
    "PPIDifference",
    "PPIGroup",
    "PPIMean",
    "draw_human_subset",
    "ppi_mean",
    "ppi_mean_difference",
    "ActivePPIMean",
    "active_inclusion_probabilities",
    "active_ppi_mean",
    "draw_active_subset",
    "BudgetPlan",
    "BudgetPoint",
    "GroupMoments",
    "pilot_moments",
    "plan_human_budget",
    "ValueCounts",
    "item_value_counts",
    "value_counts",
]
