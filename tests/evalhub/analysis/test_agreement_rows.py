"""Kappa, the confusion matrix and the human ceiling in the analysis (issue 19), against scikit-learn and statsmodels.

The references are computed here from the raw rows, with plain Python for the majority and the pool label,
and scikit-learn / statsmodels for the statistics; the analysis is reached through the real import service.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from annotations.studies import study_create, study_create_from_template
from evalhub import stats
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report
from evalhub.imports.exports import TABLE_COLUMNS, csv_lines, table_rows
from tests.conftest import shared_path
from tests.evalhub.factories import import_long

PAIRWISE_CODES = {"model_a": 1, "model_b": 2, "tie": 3}


def _majority(labels: list[float]) -> float | None:
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def _rounded_mean(values: list[float]) -> float:
    return float(math.floor(sum(values) / len(values) + 0.5 + 1e-9))


def _likert_study(researcher, slug: str, questions: list[str]):
    spec = {"title": slug, "llm_template": "Rate:\n{text}\n{question}", "item_fields": ["text"],
            "scale": {"min": 1, "max": 5}, "questions": [{"key": q, "text": f"{q}?"} for q in questions]}
    return study_create(slug=slug, spec=spec, owner=researcher)


def test_rows_on_a_small_likert_study_match_sklearn_statsmodels_and_scipy(researcher, tmp_path):
    study = _likert_study(researcher, "small", ["q"])
    humans = {"i1": [5, 5, 4], "i2": [1, 2, 1], "i3": [3, 3, 3], "i4": [2, 4, 3], "i5": [4, 4, 5], "i6": [2, 2, 1],
              "i7": [5, 4, 4], "i8": [1, 1, 2]}
    judge = {"i1": [5, 4], "i2": [2, 2], "i3": [3, 4], "i4": [2, 2], "i5": [5, 5], "i6": [1, 1], "i7": [4, 4],
             "i8": [2, 1]}
    rows = [(i, "g", "q", "human", f"r{k}", s) for i, scores in humans.items() for k, s in enumerate(scores)]
    rows += [(i, "g", "q", "judge", str(k), s) for i, scores in judge.items() for k, s in enumerate(scores)]
    import_long(study, rows, tmp_path)
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=200))

    items = list(humans)
    majority = [_majority(humans[i]) for i in items]  # i4 is a three-way tie
    pool = [_rounded_mean(judge[i]) for i in items]  # 4.5 -> 5, 3.5 -> 4, 1.5 -> 2
    kept = [n for n, m in enumerate(majority) if m is not None]
    ref, pred = [majority[n] for n in kept], [pool[n] for n in kept]
    kappas = {(k.against, k.rater, k.weights): k for k in result.kappa if k.pool == "judge"}
    for weights in ("unweighted", "linear", "quadratic"):
        expected = cohen_kappa_score(ref, pred, labels=[1, 2, 3, 4, 5], weights=None if weights == "unweighted"
                                     else weights)
        row = kappas[("majority", None, weights)]
        assert row.kappa == pytest.approx(expected, abs=1e-12)
        assert (row.n_items, row.n_tied) == (7, 1)
        assert row.ci95[0] <= row.kappa <= row.ci95[1]
    per_rater_p = []
    for k in range(3):
        column = [humans[i][k] for i in items]
        row = kappas[("rater", f"r{k}", "unweighted")]
        assert row.kappa == pytest.approx(cohen_kappa_score(column, pool), abs=1e-12)
        table = sk_confusion(column, pool, labels=sorted(set(column) | set(pool)))
        assert row.p == pytest.approx(cohens_kappa(table).pvalue_two_sided, rel=1e-9)
        per_rater_p.append(row.p)
    adjusted = sps.false_discovery_control(per_rater_p, method="bh")
    assert [kappas[("rater", f"r{k}", "unweighted")].p_adjusted for k in range(3)] == pytest.approx(adjusted)

    fleiss = next(k for k in result.kappa if k.pool == "human")
    counts = np.array([[humans[i].count(c) for c in range(1, 6)] for i in items])
    assert fleiss.against == "raters" and fleiss.kappa == pytest.approx(fleiss_kappa(counts), abs=1e-12)

    confusion = next(c for c in result.confusion if c.pool == "judge")
    assert list(map(list, confusion.counts)) == sk_confusion(ref, pred, labels=[1, 2, 3, 4, 5]).tolist()
    assert confusion.labels == ("1", "2", "3", "4", "5") and confusion.n_tied == 1

    ceiling = next(c for c in result.ceiling if c.pool == "judge")
    assert ceiling.scoring == "neg_rmse"
    means = {i: sum(v) / len(v) for i, v in judge.items()}  # the ceiling uses the unrounded mean
    for k, rater in enumerate(ceiling.raters):
        others = {i: [s for j, s in enumerate(humans[i]) if j != k] for i in items}
        own = np.mean([-math.sqrt(np.mean([(humans[i][k] - o) ** 2 for o in others[i]])) for i in items])
        theirs = np.mean([-math.sqrt(np.mean([(means[i] - o) ** 2 for o in others[i]])) for i in items])
        assert (rater.rater, rater.rater_score, rater.judge_score) == (f"r{k}", pytest.approx(own), pytest.approx(theirs))
    better = sum(r.judge_score > r.rater_score for r in ceiling.raters)
    # "Better" compares two means: where an interval of the rater and the judge's overlap, the words say so.
    intervals = [(r.rater_ci95, r.judge_ci95) for r in ceiling.raters]
    overlap = any(h is None or j is None or (j[0] <= h[1] and h[0] <= j[1]) for h, j in intervals)
    assert overlap and ceiling.summary == (f"the judge agrees with your raters better than {better} of 3 of them do"
                                           " (a point comparison: see the intervals)")

    # The same rows reach the CSV tables and the text report.
    csv = "".join(csv_lines(table_rows(result, "confusion"))).splitlines()
    assert csv[0] == ",".join(TABLE_COLUMNS["confusion"]) and len(csv) == 1 + 25
    assert len("".join(csv_lines(table_rows(result, "ceiling"))).splitlines()) == 1 + 3
    report = text_report(result)
    assert "== Confusion: q / group “g” / judge" in report and ceiling.summary in report


def test_welch_rows_carry_bh_adjusted_p_and_keep_the_raw_p(researcher, tmp_path):
    study = _likert_study(researcher, "welchbh", ["q1", "q2"])
    rng = np.random.default_rng(3)
    rows = [(f"{g}{n}", g, q, "human", f"r{k}", int(rng.integers(1, 6)) if g == "b" else int(rng.integers(3, 6)))
            for g in "ab" for n in range(12) for q in ("q1", "q2") for k in range(3)]
    import_long(study, rows, tmp_path)
    welch = study_analysis(study=study, options=AnalysisOptions(n_boot=20)).welch
    raw = [w.test.p for w in welch]
    assert len(raw) == 2 and all(p is not None for p in raw)
    assert [w.p_adjusted for w in welch] == pytest.approx(sps.false_discovery_control(raw, method="bh"))


def _import_alt_test(researcher, tmp_path, dataset: str):
    folder = shared_path("data", "AltTest", "data", dataset)
    humans = json.loads((folder / "human_annotations.json").read_text())
    llms = json.loads((folder / "llm_annotations.json").read_text())
    if dataset == "mtbench":
        study = study_create_from_template(slug=dataset, template="story-pairwise", owner=researcher)
        study.scale_max = 3  # MT-Bench allows a tie
        study.save(update_fields=["scale_max"])
        code = PAIRWISE_CODES.__getitem__

        def split(instance: str) -> tuple[str, str]:
            return instance, "overall"
    else:
        study = _likert_study(researcher, dataset, ["coherence", "consistency", "fluency", "relevance"])
        code = float

        def split(instance: str) -> tuple[str, str]:
            item, question = instance.rsplit("__", 1)
            return item, question
    rows = [(*_item_question(split, instance), "human", annotator, code(label))
            for annotator, labels in humans.items() for instance, label in labels.items()]
    rows += [(*_item_question(split, instance), llm, "0", code(label))
             for llm, labels in llms.items() for instance, label in labels.items()]
    import_long(study, rows, tmp_path)
    return study, humans, llms, split, code


def _item_question(split, instance: str) -> tuple[str, str, str]:
    item, question = split(instance)
    return item, "all", question


@pytest.mark.parametrize("dataset", ["summeval", "mtbench"])
def test_kappa_confusion_and_ceiling_match_the_references_on_real_data(researcher, tmp_path, dataset):
    study, humans, llms, split, code = _import_alt_test(researcher, tmp_path, dataset)
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=20))
    nominal = dataset == "mtbench"
    categories = [1, 2, 3] if nominal else [1, 2, 3, 4, 5]
    by_question: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for annotator, labels in humans.items():
        for instance, label in labels.items():
            item, question = split(instance)
            by_question[question][item][annotator] = code(label)
    kappas = {(k.question, k.pool, k.against, k.rater, k.weights): k for k in result.kappa}
    confusions = {(c.question, c.pool): c for c in result.confusion}
    ceilings = {(c.question, c.pool): c for c in result.ceiling}
    checked = 0
    for question, items in by_question.items():
        names = sorted(humans)
        # Fleiss among the humans on the items every human rated (statsmodels needs a balanced table):
        balanced = [i for i, r in items.items() if len(r) == len(names)]
        if len(balanced) == len(items):
            table = [[list(items[i].values()).count(c) for c in categories] for i in items]
            fleiss = kappas[(question, "human", "raters", None, "unweighted")]
            assert fleiss.kappa == pytest.approx(fleiss_kappa(np.array(table)), abs=1e-9)
            checked += 1
        for llm, labels in llms.items():
            pool = {split(i)[0]: code(v) for i, v in labels.items() if split(i)[1] == question}
            pairs = [(_majority(list(items[i].values())), pool[i]) for i in items if i in pool]
            ref = [m for m, _ in pairs if m is not None]
            pred = [p for m, p in pairs if m is not None]
            for weights in ["unweighted"] if nominal else ["unweighted", "linear", "quadratic"]:
                expected = cohen_kappa_score(ref, pred, labels=categories,
                                             weights=None if weights == "unweighted" else weights)
                row = kappas[(question, llm, "majority", None, weights)]
                assert row.kappa == pytest.approx(expected, abs=1e-9), (question, llm, weights)
                assert row.n_tied == sum(m is None for m, _ in pairs)
            assert list(map(list, confusions[(question, llm)].counts)) == sk_confusion(ref, pred, labels=categories).tolist()
            for name in names:
                rated = [i for i in items if name in items[i] and i in pool]
                row = kappas[(question, llm, "rater", name, "unweighted")]
                expected = cohen_kappa_score([items[i][name] for i in rated], [pool[i] for i in rated])
                assert row.kappa == pytest.approx(expected, abs=1e-9), (question, llm, name)
            ceiling = ceilings[(question, llm)]
            assert ceiling.scoring == ("accuracy" if nominal else "neg_rmse")
            for rater in ceiling.raters:
                own, theirs = [], []
                for i, ratings in items.items():
                    others = [v for n, v in ratings.items() if n != rater.rater]
                    if rater.rater not in ratings or not others or i not in pool:
                        continue
                    for label, sink in ((ratings[rater.rater], own), (pool[i], theirs)):
                        if nominal:
                            sink.append(sum(label == o for o in others) / len(others))
                        else:
                            sink.append(-math.sqrt(sum((label - o) ** 2 for o in others) / len(others)))
                assert rater.n_items == len(own)
                if own:
                    assert rater.rater_score == pytest.approx(np.mean(own), abs=1e-9)
                    assert rater.judge_score == pytest.approx(np.mean(theirs), abs=1e-9)
            checked += 1
    assert checked >= len(llms)
    assert all(c.summary for c in result.ceiling)


def test_pairwise_stats_reference_kappa_z_test_matches_statsmodels():
    rng = np.random.default_rng(5)
    x = rng.integers(1, 4, 300).astype(float)
    y = np.where(rng.random(300) < 0.5, x, rng.integers(1, 4, 300)).astype(float)
    reference = cohens_kappa(sk_confusion(x, y))
    result = stats.kappa_z_test(x, y)
    assert result.z == pytest.approx(reference.z_value, rel=1e-9)
    assert result.p == pytest.approx(reference.pvalue_two_sided, rel=1e-9)
    assert stats.kappa_z_test([1.0, 1.0], [1.0, 1.0]).p is None
    assert stats.kappa_z_test([math.nan], [1.0]).reason == "no item has both labels"


def test_a_cell_with_too_many_raters_keeps_the_majority_kappa_and_says_why_the_rest_is_left_out(
        researcher, tmp_path, monkeypatch):
    from evalhub.analysis import agreement_rows

    monkeypatch.setattr(agreement_rows, "MAX_RATERS", 2)
    study = _likert_study(researcher, "crowd", ["q"])
    rows = [(f"i{n}", "g", "q", "human", f"r{k}", 1 + (n + k) % 5) for n in range(6) for k in range(3)]
    rows += [(f"i{n}", "g", "q", "judge", "0", 1 + n % 5) for n in range(6)]
    import_long(study, rows, tmp_path)
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=20))
    assert {k.against for k in result.kappa} == {"majority", "raters"}
    (ceiling,) = result.ceiling
    assert ceiling.raters == () and ceiling.summary is None
    assert ceiling.notes == ("3 raters: at most 2 are compared one by one: per-rater kappa and the ceiling "
                             "are left out",)
    assert len(result.confusion) == 1
