"""Pool labels: every LLM pool named by its judge and the run parameters that differ in the study, in the
dashboard, the text report, the JSON pools and the tables CSV (Chiang & Lee's table 3 reads straight off)."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from annotations.models import Item
from evalhub.analysis import HUMAN, AnalysisOptions, pool_labels, study_analysis
from evalhub.analysis.result import WelchRow
from evalhub.analysis.text_report import text_report, welch_sentence
from evalhub.imports.exports import csv_lines, table_rows
from evalhub.pages.dashboard import FilterForm
from evalhub.stats import WelchResult
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

GRID_LABELS = {
    (0.7, "original"): "gpt-4 · T=0.7 · variant original",
    (0.7, "explain"): "gpt-4 · T=0.7 · variant explain",
    (1.0, "original"): "gpt-4 · T=1 · variant original",
    (1.0, "explain"): "gpt-4 · T=1 · variant explain",
}


@pytest.fixture
def grid_study(story_study, researcher):
    """One judge at two temperatures and two instruction variants, every run done with the fake backend."""
    for i in range(4):
        for group in ("human", "gpt2"):
            Item.objects.create(study=story_study, external_id=f"{group}-{i}", group=group, position=i,
                                fields={"story": f"Story {group} {i}. It ends.", "prompt": f"Prompt {i}."})
    judge = Judge.objects.create(name="gpt-4", backend=Judge.Backend.FAKE, model="fake-model", samples=2,
                                 owner=researcher)
    experiment = judging.experiment_launch(study=story_study, judges=[judge], temperatures=[0.7, 1.0],
                                           variants=["original", "explain"])
    for run in experiment.runs.all():
        judging.judge_run_execute_inline(run=run)
    assert set(JudgeRun.objects.filter(study=story_study).values_list("status", flat=True)) == {"done"}
    return story_study


def _llm_pools(result):
    return [p for p in result.pools if p.kind == "llm"]


def test_a_grid_of_two_temperatures_and_two_variants_reads_as_four_labelled_pools(grid_study):
    result = study_analysis(study=grid_study, options=AnalysisOptions(n_boot=20))

    pools = _llm_pools(result)
    assert len(pools) == 4 and len({p.name for p in pools}) == 4  # the key still keeps runs apart
    assert {p.name for p in pools} == {f"gpt-4#{p.run_id}" for p in pools}
    for p in pools:
        assert p.label == GRID_LABELS[(p.temperature, p.variant)]
        assert (p.model, p.top_p, p.judge_kind) == ("fake-model", 0.9, "plain")
    assert {p.label for p in pools} == set(GRID_LABELS.values())
    human = next(p for p in result.pools if p.kind == "human")
    assert human.label == "Human raters" and human.temperature is None


def test_the_labels_appear_in_the_text_report_the_csv_the_json_and_the_dashboard(grid_study, client, researcher):
    result = study_analysis(study=grid_study, options=AnalysisOptions(n_boot=20))
    by_key = {p.name: p.label for p in _llm_pools(result)}

    report = text_report(result)
    for label in GRID_LABELS.values():
        assert "Pools: " in report and label in report.split("Pools: ")[1].split("\n")[0]
        lines = report.split("== Per-rater means")[0].splitlines()  # table 12 names the pool on each rater's line
        assert sum(line.startswith(f"{label}  ") for line in lines) == 4  # table 1 of each question
        # Welch: a sentence per question, tested or withheld on too few items (issue 25's third review)
        assert sum(line.startswith((f"{label} prefers", f"{label} shows", f"{label}: the groups"))
                   for line in lines) == 4
    welch_header = report.split("== Welch's t-test")[1].splitlines()[1].split()
    assert welch_header == ["question", "pool", "groups", "t", "df", "p", "(raw)", "p", "(BH)", "Cohen's", "d", "n",
                            "(items)"]
    assert "gpt-4#" not in report  # the keys stay in the JSON and the CSV's pool column

    rows = list(csv.DictReader(io.StringIO("".join(csv_lines(table_rows(result))))))
    llm_rows = [r for r in rows if r["pool"] in by_key]
    assert {r["table"] for r in llm_rows} >= {"cells", "kendall", "welch", "pairwise_kendall", "rater_means"}
    assert all(r["pool_label"] == by_key[r["pool"]] for r in llm_rows)
    assert {r["pool_label"] for r in rows if r["pool"] == "human"} == {"Human raters"}

    client.force_login(researcher)
    body = json.loads(client.get(f"/studies/{grid_study.slug}/analysis.json").content)
    assert {p["label"]: (p["temperature"], p["variant"]) for p in body["pools"] if p["kind"] == "llm"} == {
        label: key for key, label in GRID_LABELS.items()}
    run_filter = FilterForm({}, study=grid_study).fields["run"].choices
    assert {label for _, label in run_filter} == set(GRID_LABELS.values())
    html = client.get(f"/studies/{grid_study.slug}/").content.decode()
    for label in GRID_LABELS.values():
        assert f"{label}</td>" in html  # a row header of the tables
        assert any(f"{label}{words}" in html for words in (" prefers", " shows no significant preference",
                                                            ": the groups"))  # tested, or withheld


def test_labels_name_only_what_differs_and_never_read_alike(story_study, researcher):
    def judge(name, **fields):
        return Judge.objects.create(name=name, backend=Judge.Backend.FAKE, owner=researcher, **fields)

    a, b = judge("a", model="m-1"), judge("b", model="m-2", kind="rubric")
    runs = [JudgeRun.objects.create(study=story_study, judge=j, params={
        "model": j.model, "temperature": 1.0, "top_p": 0.9, "variant": "original", "kind": j.kind}) for j in (a, a, b)]
    imported = JudgeRun.objects.create(study=story_study, judge=judge("import", model="m-1"),
                                       params={"source": "import"})

    labels = pool_labels(story_study)

    # Temperature, top_p and variant are the same where known: not named. An imported run records no sampling.
    assert labels[runs[0].pk][0] == f"a · model m-1 · kind plain · run {runs[0].pk}"
    assert labels[runs[1].pk][0] == f"a · model m-1 · kind plain · run {runs[1].pk}"
    assert labels[runs[2].pk][0] == "b · model m-2 · kind rubric"
    assert labels[imported.pk] == ("import · model m-1 · kind plain",
                                   {"model": "m-1", "temperature": None, "top_p": None, "variant": None,
                                    "kind": "plain"})


def test_every_welch_sentence_gives_cohens_d():
    test = WelchResult(t=0.9, df=10.0, p=0.4, mean_diff=0.1, cohens_d=-0.25, n_a=6, n_b=6, unit="item means")
    row = WelchRow(pool="gpt-4#3", group_a="human", group_b="gpt2", question="coherence", mean_a=3.0, mean_b=2.9,
                   test=test, notes={}, p_adjusted=None, p_family=0)
    # d with the table's sign (group_a - group_b) and the SD it divides by; groups quoted (issue 25 review).
    assert welch_sentence(row, {"gpt-4#3": "gpt-4 · T=0.7"}) == (
        "gpt-4 · T=0.7 shows no significant preference between the groups “human” and “gpt2” on coherence "
        "(3.00 vs 2.90, p = 0.400, d = -0.25, “human” − “gpt2” over the pooled SD of the item means; n = 6 “human” and "
        "6 “gpt2” items).")
    significant = replace(row, test=replace(test, p=0.001, cohens_d=1.5))
    assert welch_sentence(significant).endswith(
        "(3.00 vs 2.90, p = 0.001, d = 1.50, “human” − “gpt2” over the pooled SD of the item means; n = 6 “human” and "
        "6 “gpt2” items).")
    # The adjusted p, when there is one, is the one quoted and judged.
    assert welch_sentence(replace(row, test=replace(test, p=0.001), p_adjusted=0.2)).endswith(
        "no significant preference between the groups “human” and “gpt2” on coherence (3.00 vs 2.90, "
        "BH-adjusted p = 0.200, d = -0.25, “human” − “gpt2” over the pooled SD of the item means; n = 6 “human” and 6 "
        "“gpt2” items).")


def test_a_welch_sentence_quotes_the_groups_shows_ds_sign_and_warns_on_all_ratings():
    # Issue 25 review: "Human raters prefer human over gpt2 ... d = 0.79" beside a table with d = -0.79, and on all
    # ratings p < 0.001 where item means gave 0.095, without a word.
    test = WelchResult(t=-5.0, df=16.0, p=0.0001, mean_diff=-0.67, cohens_d=-0.79, n_a=9, n_b=9, unit="ratings")
    row = WelchRow(pool=HUMAN, group_a="human", group_b="gpt2", question="grammaticality", mean_a=3.11,
                   mean_b=3.78, test=test, notes={}, p_adjusted=0.0004, p_family=8)
    assert welch_sentence(row) == (
        "Human raters prefer the group “gpt2” over “human” on grammaticality (3.78 vs 3.11, BH-adjusted p < 0.001, "
        "d = -0.79, “human” − “gpt2” over the pooled SD of the individual ratings; n = 9 “human” and 9 “gpt2” ratings; "
        "all individual ratings, treated "
        "as independent though ratings of one item or one rater are not: this p is optimistic).")
    on_items = replace(row, test=replace(test, unit="item means"))
    assert "optimistic" not in welch_sentence(on_items) and "pooled SD of the item means" in welch_sentence(on_items)


def test_a_non_significant_sentence_quotes_the_means_in_the_order_it_names_the_groups():
    # Issue 25 review: "no significant preference between human and gpt2 (4.00 vs 2.00)" where human was 2.00.
    test = WelchResult(t=-1.2, df=4.0, p=0.3, mean_diff=-2.0, cohens_d=-1.0, n_a=3, n_b=3, unit="item means")
    row = WelchRow(pool=HUMAN, group_a="human", group_b="gpt2", question="coherence", mean_a=2.0, mean_b=4.0,
                   test=test, notes={}, p_adjusted=None, p_family=0)
    assert "between the groups “human” and “gpt2” on coherence (2.00 vs 4.00," in welch_sentence(row)
