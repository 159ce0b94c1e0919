"""The analysis selectors against independent computations (krippendorff, scipy, numpy by hand)."""
from __future__ import annotations

import itertools
import json

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps

from evalhub import stats
from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from llmjudge.models import LLMRating
from tests.evalhub.factories import import_long, live_run

pytestmark = pytest.mark.django_db

QUESTIONS = ["grammaticality", "cohesiveness", "likability", "relevance"]
GROUPS = ["gpt2", "human"]
N_ITEMS = 10  # per group
HALF_POINTS = [1 + k / 2 for k in range(9)]


def simulated(seed: int = 3) -> tuple[list[tuple], dict[tuple[str, str, str], np.ndarray]]:
    """Long rows and, per (question, group, pool), the items x raters matrix they should become."""
    rng = np.random.default_rng(seed)
    rows, matrices = [], {}
    for question in QUESTIONS:
        for group in GROUPS:
            truth = rng.integers(2, 5, size=N_ITEMS) + (1 if group == "human" else 0)
            human = np.clip(truth[:, None] + rng.integers(-1, 2, size=(N_ITEMS, 3)), 1, 5).astype(float)
            human[rng.random(human.shape) < 0.15] = np.nan  # some items rated by fewer raters
            llm = np.clip(np.round(2 * (truth[:, None] + rng.normal(0, 0.6, size=(N_ITEMS, 3)))) / 2, 1, 5)
            llm[rng.random(llm.shape) < 0.1] = np.nan
            matrices[(question, group, "human")] = human
            matrices[(question, group, "gpt-x")] = llm
            for i in range(N_ITEMS):
                for r in range(3):
                    if not np.isnan(human[i, r]):
                        rows.append((f"{group}-{i}", group, question, "human", f"teacher-{r + 1}", human[i, r]))
                    if not np.isnan(llm[i, r]):
                        rows.append((f"{group}-{i}", group, question, "gpt-x", str(r), llm[i, r]))
    return rows, matrices


@pytest.fixture
def analysed(story_study, tmp_path):
    rows, matrices = simulated()
    import_long(story_study, rows, tmp_path)
    return story_study, matrices


def pooled(matrices, question, pool):
    return np.vstack([matrices[(question, g, pool)] for g in GROUPS])


def expected_icc1(matrix: np.ndarray) -> float:
    complete = matrix[~np.isnan(matrix).any(axis=1)]
    n, k = complete.shape
    grand = complete.mean()
    msb = k * ((complete.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msw = ((complete - complete.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (k - 1))
    return (msb - msw) / (msb + (k - 1) * msw)


def item_means(matrix: np.ndarray) -> np.ndarray:
    """Mean per item; NaN for an item nobody rated."""
    counts = (~np.isnan(matrix)).sum(axis=1)
    return np.where(counts > 0, np.nansum(matrix, axis=1) / np.maximum(counts, 1), np.nan)


def test_cells_match_the_krippendorff_package_and_hand_computed_descriptives(analysed):
    study, matrices = analysed
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200))
    cells = {(c.question, c.group, c.pool): c for c in result.cells}
    assert len(cells) == len(QUESTIONS) * len(GROUPS) * 2  # the pooled "(all)" cells only on request
    for (question, group, pool), matrix in matrices.items():
        cell = cells[(question, group, pool)]
        values = matrix[~np.isnan(matrix)]
        assert cell.n_ratings == values.size
        assert cell.n_items == int((~np.isnan(matrix)).any(axis=1).sum())
        assert cell.mean == pytest.approx(values.mean())
        assert cell.std == pytest.approx(values.std(ddof=1))
        for level in ("nominal", "ordinal", "interval", "ratio"):
            expected = krippendorff.alpha(matrix.T, level_of_measurement=level, value_domain=HALF_POINTS)
            assert cell.alpha[level] == pytest.approx(expected, abs=1e-9), (question, group, pool, level)
        low, high = cell.alpha_ci95
        assert low <= cell.alpha["ordinal"] <= high
        pairable = matrix[(~np.isnan(matrix)).sum(axis=1) >= 2]
        same = [np.nanmax(r) == np.nanmin(r) for r in pairable]
        assert cell.full_agreement_pct == pytest.approx(100 * np.mean(same))
        assert cell.icc1 == pytest.approx(expected_icc1(matrix))


def test_the_pooled_cell_is_asked_for_like_a_group_and_covers_every_group(analysed):
    study, matrices = analysed
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=(*GROUPS, ALL_GROUPS)))
    assert {c.group for c in result.cells} == {*GROUPS, ALL_GROUPS}
    cell = next(c for c in result.cells if (c.question, c.group, c.pool) == ("likability", ALL_GROUPS,
                                                                                          "human"))
    matrix = pooled(matrices, "likability", "human")
    assert cell.n_ratings == int((~np.isnan(matrix)).sum())
    assert cell.alpha["interval"] == pytest.approx(krippendorff.alpha(matrix.T, level_of_measurement="interval"))
    assert cell.icc1 == pytest.approx(expected_icc1(matrix))


def test_kendall_compares_per_item_means_of_human_and_llm_pools_with_scipy(analysed):
    study, matrices = analysed
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=50, groups=(*GROUPS, ALL_GROUPS)))
    assert len(result.kendall) == len(QUESTIONS) * 3
    assert {k.pool for k in result.kendall} == {"gpt-x"}
    for row in result.kendall:
        if row.group == ALL_GROUPS:
            human, llm = pooled(matrices, row.question, "human"), pooled(matrices, row.question, "gpt-x")
        else:
            human = matrices[(row.question, row.group, "human")]
            llm = matrices[(row.question, row.group, "gpt-x")]
        x, y = item_means(human), item_means(llm)
        both = ~np.isnan(x) & ~np.isnan(y)
        expected = sps.kendalltau(x[both], y[both])
        assert row.n == both.sum()
        assert row.tau == pytest.approx(expected.statistic)
        assert row.p == pytest.approx(expected.pvalue)
        assert row.band == stats.tau_band(expected.statistic, expected.pvalue)
        assert row.band in {"very weak", "weak", "moderate", "strong", "not significant"} or (
            row.band.endswith(" negative") and expected.statistic < 0)


def test_welch_tests_the_studys_contrast_on_item_means_or_on_all_ratings(analysed):
    study, matrices = analysed
    assert study.contrasts == [["human", "gpt2"]]
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=50))
    assert len(result.welch) == len(QUESTIONS) * 2
    for row in result.welch:
        a = item_means(matrices[(row.question, "human", row.pool)])
        b = item_means(matrices[(row.question, "gpt2", row.pool)])
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        expected = sps.ttest_ind(a, b, equal_var=False)
        assert (row.group_a, row.group_b, row.test.unit) == ("human", "gpt2", "item means")
        assert row.test.t == pytest.approx(expected.statistic)
        assert row.test.p == pytest.approx(expected.pvalue)
        assert row.test.mean_diff == pytest.approx(a.mean() - b.mean())
        assert (row.mean_a, row.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    ratings = study_analysis(study=study, options=AnalysisOptions(n_boot=50, welch_unit="ratings"))
    row = ratings.welch[0]
    a = matrices[(row.question, "human", row.pool)]
    b = matrices[(row.question, "gpt2", row.pool)]
    expected = sps.ttest_ind(a[~np.isnan(a)], b[~np.isnan(b)], equal_var=False)
    assert row.test.unit == "ratings"
    assert (row.test.n_a, row.test.n_b) == ((~np.isnan(a)).sum(), (~np.isnan(b)).sum())
    assert row.test.p == pytest.approx(expected.pvalue)


def test_empty_contrasts_mean_every_pair_of_groups(meaning_study, tmp_path):
    meaning_study.contrasts = []
    meaning_study.save()
    rows = [(f"{g}-{i}", g, "meaning", "human", f"r{r}", 1 + (i * r + len(g)) % 5)
            for g in meaning_study.groups for i in range(4) for r in range(2)]
    import_long(meaning_study, rows, tmp_path)
    result = study_analysis(study=meaning_study, options=AnalysisOptions(n_boot=20))
    pairs = [(w.group_a, w.group_b) for w in result.welch]
    assert pairs == list(itertools.combinations(meaning_study.groups, 2))


def test_pairwise_kendall_and_rater_means_use_rater_identity(analysed):
    study, matrices = analysed
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=50))
    row = next(r for r in result.pairwise_kendall
               if (r.question, r.group, r.pool) == ("cohesiveness", "human", "human"))
    matrix = matrices[("cohesiveness", "human", "human")]
    taus = []
    for i, j in itertools.combinations(range(3), 2):
        both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
        taus.append(sps.kendalltau(matrix[both, i], matrix[both, j]).statistic)
    assert row.mean_tau == pytest.approx(np.mean(taus))
    assert row.n_pairs == 3
    means = {r.rater: r for r in result.rater_means
             if (r.question, r.group, r.pool) == ("cohesiveness", "human", "human")}
    assert sorted(means) == ["teacher-1", "teacher-2", "teacher-3"]
    for k in range(3):
        assert means[f"teacher-{k + 1}"].mean == pytest.approx(np.nanmean(matrix[:, k]))
        assert means[f"teacher-{k + 1}"].n == (~np.isnan(matrix[:, k])).sum()
    llm_raters = {r.rater for r in result.rater_means if r.pool == "gpt-x"}
    assert llm_raters == {"sample-0", "sample-1", "sample-2"}


def test_only_ok_llm_ratings_count_and_the_others_are_counted_per_run(story_study, tmp_path):
    import_long(story_study, [(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + (i + r) % 5)
                              for i in range(6) for r in range(2)], tmp_path)
    statuses = ["ok", "ok", "refused", "unparseable", "ok", "error"]
    ratings = [(f"h{i}", "relevance", s, float(1 + (i * s) % 5) if statuses[(i + s) % 6] == "ok" else None,
                statuses[(i + s) % 6]) for i in range(6) for s in range(2)]
    run = live_run(story_study, "judge-a", ratings)
    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=20))
    pool = next(p for p in result.pools if p.name == "judge-a")
    expected = {s: sum(1 for r in ratings if r[4] == s) for s in {"ok", "refused", "unparseable", "error"}}
    assert pool.status_counts == expected
    assert pool.run_id == run.pk
    cell = next(c for c in result.cells if (c.pool, c.group, c.question) == ("judge-a", "human",
                                                                                          "relevance"))
    assert cell.n_ratings == expected["ok"] == LLMRating.objects.filter(run=run, status="ok").count()


@pytest.mark.usefixtures("fresh_cache")
def test_ratings_a_person_read_count_as_ok_and_apart_in_the_analysis_report_and_export(story_study, tmp_path,
                                                                                        researcher):
    from evalhub.analysis.cache import study_analysis_cached
    from evalhub.analysis.text_report import text_report
    from evalhub.imports.exports import RATING_COLUMNS, rating_rows
    from llmjudge.runs.review import rating_read_by_person

    import_long(story_study, [(f"h{i}", "human", "relevance", "human", f"r{r}", 1 + (i + r) % 5)
                              for i in range(6) for r in range(2)], tmp_path)
    ratings = [(f"h{i}", "relevance", 0, None if i < 3 else float(i % 5 + 1), "unparseable" if i < 3 else "ok")
               for i in range(6)]
    run = live_run(story_study, "judge-r", ratings)
    before = study_analysis_cached(study=story_study, options=AnalysisOptions(n_boot=20))
    assert next(p for p in before.pools if p.name == "judge-r").status_counts == {"ok": 3, "unparseable": 3}

    for rating, score in zip(run.ratings.filter(status="unparseable").order_by("pk")[:2], (2.0, 4.0), strict=True):
        rating_read_by_person(rating=rating, user=researcher, score=score)

    # The cached analysis sees the readings (they change the ratings' updated_at, which its fingerprint reads).
    result = study_analysis_cached(study=story_study, options=AnalysisOptions(n_boot=20))
    pool = next(p for p in result.pools if p.name == "judge-r")
    assert pool.status_counts == {"ok": 5, "read_by_person": 2, "unparseable": 1}
    assert list(pool.status_counts) == ["ok", "read_by_person", "unparseable"]
    cell = next(c for c in result.cells if (c.pool, c.group, c.question) == ("judge-r", "human", "relevance"))
    assert cell.n_ratings == 5
    assert json.loads(json.dumps(result.to_json()))["pools"][1]["status_counts"]["read_by_person"] == 2
    # One sample: 5 item x question ratings from its 5 answers (docs/analysis.md, "Words").
    assert ("judge-r (1 sample; 5 item × question ratings, 5 answers, errors 0, pending 0, read by a person 2, "
            "refused 0, unparseable 1)") in text_report(result)
    rows = [dict(zip(RATING_COLUMNS, row, strict=True)) for row in list(rating_rows([story_study]))[1:]]
    read = [r for r in rows if r["read_by_person"]]
    assert len(read) == 2 and all(r["status"] == "ok" and r["read_by_person"].startswith("owner 20") for r in read)
    assert sorted(r["score"] for r in read) == [2.0, 4.0]


def test_a_judge_with_several_runs_gets_one_pool_per_run_suffixed_with_the_run_id(story_study, tmp_path):
    import_long(story_study, [(f"h{i}", "human", "relevance", "human", "r1", 3) for i in range(3)], tmp_path)
    first = live_run(story_study, "judge-b", [("h0", "relevance", 0, 4.0, "ok")])
    second = live_run(story_study, "judge-b", [("h1", "relevance", 0, 2.0, "ok")])
    other = live_run(story_study, "judge-c", [("h2", "relevance", 0, 2.0, "ok")])
    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=20))
    assert [p.name for p in result.pools] == ["human", f"judge-b#{first.pk}", f"judge-b#{second.pk}",
                                                   "judge-c"]
    assert other.pk


def test_undefined_statistics_are_null_with_a_note_and_the_json_is_strict(story_study, tmp_path):
    # One rater everywhere, identical scores in one group: alpha, ICC and tau are undefined.
    rows = [(f"g{i}", "gpt2", "relevance", "human", "solo", 3) for i in range(4)]
    rows += [(f"h{i}", "human", "relevance", "human", "solo", 1 + i) for i in range(4)]
    rows += [(f"h{i}", "human", "relevance", "llm", "0", 2) for i in range(4)]
    import_long(story_study, rows, tmp_path)
    result = study_analysis(study=story_study, options=AnalysisOptions(n_boot=20))
    text = json.dumps(result.to_json(), allow_nan=False)
    assert json.loads(text) == result.to_json()
    cell = next(c for c in result.cells if (c.question, c.group, c.pool) == ("relevance", "gpt2",
                                                                                         "human"))
    assert cell.alpha == {"nominal": None, "ordinal": None, "interval": None, "ratio": None}
    assert cell.alpha_ci95 is None and cell.icc1 is None and cell.full_agreement_pct is None
    assert "no item has 2 or more ratings" in cell.notes["alpha.ordinal"]
    assert set(cell.notes) >= {"alpha.nominal", "alpha_ci95", "icc1", "icc1k", "full_agreement_pct"}
    kendall = next(k for k in result.kendall if k.group == "human" and k.question == "relevance")
    assert kendall.tau is None and "item means are all equal" in kendall.notes["tau"]  # in words (issue 25, U1)
    empty = next(c for c in result.cells if (c.question, c.group, c.pool) == ("grammaticality", "gpt2",
                                                                                          "human"))
    assert empty.n_ratings == 0 and empty.mean is None and empty.notes["mean"] == "no ratings"


def test_the_json_shape_is_the_documented_one(analysed):
    study, _ = analysed
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=20)).to_json()
    assert {"study", "pools", "cells", "kendall", "welch", "pairwise_kendall"} <= set(result)
    assert set(result["cells"][0]) >= {"question", "group", "pool", "n_items", "n_ratings", "mean", "std", "alpha",
                                       "alpha_ci95", "full_agreement_pct", "icc1", "icc1k", "notes"}
    assert set(result["cells"][0]["alpha"]) == {"nominal", "ordinal", "interval", "ratio"}
    assert set(result["kendall"][0]) >= {"question", "group", "pool", "tau", "p", "n", "notes"}
    assert set(result["welch"][0]) >= {"question", "pool", "group_a", "group_b", "t", "df", "p", "mean_diff",
                                       "cohens_d", "notes"}
    assert set(result["pairwise_kendall"][0]) >= {"question", "group", "pool", "mean_tau", "n_pairs", "notes"}
    assert result["settings"]["value_domain"] == HALF_POINTS


def test_filters_restrict_questions_groups_and_runs(analysed):
    study, _ = analysed
    run = study.judge_runs.get()
    options = AnalysisOptions(questions=("relevance",), groups=("human",), runs=(), n_boot=20)
    result = study_analysis(study=study, options=options)
    assert {c.question for c in result.cells} == {"relevance"}
    assert {c.group for c in result.cells} == {"human"}
    assert [p.name for p in result.pools] == ["human"]
    result = study_analysis(study=study, options=AnalysisOptions(runs=(run.pk,), n_boot=20))
    assert [p.name for p in result.pools] == ["human", "gpt-x"]


def test_the_number_of_queries_does_not_grow_with_the_data(analysed, django_assert_max_num_queries):
    study, _ = analysed
    # 12: one counts the ratings a person read (issue 24), through a partial index; one asks whether the study is
    # on Prolific (the result's cost, issue 26).
    with django_assert_max_num_queries(12):
        study_analysis(study=study, options=AnalysisOptions(n_boot=20))


def test_gold_items_are_left_out_of_the_statistics(story_study):
    from annotations.models import HumanRating, Item, Rater
    from evalhub.analysis import study_analysis

    question = story_study.questions.get(key="cohesiveness")
    raters = [Rater.objects.create(study=story_study, external_id=f"r{n}") for n in range(2)]
    normal = Item.objects.create(study=story_study, external_id="n", group="human", fields={})
    gold = Item.objects.create(study=story_study, external_id="g", group="human", fields={}, kind=Item.Kind.GOLD)
    for rater in raters:
        HumanRating.objects.create(rater=rater, item=normal, question=question, score=4)
        HumanRating.objects.create(rater=rater, item=gold, question=question, score=1)
    cells = [c for c in study_analysis(study=story_study).cells
             if c.question == "cohesiveness" and c.pool == "human"]
    assert [(c.group, c.n_items, c.n_ratings, c.mean) for c in cells] == [("human", 1, 2, 4.0)]
