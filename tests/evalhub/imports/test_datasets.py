"""HANNA and JUDGE-BENCH importers: the published agreement figures come out of `analyze` on the imported study.

The data files stay in ../shared/data (never copied here): the tests skip locally without them and
fail under CI=true (tests/conftest.py: shared_path).
"""
from __future__ import annotations

import csv
import json
import sys

import pytest
from django.core.management import CommandError, call_command

from annotations.models import HumanRating, Study
from evalhub.analysis import ALL_GROUPS, AnalysisOptions, study_analysis
from evalhub.imports.datasets import DatasetError, hanna_import, judgebench_import
from llmjudge.models import LLMRating
from tests.conftest import shared_path

pytestmark = pytest.mark.django_db

# SOURCES.md: HANNA COLING notebook, pingouin ICC1 / ICC1k per criterion over all 1056 stories.
HANNA_ICC = {
    "relevance": (0.137622, 0.323755),
    "coherence": (-0.0547567, -0.184472),
    "empathy": (0.115955, 0.282378),
    "surprise": (0.0512276, 0.1394),
    "engagement": (0.180231, 0.397433),
    "complexity": (0.278044, 0.536044),
}
# SOURCES.md: JUDGE-BENCH results/regular/newsroom.json, krippendorff_alpha (ordinal).
NEWSROOM_ALPHA = {
    "informativeness": 0.2848732349364207,
    "relevance": 0.11512128779864284,
    "fluency": -0.015808123685552733,
    "coherence": 0.06497202567878013,
}


def cell(result: dict, question: str, group: str, pool: str) -> dict:
    return next(c for c in result.cells if (c.question, c.group, c.pool) == (question, group, pool))


def test_hanna_import_reproduces_the_published_icc_per_criterion(researcher):
    path = shared_path("data", "hanna-benchmark-asg", "hanna_metric_scores_llm.csv")
    study = hanna_import(path=path, slug="hanna", prompts=(), owner=researcher)
    assert study.items.count() == 1056
    assert HumanRating.objects.filter(item__study=study).count() == 19008
    assert study.contrasts[0] == ["Human", "BertGeneration"]
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=10, groups=("Human", ALL_GROUPS)))
    for criterion, (icc1, icc1k) in HANNA_ICC.items():
        pooled = cell(result, criterion, ALL_GROUPS, "human")
        assert pooled.n_items == 1056 and pooled.n_raters == 3
        assert pooled.icc1 == pytest.approx(icc1, abs=5e-7)
        assert pooled.icc1k == pytest.approx(icc1k, abs=5e-7)
    # SOURCES.md: per-system means of the 3 raters, Human row: 4.17 4.43 3.22 3.15 3.88 3.73.
    means = [cell(result, c, "Human", "human").mean for c in HANNA_ICC]
    assert [round(m, 2) for m in means] == [4.17, 4.43, 3.22, 3.15, 3.88, 3.73]


def test_hanna_llm_pools_hold_the_published_means_and_count_out_of_scale_values_as_unparseable(tmp_path):
    # A two-system file in HANNA's layout, written here (the real file is not copied into tests).
    criteria = ["RE", "CH", "EM", "SU", "EG", "CX"]
    header = ["Model"] + [f"Human {k} {c}" for k in (1, 2, 3) for c in criteria]
    llms = ["Beluga-13B", "OrcaPlatypus", "Mistral-7B", "Llama-13B", "ChatGPT"]
    header += [f"{m} {c} {p}" for m in llms for p in (1, 2, 3, 4) for c in criteria]
    path = tmp_path / "hanna.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for system, base in (("Human", 4), ("GPT-2", 2)):
            row = [system]
            for column in header[1:]:
                if column.startswith("Human"):
                    row.append(json.dumps([base, base - 1, base + 1]))
                elif column == "Mistral-7B RE 1":
                    row.append(json.dumps([0.3333333333333333, 2.6666666666666665, 5.0]))
                else:
                    row.append(json.dumps([base + 1 / 3, base, base - 1 / 3]))
            writer.writerow(row)
    study = hanna_import(path=path, slug="mini-hanna", prompts=(1,))
    assert study.judge_runs.count() == 5
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=10))
    pool = next(p for p in result.pools if p.name == "Mistral-7B p1")
    assert pool.status_counts == {"ok": 2 * 3 * 6 - 2, "unparseable": 2}
    assert LLMRating.objects.filter(run__study=study, status="unparseable").first().raw.startswith("published mean")
    assert cell(result, "relevance", "Human", "Mistral-7B p1").mean == pytest.approx((2 + 2 / 3 + 5) / 2)
    assert cell(result, "coherence", "GPT-2", "Beluga-13B p1").mean == pytest.approx(2.0)
    assert cell(result, "coherence", "GPT-2", "Beluga-13B p1").notes["alpha.ordinal"] == (
        "only one rater: agreement needs at least two (no item has 2 or more ratings)")


def test_judgebench_import_reproduces_the_published_newsroom_alpha(researcher):
    path = shared_path("data", "JUDGE-BENCH", "data", "newsroom", "newsroom.json")
    study = judgebench_import(path=path, owner=researcher)
    assert study.slug == "newsroom"
    assert study.items.count() == 420
    assert list(study.questions.values_list("key", flat=True)) == list(NEWSROOM_ALPHA)
    result = study_analysis(study=study, options=AnalysisOptions(n_boot=10))
    for metric, published in NEWSROOM_ALPHA.items():
        assert cell(result, metric, "newsroom", "human").alpha["ordinal"] == pytest.approx(published, abs=1e-12)


def test_judgebench_refuses_a_file_with_only_categorical_labels(tmp_path):
    path = tmp_path / "dices.json"
    path.write_text(json.dumps({"dataset": "dices", "annotations": [{"metric": "safety", "category": "categorical"}],
                                "instances": []}))
    with pytest.raises(DatasetError, match="no graded metric"):
        judgebench_import(path=path)
    assert not Study.objects.exists()


def test_judgebench_reads_annotations_stored_as_python_literals(tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps({
        "dataset": "Mini Set",
        "annotations": [{"metric": "Fluency", "category": "graded", "worst": 1, "best": 6, "prompt": "Fluent?"}],
        "instances": [{"id": 1, "annotations": "{'Fluency': {'individual_human_scores': [1, 2, 6]}}"},
                      {"id": 2, "annotations": {"Fluency": {"individual_human_scores": [3, 3]}}}],
    }))
    study = judgebench_import(path=path)
    assert (study.slug, study.scale_min, study.scale_max) == ("mini-set", 1, 6)
    assert sorted(HumanRating.objects.filter(item__study=study).values_list("rater__external_id", "score")) == [
        ("position-1", 1.0), ("position-1", 3.0), ("position-2", 2.0), ("position-2", 3.0), ("position-3", 6.0)]


def test_import_commands_print_a_clear_error_and_change_nothing(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("Model,Relevance\nHuman,[1]\n")
    with pytest.raises(CommandError, match="not a HANNA score file"):
        call_command("import_hanna", str(bad), stdout=sys.stdout)
    with pytest.raises(CommandError, match="--prompts"):
        call_command("import_hanna", str(bad), "--prompts", "x")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("import_judgebench", str(bad))
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_judgebench", str(tmp_path / "missing.json"))
    assert not Study.objects.exists()
