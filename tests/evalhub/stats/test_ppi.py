"""Prediction-powered inference (evalhub.stats.ppi: mean, active, plan): against ppi_py on real data, coverage
on simulated studies, the planner against brute force, and the undefined cases.

How the ppi_py comparison runs. ppi_py pulls numba, statsmodels, scikit-learn, pandas and gdown, so it lives in
its own venv (.venv-ppi, from the hashed requirements-ppi.lock), like schemathesis. The cases are built here
from ../shared/data (AltTest SummEval and 10k_prompts, HANNA's human and GPT-2 stories: a seeded random 20 % of
each group's items as the human-rated ones), written as JSON to ``$PPI_REFERENCE_PYTHON
tests/support/ppi_reference.py``, and ppi_py's figures come back from that subprocess in the same run: nothing
is stored, so a change on either side shows. Without PPI_REFERENCE_PYTHON these tests skip, naming the command
(``bash .ci/ppi_reference.sh`` builds the venv and runs them); under EVALHUB_EXTRAS=1 that is a failure, as for
every extra (tests/support/extras.py).
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.weightstats import _zconfint_generic, _zstat_generic

from evalhub.stats.ppi.active import active_inclusion_probabilities, active_ppi_mean, draw_active_subset
from evalhub.stats.ppi.mean import PPIGroup, PPIMean, draw_human_subset, ppi_mean, ppi_mean_difference, z_quantile
from evalhub.stats.ppi.plan import GroupMoments, pilot_moments, plan_human_budget, ppi_variance, t_widening
from tests.conftest import shared_path
from tests.support.alt_test_data import read_alt_test_dataset
from tests.support.extras import require_reference_python

REPO = Path(__file__).resolve().parents[3]
ALPHA = 0.05
LAMS: tuple[float | None, ...] = (None, 0, 1)
SHARE = 0.2
SEED = 2025
REFERENCE_COMMAND = "bash .ci/ppi_reference.sh"

# ---------------------------------------------------------------------------
# Real data: (Y, f) per item, then a seeded random 20 % labelled


def alttest_items(dataset: str, llm: str, suffix: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Per-instance human mean and the LLM's label, instances in sorted id order (those ending in suffix)."""
    data = read_alt_test_dataset(shared_path("data", "AltTest", "data", dataset))
    instances = sorted({i for ratings in data.humans.values() for i in ratings if i.endswith(suffix)})
    instances = [i for i in instances if i in data.llms[llm]]
    y = np.array([np.mean([r[i] for r in data.humans.values() if i in r]) for i in instances])
    return y, np.array([data.llms[llm][i] for i in instances], dtype=float)


def hanna_items(system: str, criterion: str, code: str) -> tuple[np.ndarray, np.ndarray]:
    """HANNA: the mean of the 3 humans and ChatGPT's Eval-Prompt-1 rating (mean of 3 samples) per story."""
    path = shared_path("data", "hanna-benchmark-asg", "hanna_metric_scores_llm.csv")
    csv.field_size_limit(sys.maxsize)
    with path.open(newline="", encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Model"] == system)
    return np.array(json.loads(row[criterion]), dtype=float), np.array(json.loads(row[f"ChatGPT {code} 1"]), dtype=float)


def split(y: np.ndarray, f: np.ndarray, seed: int = SEED) -> PPIGroup:
    chosen, _ = draw_human_subset(y.size, share=SHARE, seed=seed)
    labelled = np.zeros(y.size, dtype=bool)
    labelled[chosen] = True
    return PPIGroup(y_labelled=y[labelled], f_labelled=f[labelled], f_unlabelled=f[~labelled])


def real_cases() -> dict[str, PPIGroup]:
    cases = {}
    for criterion in ("coherence", "consistency", "fluency", "relevance"):
        y, f = alttest_items("summeval", "gpt-4o", f"__{criterion}")
        cases[f"summeval {criterion} gpt-4o"] = split(y, f)
    y, f = alttest_items("summeval", "gpt-4o", "__coherence")
    # The same data with judges whose lambda clips: anticorrelated (lambda < 0 -> 0) and compressed (-> 1).
    cases["summeval coherence, judge negated"] = split(y, -f)
    cases["summeval coherence, judge scaled by 0.1"] = split(y, 0.1 * f)
    y, f = alttest_items("10k_prompts", "gemini_pro")
    cases["10k_prompts gemini_pro"] = split(y, f)
    for system in ("Human", "GPT-2"):
        for criterion, code in (("Relevance", "RE"), ("Coherence", "CH")):
            y, f = hanna_items(system, criterion, code)
            cases[f"hanna {system} {criterion}"] = split(y, f, seed=SEED + (system == "GPT-2"))
    return cases


@pytest.fixture(scope="module")
def reference() -> tuple[dict[str, PPIGroup], dict]:
    """(the cases, ppi_py's figures for them), from the reference venv in a subprocess."""
    python = require_reference_python("PPI_REFERENCE_PYTHON", why="the comparison with ppi_py",
                                      install=REFERENCE_COMMAND)
    cases = real_cases()
    request = {
        "alpha": ALPHA,
        "cases": {
            name: {key: np.asarray(getattr(g, key), dtype=float).tolist() for key in ("y_labelled", "f_labelled", "f_unlabelled")}
            for name, g in cases.items()
        },
    }
    for case in request["cases"].values():
        case["y"], case["f"] = case.pop("y_labelled"), case.pop("f_labelled")
    completed = subprocess.run(
        [python, str(REPO / "tests" / "support" / "ppi_reference.py")],
        input=json.dumps(request), capture_output=True, text=True, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    figures = json.loads(completed.stdout)
    assert figures["ppi_py"] == "0.2.3", figures["ppi_py"]
    return cases, figures["cases"]


def ours(group: PPIGroup, lam: float | None) -> PPIMean:
    return ppi_mean(y_labelled=group.y_labelled, f_labelled=group.f_labelled, f_unlabelled=group.f_unlabelled,
                    lam=lam, alpha=ALPHA)


def test_every_case_estimate_and_interval_equal_ppi_py_to_1e_9(reference) -> None:
    cases, figures = reference
    worst = 0.0
    for name, group in cases.items():
        for lam in LAMS:
            mine, theirs = ours(group, lam), figures[name][str(lam)]
            for field in ("estimate", "ci_low", "ci_high"):
                gap = abs(getattr(mine, field) - theirs[field])
                worst = max(worst, gap)
                assert gap <= 1e-9, f"{name}, lam={lam}, {field}: ours {getattr(mine, field)!r}, ppi_py {theirs[field]!r}"
    print(f"\nppi_py agreement: {len(cases)} real-data cases x lam None/0/1, largest gap {worst:.3g}")


def test_the_clipping_cases_reach_both_ends_and_the_real_cases_lie_between(reference) -> None:
    cases, _ = reference
    assert ours(cases["summeval coherence, judge negated"], None).lam == 0.0
    assert ours(cases["summeval coherence, judge scaled by 0.1"], None).lam == 1.0
    assert 0.0 < ours(cases["summeval coherence gpt-4o"], None).lam < 1.0


@pytest.mark.parametrize("criterion", ["Relevance", "Coherence"])
@pytest.mark.parametrize("lam", LAMS)
def test_the_hanna_difference_combines_ppi_py_per_group_figures(reference, criterion: str, lam: float | None) -> None:
    """Human-written against GPT-2 stories (the paper's table 1): each group's estimate and variance are ppi_py's
    (variance = (half-width / z)^2), and the difference is statsmodels' normal interval and p on their sum."""
    cases, figures = reference
    a, b = cases[f"hanna Human {criterion}"], cases[f"hanna GPT-2 {criterion}"]
    diff = ppi_mean_difference(group_a=a, group_b=b, lam=lam, alpha=ALPHA)
    z = z_quantile(ALPHA)
    variances = []
    for group, name in ((diff.group_a, "Human"), (diff.group_b, "GPT-2")):
        theirs = figures[f"hanna {name} {criterion}"][str(lam)]
        their_var = ((theirs["ci_high"] - theirs["ci_low"]) / (2 * z)) ** 2
        assert group.estimate == pytest.approx(theirs["estimate"], abs=1e-9)
        assert group.se**2 == pytest.approx(their_var, abs=1e-12)
        variances.append(their_var)
    estimate_a = figures[f"hanna Human {criterion}"][str(lam)]["estimate"]
    estimate_b = figures[f"hanna GPT-2 {criterion}"][str(lam)]["estimate"]
    se = math.sqrt(sum(variances))
    low, high = _zconfint_generic(estimate_a - estimate_b, se, ALPHA, "two-sided")
    assert diff.estimate == pytest.approx(estimate_a - estimate_b, abs=1e-9)
    assert (diff.ci_low, diff.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert diff.p == pytest.approx(_zstat_generic(estimate_a - estimate_b, 0, se, "two-sided", 0)[1], abs=1e-12)


# ---------------------------------------------------------------------------
# Properties that hold on any data


def test_lambda_zero_is_the_humans_only_interval_and_worth_exactly_its_items() -> None:
    group = real_like_group(seed=1)
    result = ours(group, 0)
    assert result.estimate == pytest.approx(result.classical_estimate, abs=1e-15)
    assert (result.ci_low, result.ci_high) == pytest.approx((result.classical_ci_low, result.classical_ci_high), abs=1e-12)
    assert result.effective_n == pytest.approx(result.n_labelled, rel=1e-12)
    assert result.extra_items == pytest.approx(0.0, abs=1e-9)


def test_effective_n_is_the_item_count_whose_humans_only_interval_is_as_wide() -> None:
    result = ours(real_like_group(seed=2), None)
    # Humans-only half-width with m items: z * sd0 / sqrt(m); solve for the PPI half-width.
    sd0 = result.classical_se * math.sqrt(result.n_labelled)
    m = (sd0 * z_quantile(ALPHA) / ((result.ci_high - result.ci_low) / 2)) ** 2
    assert result.effective_n == pytest.approx(m, rel=1e-12)
    assert result.effective_n > result.n_labelled  # a judge correlated at about 0.8 is worth extra items


def test_the_power_tuned_lambda_gives_the_narrowest_of_a_grid_of_lambdas_up_to_estimation() -> None:
    group = real_like_group(seed=3)
    tuned = ours(group, None)
    grid = [ours(group, lam).se for lam in np.linspace(0, 1, 101)]
    # lambda is tuned on a plug-in variance (ddof 1 over all items, ppi_py's form), so it is near the
    # grid's best, not exactly on it.
    assert tuned.se <= min(grid) * 1.01


def test_missing_pairs_and_unlabelled_nans_are_dropped() -> None:
    group = real_like_group(seed=4)
    y, f, fu = (np.asarray(getattr(group, k), dtype=float) for k in ("y_labelled", "f_labelled", "f_unlabelled"))
    y_gaps, f_gaps, fu_gaps = y.copy(), f.copy(), np.append(fu, [np.nan, np.nan])
    y_gaps[[0, 5]] = np.nan
    f_gaps[9] = np.nan
    with_gaps = ppi_mean(y_labelled=y_gaps, f_labelled=f_gaps, f_unlabelled=fu_gaps)
    keep = np.ones(y.size, dtype=bool)
    keep[[0, 5, 9]] = False
    assert with_gaps == ppi_mean(y_labelled=y[keep], f_labelled=f[keep], f_unlabelled=fu)
    assert with_gaps.n_labelled == y.size - 3


def real_like_group(seed: int, n: int = 150, big_n: int = 600) -> PPIGroup:
    rng = np.random.default_rng(seed)
    q = rng.normal(3.0, 0.9, n + big_n)
    y = np.clip(np.round(q[:, None] + rng.normal(0, 0.7, (n + big_n, 3))), 1, 5).mean(axis=1)
    f = np.clip(np.round(q + rng.normal(0, 0.5, n + big_n)), 1, 5)
    return PPIGroup(y_labelled=y[:n], f_labelled=f[:n], f_unlabelled=f[n:])


# ---------------------------------------------------------------------------
# The random subset


def test_the_subset_is_seeded_sorted_distinct_and_of_the_asked_size() -> None:
    chosen, probabilities = draw_human_subset(1000, share=0.2, seed=7)
    again, _ = draw_human_subset(1000, share=0.2, seed=7)
    other, _ = draw_human_subset(1000, share=0.2, seed=8)
    assert np.array_equal(chosen, again) and not np.array_equal(chosen, other)
    assert chosen.size == 200 and np.unique(chosen).size == 200 and np.all(np.diff(chosen) > 0)
    assert chosen.min() >= 0 and chosen.max() < 1000
    assert probabilities.shape == (1000,) and np.all(probabilities == 0.2)
    by_count, probabilities = draw_human_subset(1000, count=300, seed=7)
    assert by_count.size == 300 and np.all(probabilities == 0.3)


@pytest.mark.parametrize(("n_items", "share", "expected"), [(10, 0.25, 3), (10, 0.24, 2), (10, 0.01, 1), (7, 1.0, 7)])
def test_a_share_rounds_half_up_and_never_to_nothing(n_items: int, share: float, expected: int) -> None:
    assert draw_human_subset(n_items, share=share, seed=0)[0].size == expected


def test_every_item_is_drawn_equally_often() -> None:
    counts = np.zeros(20)
    for seed in range(4000):
        counts[draw_human_subset(20, count=5, seed=seed)[0]] += 1
    # Each count is binomial(4000, 0.25): sd 27.4; 4.5 sd allows for the 20 counts.
    assert np.abs(counts - 1000).max() < 4.5 * math.sqrt(4000 * 0.25 * 0.75)


@pytest.mark.parametrize(
    "kwargs",
    [{"share": 0.2, "count": 3}, {}, {"share": 0.0}, {"share": 1.5}, {"count": -1}, {"count": 11}],
)
def test_a_bad_subset_request_is_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        draw_human_subset(10, seed=0, **kwargs)


# ---------------------------------------------------------------------------
# Active inclusion probabilities


def test_active_probabilities_spend_the_budget_follow_the_uncertainty_and_keep_a_floor() -> None:
    rng = np.random.default_rng(0)
    u = rng.uniform(0, 2, 1000)
    for budget in (20.0, 200.0, 700.0):
        pi = active_inclusion_probabilities(u, budget=budget, floor_share=0.2)
        assert pi.sum() == pytest.approx(budget, rel=1e-9)
        assert pi.min() >= 0.2 * budget / 1000 * (1 - 1e-12) and pi.max() <= 1.0
        order = np.argsort(u)
        assert np.all(np.diff(pi[order]) >= -1e-15)  # more uncertain, at least as likely
    pi = active_inclusion_probabilities(u, budget=200.0, floor_share=0.2)
    top = u > np.quantile(u, 0.5)
    assert pi[top].mean() > 200 / 1000 > pi[~top].mean()


def test_equal_uncertainties_give_the_uniform_rule_and_certain_items_take_what_is_left() -> None:
    assert np.array_equal(active_inclusion_probabilities(np.full(8, 0.3), budget=2), np.full(8, 0.25))
    u = np.array([0.0, 0.0, 1.0, 2.0, np.nan])
    pi = active_inclusion_probabilities(u, budget=4.0)
    # The three uncertain items (NaN counts as the largest) reach 1; the two certain ones share the last 1.
    assert pi == pytest.approx([0.5, 0.5, 1.0, 1.0, 1.0], rel=1e-9)


def test_the_poisson_draw_includes_each_item_with_its_probability() -> None:
    pi = np.linspace(0.05, 0.95, 10)
    counts = np.zeros(10)
    for seed in range(3000):
        counts[draw_active_subset(pi, seed=seed)] += 1
    sd = np.sqrt(3000 * pi * (1 - pi))
    assert np.all(np.abs(counts - 3000 * pi) < 4.5 * sd)
    assert np.array_equal(draw_active_subset(pi, seed=1), draw_active_subset(pi, seed=1))


# ---------------------------------------------------------------------------
# Coverage on simulated studies: 2,000 seeded studies per judge, 95 % intervals around the true human mean

STUDIES = 2000
ITEMS = 1000
LABELLED = 200
HUMAN_SD, ITEM_SD, CENTRE = 0.7, 0.9, 3.0


def true_human_mean() -> float:
    """E[Y]: each human rating is clip(round(q + e), 1, 5) with q + e ~ N(3, 0.9^2 + 0.7^2); Y is a mean of three."""
    scale = math.hypot(ITEM_SD, HUMAN_SD)
    cdf = sps.norm(CENTRE, scale).cdf
    probabilities = [cdf(1.5)] + [cdf(k + 0.5) - cdf(k - 0.5) for k in (2, 3, 4)] + [1 - cdf(4.5)]
    return float(np.dot(probabilities, [1, 2, 3, 4, 5]))


def simulated_study(judge: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, f, u) per item: three humans on a 1-5 scale; the judge's three samples (f their mean, u their sd),
    with item-dependent noise so that u says where the judge errs."""
    rng = np.random.default_rng([SEED, seed])
    q = rng.normal(CENTRE, ITEM_SD, ITEMS)
    y = np.clip(np.round(q[:, None] + rng.normal(0, HUMAN_SD, (ITEMS, 3))), 1, 5).mean(axis=1)
    noise = rng.uniform(0.2, 1.4, ITEMS)[:, None] * rng.normal(size=(ITEMS, 3))
    if judge == "good":
        samples = np.clip(np.round(q[:, None] + noise), 1, 5)
    elif judge == "biased":  # too lenient by 0.8 at the centre, and compressed
        samples = np.clip(np.round(0.5 * q[:, None] + 2.3 + noise), 1, 5)
    else:  # useless: uniform on the scale, whatever the item
        samples = rng.integers(1, 6, (ITEMS, 3)).astype(float)
    return y, samples.mean(axis=1), samples.std(axis=1, ddof=1)


def coverage(estimate: Callable[[str, int], tuple[float, float]], judge: str) -> tuple[float, float, float]:
    """(coverage, mean estimate, seconds) over the seeded studies."""
    truth, hits, estimates = true_human_mean(), 0, []
    start = time.perf_counter()
    for seed in range(STUDIES):
        low, high = estimate(judge, seed)
        hits += low <= truth <= high
        estimates.append((low + high) / 2)
    return hits / STUDIES, float(np.mean(estimates)), time.perf_counter() - start


def uniform_ppi(judge: str, seed: int) -> tuple[float, float]:
    y, f, _ = simulated_study(judge, seed)
    chosen, _ = draw_human_subset(ITEMS, count=LABELLED, seed=seed)
    labelled = np.zeros(ITEMS, dtype=bool)
    labelled[chosen] = True
    result = ppi_mean(y_labelled=y[labelled], f_labelled=f[labelled], f_unlabelled=f[~labelled], alpha=ALPHA)
    return result.ci_low, result.ci_high


def active_ppi(judge: str, seed: int) -> tuple[float, float]:
    y, f, u = simulated_study(judge, seed)
    pi = active_inclusion_probabilities(u, budget=LABELLED)  # the default floor, half the uniform rate
    drawn = draw_active_subset(pi, seed=seed)
    result = active_ppi_mean(y=y, f=f, inclusion_probabilities=pi, labelled=drawn, alpha=ALPHA)  # lambda = 1
    return result.ci_low, result.ci_high


@pytest.mark.parametrize("estimator", [uniform_ppi, active_ppi], ids=["ppi++ on a uniform 20 %", "active ipw"])
def test_95_percent_intervals_cover_the_true_human_mean_whatever_the_judge(estimator) -> None:
    report = {judge: coverage(estimator, judge) for judge in ("good", "biased", "useless")}
    # Monte-Carlo se of a 95 % coverage over 2,000 studies: 0.49 %; the band is about 3 of them.
    lines = [f"{judge}: coverage {c:.2%}, mean centre {m:.4f} (truth {true_human_mean():.4f}), {s:.1f} s"
             for judge, (c, m, s) in report.items()]
    message = f"{estimator.__name__}, {STUDIES} studies per judge\n" + "\n".join(lines)
    print("\n" + message)
    for c, _, _ in report.values():
        assert 0.935 <= c <= 0.965, message


def test_a_good_judge_narrows_the_interval_and_a_useless_one_costs_almost_nothing() -> None:
    widths: dict[str, list[float]] = {"good": [], "useless": []}
    classical: list[float] = []
    for seed in range(200):
        for judge in widths:
            y, f, _ = simulated_study(judge, seed)
            group = split_first(y, f)
            result = ours(group, None)
            widths[judge].append(result.ci_high - result.ci_low)
            if judge == "good":
                classical.append(result.classical_ci_high - result.classical_ci_low)
    assert np.mean(widths["good"]) < 0.85 * np.mean(classical)
    assert np.mean(widths["useless"]) < 1.02 * np.mean(classical)


def test_active_sampling_narrows_the_interval_where_the_judge_spread_predicts_its_error() -> None:
    """Precise humans and a judge whose five samples scatter widely on a fifth of the items and agree on the rest:
    drawing those items more often beats a uniform draw of the same (expected) budget."""
    widths: dict[str, list[float]] = {"uniform": [], "active": []}
    for seed in range(300):
        rng = np.random.default_rng([SEED, 7, seed])
        q = rng.normal(CENTRE, ITEM_SD, ITEMS)
        y = q + rng.normal(0, 0.1, ITEMS)
        spread = np.where(rng.random(ITEMS) < 0.2, 1.5, 0.1)[:, None]
        samples = q[:, None] + spread * rng.normal(size=(ITEMS, 5))
        f, u = samples.mean(axis=1), samples.std(axis=1, ddof=1)
        uniform = ours(split_first(y, f), None)
        pi = active_inclusion_probabilities(u, budget=LABELLED)
        active = active_ppi_mean(y=y, f=f, inclusion_probabilities=pi, labelled=draw_active_subset(pi, seed=seed))
        widths["uniform"].append(uniform.ci_high - uniform.ci_low)
        widths["active"].append(active.ci_high - active.ci_low)
    assert np.mean(widths["active"]) < 0.95 * np.mean(widths["uniform"]), {k: np.mean(v) for k, v in widths.items()}


def split_first(y: np.ndarray, f: np.ndarray) -> PPIGroup:
    return PPIGroup(y_labelled=y[:LABELLED], f_labelled=f[:LABELLED], f_unlabelled=f[LABELLED:])


# ---------------------------------------------------------------------------
# The planner


def test_the_scan_equals_the_closed_form_where_lambda_is_not_clipped() -> None:
    a, b = GroupMoments(0.8, 0.7, 0.8, 1000), GroupMoments(0.6, 0.9, 0.6, 1500)
    plan = plan_human_budget(group_a=a, group_b=b, width=0.15)
    z = z_quantile(0.05)
    target = (0.15 / (2 * z)) ** 2
    closed = math.ceil(
        (a.sd_human**2 * (1 - a.rho**2) + b.sd_human**2 * (1 - b.rho**2))
        / (target - a.sd_human**2 * a.rho**2 / a.n_items - b.sd_human**2 * b.rho**2 / b.n_items)
    )
    assert plan.with_judge is not None and plan.without_judge is not None
    assert (plan.with_judge.n_a, plan.with_judge.n_b) == (closed, closed)
    assert 0 < plan.with_judge.lam_a < 1 and 0 < plan.with_judge.lam_b < 1
    alone = math.ceil((a.sd_human**2 + b.sd_human**2) / target)
    assert (plan.without_judge.n_a, plan.without_judge.n_b) == (alone, alone)
    assert plan.items_saved == 2 * (alone - closed)


def simulate_difference(a: GroupMoments, b: GroupMoments, n: int, lam: float | None, reps: int, seed: int):
    """Widths, estimates and coverage of ppi_mean_difference on studies drawn from bivariate normal (Y, f) with
    the groups' moments (means 3.0 and 2.8), n human-rated items per group drawn at random."""
    rng = np.random.default_rng(seed)
    widths, estimates, hits = [], [], 0
    groups = []
    for moments, mean in ((a, 3.0), (b, 2.8)):
        cov = moments.rho * moments.sd_human * moments.sd_judge
        groups.append((moments, mean, [[moments.sd_human**2, cov], [cov, moments.sd_judge**2]]))
    for _ in range(reps):
        data = []
        for moments, mean, covariance in groups:
            yf = rng.multivariate_normal([mean, mean + 0.3], covariance, size=moments.n_items)
            chosen = rng.permutation(moments.n_items)
            lab, unl = chosen[:n], chosen[n:]
            data.append(PPIGroup(y_labelled=yf[lab, 0], f_labelled=yf[lab, 1], f_unlabelled=yf[unl, 1]))
        result = ppi_mean_difference(group_a=data[0], group_b=data[1], lam=lam)
        widths.append(result.ci_high - result.ci_low)
        estimates.append(result.estimate)
        hits += result.ci_low <= 0.2 <= result.ci_high
    return np.array(widths), np.array(estimates), hits / reps


@pytest.mark.parametrize(
    ("sd_judge", "rho", "clipped"),
    [(0.7, 0.8, False), (0.08, 0.9, True)],
    ids=["lambda inside (0, 1)", "a compressed judge: lambda clipped to 1"],
)
def test_the_planned_budget_gives_the_target_width_in_a_brute_force_simulation(
    sd_judge: float, rho: float, clipped: bool
) -> None:
    a = GroupMoments(0.8, sd_judge, rho, 800)
    b = GroupMoments(0.8, sd_judge, rho, 800)
    plan = plan_human_budget(group_a=a, group_b=b, width=0.25)
    assert plan.with_judge is not None and plan.without_judge is not None
    assert (plan.with_judge.lam_a == 1.0) is clipped
    n = plan.with_judge.n_a
    widths, estimates, covered = simulate_difference(a, b, n, None, reps=600, seed=11)
    predicted_sd = math.sqrt(2 * float(ppi_variance(a, n)[0]))
    # Monte-Carlo: the sd of 600 estimates is within about 3 %; the mean width within 0.2 %.
    assert np.std(estimates) == pytest.approx(predicted_sd, rel=0.09)
    assert np.mean(widths) == pytest.approx(plan.with_judge.width, rel=0.02)
    assert np.mean(widths) <= 0.25 * 1.02
    assert 0.93 <= covered <= 0.97
    # One item fewer per group would miss the target, in the plan; 10 % fewer misses it in simulation too.
    fewer, _, _ = simulate_difference(a, b, int(n * 0.9), None, reps=200, seed=12)
    assert np.mean(fewer) > 0.25
    humans, _, _ = simulate_difference(a, b, plan.without_judge.n_a, 0, reps=200, seed=13)
    assert np.mean(humans) == pytest.approx(plan.without_judge.width, rel=0.02)


def test_pilot_moments_recover_the_population_and_plan_like_the_stated_ones() -> None:
    rng = np.random.default_rng(5)
    yf = rng.multivariate_normal([3, 3], [[0.64, 0.448], [0.448, 0.49]], size=20000)
    pilot = pilot_moments(y=yf[:, 0], f=yf[:, 1], n_unlabelled=0)
    assert (pilot.sd_human, pilot.sd_judge, pilot.rho) == pytest.approx((0.8, 0.7, 0.8), abs=0.01)
    small = pilot_moments(y=yf[:50, 0], f=yf[:50, 1], n_unlabelled=950)
    assert small.n_items == 1000
    stated = GroupMoments(0.8, 0.7, 0.8, 1000)
    from_pilot = plan_human_budget(group_a=pilot_moments(y=yf[:, 0], f=yf[:, 1], n_unlabelled=0), group_b=stated, width=0.3)
    from_rho = plan_human_budget(group_a=GroupMoments(0.8, 0.7, 0.8, 20000), group_b=stated, width=0.3)
    assert from_pilot.with_judge is not None and from_rho.with_judge is not None
    assert from_pilot.with_judge.n_a == pytest.approx(from_rho.with_judge.n_a, rel=0.05)


def test_a_width_the_items_cannot_reach_is_said() -> None:
    plan = plan_human_budget(group_a=GroupMoments(1.0, 1.0, 0.5, 50), group_b=GroupMoments(1.0, 1.0, 0.5, 50), width=0.1)
    assert plan.with_judge is None and plan.without_judge is None and plan.items_saved is None
    assert len(plan.notes) == 2 and "every item rated by people" in plan.notes[0]


def test_a_judge_uncorrelated_with_people_saves_nothing() -> None:
    g = GroupMoments(0.8, 0.7, 0.0, 1000)
    plan = plan_human_budget(group_a=g, group_b=g, width=0.2)
    assert plan.items_saved == 0 and plan.with_judge is not None and plan.with_judge.lam_a == 0.0


# ---------------------------------------------------------------------------
# Undefined cases: NaN fields and a reason, never an exception on data

NAN = float("nan")


@pytest.mark.parametrize(
    ("y", "f", "fu", "lam", "reason", "classical_defined"),
    [
        ([2.0], [2.5], [3.0, 4.0], None, "at least 2", False),
        ([NAN, 2.0, 3.0], [1.0, NAN, 3.0], [3.0, 4.0], None, "at least 2", False),
        ([], [], [3.0, 4.0], None, "at least 2", False),
        ([2.0, 3.0, 4.0], [2.0, 3.0, 4.0], [], None, "no unlabelled items", True),
        ([2.0, 3.0, 4.0], [2.0, 3.0, 4.0], [NAN, NAN], 1.0, "no unlabelled items", True),
        ([2.0, 3.0, 4.0], [3.0, 3.0, 3.0], [3.0, 3.0], None, "do not vary", True),
        ([3.0, 3.0, 3.0], [3.0, 3.0, 3.0], [3.0, 3.0], 1.0, "zero standard error", False),
        ([3.0, 3.0, 3.0], [2.0, 3.0, 4.0], [3.0, 2.0], None, "zero standard error", False),
    ],
)
def test_an_undefined_ppi_mean_is_nan_with_a_reason(y, f, fu, lam, reason: str, classical_defined: bool) -> None:
    result = ppi_mean(y_labelled=y, f_labelled=f, f_unlabelled=fu, lam=lam)
    assert result.reason is not None and reason in result.reason and not result.defined
    assert all(math.isnan(v) for v in (result.estimate, result.ci_low, result.ci_high, result.se, result.effective_n))
    assert math.isnan(result.classical_ci_low) is not classical_defined


def test_a_constant_judge_still_gives_the_humans_only_interval_at_lambda_zero() -> None:
    result = ppi_mean(y_labelled=[2.0, 3.0, 4.0], f_labelled=[3.0] * 3, f_unlabelled=[3.0, 3.0], lam=0)
    assert result.defined and result.estimate == 3.0 and result.effective_n == pytest.approx(3.0)


def test_constant_human_scores_leave_effective_n_undefined_but_the_fixed_lambda_interval_defined() -> None:
    result = ppi_mean(y_labelled=[3.0, 3.0, 3.0], f_labelled=[2.0, 3.0, 4.0], f_unlabelled=[3.0, 2.0], lam=1)
    assert result.defined and math.isnan(result.effective_n) and math.isnan(result.classical_se)


def test_an_undefined_group_makes_the_difference_undefined_and_names_the_group() -> None:
    good = real_like_group(seed=6)
    empty = PPIGroup(y_labelled=[], f_labelled=[], f_unlabelled=[1.0, 2.0])
    result = ppi_mean_difference(group_a=good, group_b=empty)
    assert result.reason is not None and result.reason.startswith("group b: ")
    assert all(math.isnan(v) for v in (result.estimate, result.ci_low, result.ci_high, result.se, result.p))
    assert result.group_a.defined and math.isnan(result.classical_estimate)


def test_fewer_than_two_human_rated_items_leave_the_active_estimate_undefined() -> None:
    y = np.array([3.0, NAN, 2.0, 4.0])
    pi = np.full(4, 0.5)
    result = active_ppi_mean(y=y, f=[3.0, 3.0, 2.0, 4.0], inclusion_probabilities=pi, labelled=[0, 1])
    assert result.n_labelled == 1 and "at least 2" in (result.reason or "") and math.isnan(result.estimate)


def test_a_labelled_item_without_a_human_score_counts_as_unlabelled_and_a_missing_judge_score_as_the_mean() -> None:
    rng = np.random.default_rng(9)
    y, f = rng.normal(3, 1, 50), rng.normal(3, 1, 50)
    pi = np.full(50, 0.4)
    base = active_ppi_mean(y=y, f=f, inclusion_probabilities=pi, labelled=np.arange(0, 50, 2))
    y_gap = y.copy()
    y_gap[4] = NAN
    gap = active_ppi_mean(y=y_gap, f=f, inclusion_probabilities=pi, labelled=np.arange(0, 50, 2))
    dropped = active_ppi_mean(y=y, f=f, inclusion_probabilities=pi, labelled=np.delete(np.arange(0, 50, 2), 2))
    assert gap == dropped and gap.n_labelled == base.n_labelled - 1
    f_gap = f.copy()
    f_gap[7] = NAN
    filled = f.copy()
    filled[7] = np.mean(np.delete(f, 7))
    assert active_ppi_mean(y=y, f=f_gap, inclusion_probabilities=pi, labelled=np.arange(0, 50, 2)) == active_ppi_mean(
        y=y, f=filled, inclusion_probabilities=pi, labelled=np.arange(0, 50, 2)
    )


def test_undefined_pilots_and_their_plans_say_why() -> None:
    assert "at least 3" in (pilot_moments(y=[1.0, 2.0], f=[1.0, 2.0], n_unlabelled=10).reason or "")
    constant = pilot_moments(y=[2.0, 2.0, 2.0, 2.0], f=[1.0, 2.0, 3.0, 4.0], n_unlabelled=10)
    assert constant.reason is not None and math.isnan(constant.rho)
    plan = plan_human_budget(group_a=GroupMoments(0.8, 0.7, 0.8, 100), group_b=constant, width=0.3)
    assert plan.with_judge is None and (plan.reason or "").startswith("group b: ")
    # Eighth review: the reason names the group when the caller gives the names, and says what does not vary (the
    # per-item human means, with their value), not "the human scores".
    assert constant.reason == "the pilot's human item means do not vary, all 2"
    named = plan_human_budget(group_a=GroupMoments(0.8, 0.7, 0.8, 100), group_b=constant, width=0.3,
                              names=("gpt2", "human"))
    assert named.reason == "group “human”: the pilot's human item means do not vary, all 2"
    thirds = pilot_moments(y=[13 / 3] * 3, f=[1.0, 2.0, 3.0], n_unlabelled=0)
    assert thirds.reason == "the pilot's human item means do not vary, all 4.33"


def test_the_t_widening_is_the_t_quantile_over_the_normal_one_at_the_pooled_df() -> None:
    # The demo's 2.221 on 3 + 3 items: a 95 % t interval (df 4) would be about 3.15 wide.
    factor, df = t_widening(3, 3)
    assert df == 4 and factor == pytest.approx(sps.t.ppf(0.975, 4) / sps.norm.ppf(0.975), rel=1e-12)
    assert 2.221 * factor == pytest.approx(3.15, abs=0.005)
    assert t_widening(30, 30)[0] == pytest.approx(sps.t.ppf(0.975, 58) / sps.norm.ppf(0.975), rel=1e-12)
    assert t_widening(10, 4, alpha=0.1) == (pytest.approx(sps.t.ppf(0.95, 12) / sps.norm.ppf(0.95), rel=1e-12), 12)
    # The pooled df is Welch-Satterthwaite's largest value, so the factor never exceeds Welch's.
    for s_a, s_b in ((1.0, 1.0), (1.0, 3.0), (0.2, 2.0)):
        v_a, v_b = s_a**2 / 3, s_b**2 / 5
        welch = (v_a + v_b) ** 2 / (v_a**2 / 2 + v_b**2 / 4)
        assert t_widening(3, 5)[0] <= sps.t.ppf(0.975, welch) / sps.norm.ppf(0.975)
    with pytest.raises(ValueError, match="n_a \\+ n_b >= 3"):
        t_widening(1, 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ppi_mean(y_labelled=[1.0, 2.0], f_labelled=[1.0], f_unlabelled=[1.0]),
        lambda: ppi_mean(y_labelled=[1.0, 2.0], f_labelled=[1.0, 2.0], f_unlabelled=[1.0], alpha=0.0),
        lambda: ppi_mean(y_labelled=[1.0, 2.0], f_labelled=[1.0, 2.0], f_unlabelled=[1.0], lam=math.inf),
        lambda: ppi_mean(y_labelled=[[1.0, 2.0]], f_labelled=[[1.0, 2.0]], f_unlabelled=[1.0]),
        lambda: ppi_mean(y_labelled=[1.0, math.inf], f_labelled=[1.0, 2.0], f_unlabelled=[1.0]),
        lambda: active_inclusion_probabilities([1.0, 2.0], budget=3.0),
        lambda: active_inclusion_probabilities([1.0, -2.0], budget=1.0),
        lambda: active_inclusion_probabilities([1.0, 2.0], budget=1.0, floor_share=1.5),
        lambda: active_inclusion_probabilities([1.0, 2.0], budget=1.0, floor_share=0.0),
        lambda: draw_active_subset([0.5, 0.0], seed=1),
        lambda: active_ppi_mean(y=[1.0, 2.0], f=[1.0, 2.0], inclusion_probabilities=[0.5, 1.2], labelled=[0, 1]),
        lambda: active_ppi_mean(y=[1.0, 2.0], f=[1.0, 2.0], inclusion_probabilities=[0.5, 0.5], labelled=[0, 0]),
        lambda: active_ppi_mean(y=[1.0, 2.0], f=[1.0, 2.0], inclusion_probabilities=[0.5, 0.5], labelled=[0, 2]),
        lambda: active_ppi_mean(y=[1.0], f=[1.0, 2.0], inclusion_probabilities=[0.5, 0.5], labelled=[0]),
        lambda: GroupMoments(0.0, 0.7, 0.8, 100),
        lambda: GroupMoments(0.8, 0.7, 1.2, 100),
        lambda: GroupMoments(0.8, 0.7, 0.8, 1),
        lambda: plan_human_budget(group_a=GroupMoments(0.8, 0.7, 0.8, 100), group_b=GroupMoments(0.8, 0.7, 0.8, 100), width=0.0),
        lambda: pilot_moments(y=[1.0, 2.0, 3.0], f=[1.0, 2.0, 3.0], n_unlabelled=-1),
    ],
)
def test_invalid_input_is_refused(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_the_ppi_modules_import_neither_django_nor_scipy_stats() -> None:
    # evalhub and evalhub.stats are bare namespace modules here, so that only the three PPI modules and what they
    # import load (the package's __init__ re-exports other statistics, some of which load scipy.stats).
    code = """
import sys, types
for name, path in (("evalhub", sys.argv[1]), ("evalhub.stats", sys.argv[1] + "/stats")):
    sys.modules[name] = module = types.ModuleType(name)
    module.__path__ = [path]
import evalhub.stats.ppi.mean, evalhub.stats.ppi.active, evalhub.stats.ppi.plan
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {"django", "celery"} or m.startswith("scipy.stats"))
assert not leaked, leaked
assert "evalhub.stats.ppi.plan" in sys.modules
"""
    completed = subprocess.run([sys.executable, "-c", code, str(REPO / "evalhub")], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
