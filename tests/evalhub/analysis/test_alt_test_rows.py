"""The alternative annotator test in the analysis: rows, (all) rows, notes, overrides, CSV, text, the epsilon form."""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotations.models import Study
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.text_report import text_report
from evalhub.imports.exports import TABLE_COLUMNS, table_rows
from evalhub.stats.alt_test import alt_test
from tests.evalhub.factories import import_long

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

QUESTIONS = ("relevance", "likability")
GROUPS = ("human", "gpt2")
N_ITEMS = 36  # per group: every full-time rater has 36 instances per question and group, the test needs 30
ROW_KEYS = {"question", "group", "pool", "scoring", "epsilon", "q_fdr", "n_instances", "winning_rate",
            "advantage_probability", "passed", "humans", "notes"}


def simulated(seed: int = 7) -> list[tuple]:
    """Four raters rate everything, "late" rates 12 items; the judge's three samples are close to the truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for question in QUESTIONS:
        for group in GROUPS:
            truth = rng.integers(1, 6, size=N_ITEMS)
            for i in range(N_ITEMS):
                item = f"{group}-{i}"
                for r in range(4):
                    rows.append((item, group, question, "human", f"teacher-{r + 1}",
                                 int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5))))
                if i < 12:
                    rows.append((item, group, question, "human", "late", int(truth[i])))
                for s in range(3):
                    rows.append((item, group, question, "judge", str(s),
                                 int(np.clip(truth[i] + rng.integers(-1, 2) * (s == 0), 1, 5))))
    return rows


@pytest.fixture
def rated(story_study, tmp_path):
    rows = simulated()
    import_long(story_study, rows, tmp_path)
    return story_study, rows


def expected(rows: list[tuple], questions: tuple[str, ...], group: str, **kwargs):
    """The stats module on annotator-keyed mappings built from the imported rows: (item, question) instances."""
    humans: dict[str, dict] = {}
    llm: dict[tuple, list[float]] = {}
    for item, g, question, pool, rater, score in rows:
        if g != group or question not in questions:
            continue
        if pool == "human":
            humans.setdefault(rater, {})[(item, question)] = float(score)
        else:
            llm.setdefault((item, question), []).append(float(score))
    return alt_test(humans, llm, **kwargs)


def analyse(study: Study, **options) -> dict:
    return study_analysis(study=study, options=AnalysisOptions(n_boot=10, **options))


def test_rows_per_question_group_and_pool_then_all_questions_with_the_documented_fields(rated):
    study, _ = rated
    result = analyse(study)

    rows = result.alt_test
    keys = [(r.question, r.group, r.pool) for r in rows]
    study_questions = [q.key for q in study.questions.order_by("order", "id")]
    assert keys == [(q, g, "judge") for q in [*study_questions, "(all)"] for g in study.groups]
    for row in rows:
        assert row.test.scoring == "neg_rmse" and row.test.epsilon == 0.15 and row.test.q_fdr == 0.05
    for row in result.to_json()["alt_test"]:
        assert set(row) == ROW_KEYS
        for human in row["humans"]:
            assert set(human) == {"rater", "n", "p", "rejected", "advantage"}
    assert result.to_json()["settings"]["alt_test"] == {"epsilon": 0.15, "scoring": "neg_rmse", "q_fdr": 0.05,
                                                        "sample_rule": "mean"}
    json.dumps(result.to_json(), allow_nan=False)  # strict JSON


@pytest.mark.parametrize("question", ["relevance", "(all)"])
def test_a_rows_numbers_are_the_stats_modules_on_the_same_ratings(rated, question):
    study, rows = rated
    result = analyse(study)
    row = next(r for r in result.alt_test if r.question == question and r.group == "human")

    want = expected(rows, QUESTIONS if question == "(all)" else (question,), "human", scoring="neg_rmse",
                    epsilon=0.15)
    assert row.test.n_instances == want.n_instances == (2 if question == "(all)" else 1) * N_ITEMS
    assert row.test.winning_rate == pytest.approx(want.winning_rate)
    assert row.test.advantage_probability == pytest.approx(want.advantage_probability)
    assert row.test.passed == want.passed
    assert [(h.rater, h.n, h.rejected) for h in row.test.humans] == [
        (h.rater, h.n, h.rejected) for h in want.humans]
    assert [h.p for h in row.test.humans] == pytest.approx([h.p for h in want.humans])
    assert [h.advantage for h in row.test.humans] == pytest.approx([h.advantage for h in want.humans])
    assert row.test.notes == want.notes
    assert {h.rater for h in row.test.humans} == {f"teacher-{r}" for r in range(1, 5)}
    late = 24 if question == "(all)" else 12
    assert f"late gave {late} usable ratings; the test needs 30: skipped" in row.test.notes


def test_a_question_without_ratings_says_the_test_cannot_run_and_gives_no_verdict(rated):
    study, _ = rated
    row = next(r for r in analyse(study).alt_test if r.question == "grammaticality")

    assert row.test.passed is None and row.test.winning_rate is None and row.test.advantage_probability is None
    assert row.test.n_instances == 0 and row.test.humans == ()
    assert any("the test cannot run" in note for note in row.test.notes)


def test_fewer_than_three_humans_with_thirty_instances_give_notes_not_a_verdict(story_study, tmp_path):
    rows = [(f"human-{i}", "human", "relevance", "human", f"r{r}", 1 + (i + r) % 5)
            for i in range(40) for r in range(2)]
    rows += [(f"human-{i}", "human", "relevance", "human", "r9", 1 + i % 5) for i in range(12)]
    rows += [(f"human-{i}", "human", "relevance", "gpt-4o", "0", 1 + i % 5) for i in range(40)]
    import_long(story_study, rows, tmp_path)

    (row,) = [r for r in analyse(story_study).alt_test if r.question == "relevance"]
    assert row.test.passed is None and row.test.winning_rate is None
    assert [h.rater for h in row.test.humans] == ["r0", "r1"]  # their per-human rows are still given
    assert "r9 gave 12 usable ratings; the test needs 30: skipped" in row.test.notes
    assert any(n.startswith("no verdict: the test needs at least 3 humans") for n in row.test.notes)


def test_a_study_without_llm_pools_has_no_rows(story_study, tmp_path):
    import_long(story_study, [("h-1", "human", "relevance", "human", "r1", 3)], tmp_path)
    assert analyse(story_study).alt_test == ()


def test_the_studys_epsilon_is_used_and_the_option_overrides_it(rated):
    study, rows = rated
    Study.objects.filter(pk=study.pk).update(alt_epsilon=0.3)
    study.refresh_from_db()
    assert {r.test.epsilon for r in analyse(study).alt_test} == {0.3}

    result = analyse(study, alt_epsilon=0.05)
    assert {r.test.epsilon for r in result.alt_test} == {0.05}
    row = next(r for r in result.alt_test if r.question == "relevance" and r.group == "gpt2")
    want = expected(rows, ("relevance",), "gpt2", scoring="neg_rmse", epsilon=0.05)
    assert [h.p for h in row.test.humans] == pytest.approx([h.p for h in want.humans])


def test_the_scoring_is_accuracy_when_overridden_with_the_samples_majority(rated):
    study, rows = rated
    row = next(r for r in analyse(study, alt_scoring="accuracy").alt_test
               if r.question == "likability" and r.group == "human")
    want = expected(rows, ("likability",), "human", scoring="accuracy", epsilon=0.15)
    assert row.test.scoring == "accuracy"
    assert row.test.advantage_probability == pytest.approx(want.advantage_probability)
    assert row.test.winning_rate == pytest.approx(want.winning_rate)


def test_a_pairwise_study_is_scored_by_accuracy(researcher, tmp_path):
    from annotations.studies import study_create_from_template

    study = study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher)
    result = analyse(study)
    assert result.settings.alt_test.scoring == "accuracy"
    assert result.settings.alt_test.sample_rule == "majority"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_analyze_overrides_epsilon_and_scoring_on_the_command_line(rated):
    result = json.loads(run("analyze", "story", "--format", "json", "--n-boot", "10", "--alt-epsilon", "0.2",
                            "--alt-scoring", "accuracy"))
    assert {(r["epsilon"], r["scoring"]) for r in result["alt_test"]} == {(0.2, "accuracy")}


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.1", "nan", "inf"])
def test_analyze_refuses_an_epsilon_outside_zero_to_one(rated, value):
    with pytest.raises(CommandError, match="--alt-epsilon must be strictly between 0 and 1"):
        run("analyze", "story", "--format", "json", "--alt-epsilon", value)


def test_analyze_refuses_an_unknown_scoring(rated):
    with pytest.raises(CommandError, match="invalid choice: 'kappa'"):
        run("analyze", "story", "--format", "json", "--alt-scoring", "kappa")


def test_the_csv_table_has_one_line_per_row_and_human_tested(rated):
    study, _ = rated
    result = analyse(study)
    lines = list(csv.DictReader(io.StringIO(run("export", "story", "--what", "tables", "--table", "alt_test",
                                                "--n-boot", "10"))))
    assert tuple(lines[0]) == TABLE_COLUMNS["alt_test"]
    assert len(lines) == sum(max(1, len(r.test.humans)) for r in result.alt_test)
    first = next(r for r in result.alt_test if r.test.humans)
    mine = [line for line in lines if (line["question"], line["group"]) == (first.question, first.group)]
    assert [line["rater"] for line in mine] == [h.rater for h in first.test.humans]
    assert [float(line["rater_advantage"]) for line in mine] == pytest.approx([h.advantage for h in first.test.humans])
    assert all(line["notes"] == "; ".join(first.test.notes) for line in mine)
    empty = [line for line in lines if line["question"] == "grammaticality"]
    assert empty and all(line["rater"] == "" and line["passed"] == "" and "cannot run" in line["notes"]
                         for line in empty)
    header = next(iter(table_rows(result)))
    assert {"rater_p", "rater_rejected", "winning_rate"} <= set(header)


def test_the_text_report_has_the_alt_test_section(rated):
    study, _ = rated
    report = text_report(analyse(study))
    assert "== Alternative annotator test" in report and "epsilon 0.15" in report
    assert "teacher-1" in report and "late gave 12 usable ratings" in report


# --- the epsilon form ------------------------------------------------------------------------------


def epsilon_url(study: Study) -> str:
    return f"/studies/{study.slug}/alt-epsilon/"


def test_the_owner_sets_the_epsilon_and_the_dashboard_analyses_with_it(client, rated, researcher):
    study, _ = rated
    client.force_login(researcher)
    assert client.get(f"/studies/{study.slug}/").context["verdict"].analysed_epsilon == 0.15

    response = client.post(epsilon_url(study), {"epsilon": "0.2"})
    assert response.status_code == 302 and response["Location"] == f"/studies/{study.slug}/#verdict"
    study.refresh_from_db()
    assert study.alt_epsilon == 0.2
    page = client.get(f"/studies/{study.slug}/")
    assert page.context["verdict"].analysed_epsilon == 0.2  # the cached analysis is not reused
    assert 'id="epsilon-form"' in page.content.decode()


@pytest.mark.parametrize("value", ["0", "1", "-0.5", "abc", "nan", ""])
def test_the_epsilon_form_refuses_bad_values_and_changes_nothing(client, rated, researcher, value):
    study, _ = rated
    client.force_login(researcher)
    response = client.post(epsilon_url(study), {"epsilon": value})
    assert response.status_code == 400
    study.refresh_from_db()
    assert study.alt_epsilon == 0.15


def test_another_researcher_cannot_set_the_epsilon_nor_learn_the_study_exists(client, rated, other_researcher):
    study, _ = rated
    client.force_login(other_researcher)
    assert client.post(epsilon_url(study), {"epsilon": "0.2"}).status_code == 404
    study.refresh_from_db()
    assert study.alt_epsilon == 0.15


def test_a_read_only_viewer_sees_the_verdict_but_cannot_set_the_epsilon(client, rated, django_user_model):
    from django.contrib.auth.models import Permission

    study, _ = rated
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    client.force_login(viewer)
    page = client.get(f"/studies/{study.slug}/")
    assert page.status_code == 200 and 'id="verdict"' in page.content.decode()
    assert 'id="epsilon-form"' not in page.content.decode()
    assert client.post(epsilon_url(study), {"epsilon": "0.2"}).status_code == 404
    study.refresh_from_db()
    assert study.alt_epsilon == 0.15


def test_anonymous_users_are_sent_to_log_in_and_a_get_is_not_allowed(client, rated, researcher):
    study, _ = rated
    assert client.post(epsilon_url(study), {"epsilon": "0.2"}).status_code == 302
    client.force_login(researcher)
    assert client.get(epsilon_url(study)).status_code == 405
    study.refresh_from_db()
    assert study.alt_epsilon == 0.15


def test_the_database_refuses_an_epsilon_outside_zero_to_one(rated):
    from django.db import IntegrityError, transaction

    study, _ = rated
    for value in (0.0, 1.0, 2.0):
        with pytest.raises(IntegrityError), transaction.atomic():
            Study.objects.filter(pk=study.pk).update(alt_epsilon=value)


def test_the_dashboard_opens_with_one_verdict_card_per_pool_and_the_per_human_table(client, rated, researcher):
    study, _ = rated
    client.force_login(researcher)
    page = client.get(f"/studies/{study.slug}/")
    html = page.content.decode()
    cards = page.context["verdict"].cards
    assert [c.pool for c in cards] == ["judge"]
    # Two groups and no (all) group asked for: one headline per group, over all questions.
    assert [h.row.question for h in cards[0].headlines] == ["(all)", "(all)"]
    assert html.index('id="verdict"') < html.index('id="table1"')
    assert "<details>" in html and "teacher-1" in html
    for headline in cards[0].headlines:
        row = headline.row
        beaten = sum(h.rejected for h in row.test.humans)
        assert f"it beat {beaten} of 4 raters" in headline.text
        assert f"ρ = {row.test.advantage_probability:.2f}, ε = 0.15" in headline.text
        assert not math.isnan(row.test.advantage_probability)
