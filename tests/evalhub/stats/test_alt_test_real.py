"""The alt-test on the authors' own data (../shared/data/AltTest), against a computation written here.

The reference below follows the issue's description with plain loops over humans and instances and
shares no code with evalhub.stats.alt_test: it reads the JSON files itself, compares string labels as
strings, computes accuracy and RMSE on the other humans' labels directly and runs Benjamini-Yekutieli as
the step-up procedure. The settings are the authors' (SOURCES.md and their notebook): summeval with
negative RMSE and epsilon 0.2, framing with accuracy and epsilon 0.15.
"""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sps

from evalhub.stats.alt_test import alt_test
from tests.conftest import shared_path
from tests.support.alt_test_data import AUTHORS_SETTINGS, read_alt_test_dataset

Q = 0.05


def reference_alt_test(humans: dict, llm: dict, scoring: str, epsilon: float) -> dict:
    """The procedure as the issue words it; returns omega, rho and each tested human's p and rho_j."""
    raters_of: dict = {}
    for rater, ratings in humans.items():
        for instance in ratings:
            raters_of.setdefault(instance, []).append(rater)
    usable = {i for i, raters in raters_of.items() if len(raters) >= 2 and i in llm}

    def score(pred, others: list) -> float:
        if scoring == "accuracy":
            return sum(1.0 for o in others if pred == o) / len(others)
        return -math.sqrt(sum((pred - o) ** 2 for o in others) / len(others))

    p_values: dict = {}
    advantages: dict = {}
    for rater, ratings in humans.items():
        mine = [i for i in ratings if i in usable]
        if len(mine) < 30:
            continue
        d, w_llm_all = [], []
        for i in mine:
            others = [humans[o][i] for o in raters_of[i] if o != rater]
            s_llm, s_h = score(llm[i], others), score(ratings[i], others)
            w_llm = 1 if s_llm >= s_h else 0
            w_h = 1 if s_h >= s_llm else 0
            d.append(w_h - w_llm)
            w_llm_all.append(w_llm)
        p_values[rater] = float(sps.ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantages[rater] = sum(w_llm_all) / len(w_llm_all)

    # Benjamini-Yekutieli step-up: reject the k smallest p-values, k the largest rank with
    # p_(k) <= k / m * q / (1 + 1/2 + ... + 1/m). An undefined (NaN) p is never rejected.
    m = len(p_values)
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    ranked = sorted(p_values, key=lambda r: (math.isnan(p_values[r]), p_values[r]))
    last = 0
    for k, rater in enumerate(ranked, start=1):
        if p_values[rater] <= k / m * Q / harmonic:
            last = k
    rejected = set(ranked[:last])
    return {
        "omega": len(rejected) / m,
        "rho": sum(advantages.values()) / m,
        "p": p_values,
        "advantage": advantages,
        "rejected": rejected,
    }


@pytest.mark.parametrize("dataset", ["summeval", "framing"])
def test_every_llm_matches_the_independent_computation(dataset: str) -> None:
    folder = shared_path("data", "AltTest", "data", dataset)
    humans_raw = json.loads((folder / "human_annotations.json").read_text())
    llms_raw = json.loads((folder / "llm_annotations.json").read_text())
    scoring, epsilon = AUTHORS_SETTINGS[dataset]
    assert (scoring, epsilon) == {"summeval": ("neg_rmse", 0.2), "framing": ("accuracy", 0.15)}[dataset]
    coded = read_alt_test_dataset(folder)
    assert sorted(coded.llms) == sorted(llms_raw) and len(llms_raw) == 6

    omegas = set()
    for llm_name, llm_raw in llms_raw.items():
        expected = reference_alt_test(humans_raw, llm_raw, scoring, epsilon)
        result = alt_test(coded.humans, coded.llms[llm_name], scoring=scoring, epsilon=epsilon)
        assert result.winning_rate == pytest.approx(expected["omega"], abs=1e-12), llm_name
        assert result.advantage_probability == pytest.approx(expected["rho"], abs=1e-12), llm_name
        assert result.passed == (expected["omega"] >= 0.5)
        assert {h.rater: h.p for h in result.humans} == pytest.approx(expected["p"], rel=1e-9, abs=1e-300)
        assert {h.rater: h.advantage for h in result.humans} == pytest.approx(expected["advantage"], abs=1e-12)
        assert {h.rater for h in result.humans if h.rejected} == expected["rejected"]
        assert result.n_instances == len(next(iter(llms_raw.values())))
        omegas.add(expected["omega"])
    # The comparison must exercise both outcomes somewhere: framing has passing and failing LLMs.
    if dataset == "framing":
        assert len(omegas) > 1
