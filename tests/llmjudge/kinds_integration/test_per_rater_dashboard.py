"""Per-rater judges on the dashboard: launched from the run form, scored against each rater.

The HANNA test imports ../shared/data (skipped locally when absent, a failure under CI=true).
"""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from llmjudge.models import Judge, JudgeRun
from tests.conftest import shared_path
from tests.llmjudge.conftest import work_off
from tests.llmjudge.factories import openai_judge
from tests.llmjudge.kinds_integration.test_kinds_end_to_end import scripted_answer
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)


def _server_judge(server, name: str, kind: str, options: dict | None = None, samples: int = 1) -> Judge:
    server.behaviour = Behaviour(answer=scripted_answer)
    return openai_judge(server, name, kind, options, samples=samples)


def _launch(owner_client, slug: str, judge: Judge, sent, capture, **fields) -> JudgeRun:
    with capture(execute=True):
        response = owner_client.post(reverse("llmjudge:run_start", args=[slug]), {"judge": judge.pk, **fields})
    run = JudgeRun.objects.filter(judge=judge).latest("id")
    assert response.status_code == 302 and response["Location"] == reverse("llmjudge:run_detail", args=[run.pk])
    work_off(sent)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def test_per_rater_metrics_appear_on_the_dashboard_next_to_the_plain_judge(
    owner_client, rated_study, openai_server, sent, django_capture_on_commit_callbacks
):
    plain = _server_judge(openai_server, "plain", "plain")
    perse = _server_judge(openai_server, "perse", "personalized")
    _launch(owner_client, "story", plain, sent, django_capture_on_commit_callbacks)
    run = _launch(owner_client, "story", perse, sent, django_capture_on_commit_callbacks,
                  profile_size=2, split_seed=1)
    assert run.params["options"]["profile_size"] == 2

    data = owner_client.get(reverse("study_analysis_json", args=["story"])).json()
    pool = next(p for p in data["pools"] if p["run_id"] == run.pk)
    assert pool["n_raters"] == 2  # the pool's raters are the humans it predicts
    entries = [e for e in data["personal"] if e["run"] == run.pk]
    assert {e["question"] for e in entries} == {"grammaticality", "cohesiveness", "likability", "relevance"}
    entry = entries[0]
    assert {r["rater"] for r in entry["raters"]} == {"ann", "bob"}
    assert entry["average"]["n_raters"] == 2
    for row in entry["raters"]:
        assert row["n"] == 1 and row["mae"] is not None and row["accuracy"] in (0.0, 1.0)
        assert row["kendall"] is None and row["reasons"]["kendall"]  # one held-out item: undefined, said why
    assert entry["baseline"]["judge"] == "plain"
    page = owner_client.get(reverse("study_dashboard", args=["story"]))
    assert b'id="per-rater"' in page.content and b"perse" in page.content and b"plain accuracy" in page.content


def test_a_too_large_profile_from_the_form_is_refused_naming_the_rater(
    owner_client, rated_study, openai_server, sent, django_capture_on_commit_callbacks
):
    perse = _server_judge(openai_server, "perse", "personalized")
    response = owner_client.post(reverse("llmjudge:run_start", args=["story"]), {"judge": perse.pk, "profile_size": 5},
                                 follow=True)
    assert not JudgeRun.objects.exists()
    assert b"rater ann" in response.content and b"k=5" in response.content


def test_hanna_personalized_and_persona_runs_launch_from_the_browser_and_show_per_rater_metrics(
    owner_client, researcher, openai_server, sent, django_capture_on_commit_callbacks, tmp_path
):
    from evalhub.imports.datasets import hanna_import

    path = shared_path("data", "hanna-benchmark-asg", "hanna_metric_scores_llm.csv")
    study = hanna_import(path=path, slug="hanna", prompts=(), owner=researcher)
    # HANNA has no demographics: the persona judge refuses it, naming the raters ...
    persona = _server_judge(openai_server, "cinemetric", "persona")
    response = owner_client.post(reverse("llmjudge:run_start", args=[study.slug]), {"judge": persona.pk}, follow=True)
    assert b"needs demographics of every rater" in response.content and not JudgeRun.objects.exists()
    # ... until an imported demographics file gives them some (synthetic values, written here).
    names = list(study.raters.order_by("id").values_list("external_id", flat=True))
    demographics = tmp_path / "hanna-demographics.csv"
    demographics.write_text("rater,education,age\n" + "".join(
        f"{name},graduate,{25 + 10 * n}\n" for n, name in enumerate(names)), encoding="utf-8")
    call_command("import_demographics", study.slug, str(demographics))
    assert [r.demographics for r in study.raters.order_by("id")] == [
        {"age": str(25 + 10 * n), "education": "graduate"} for n in range(len(names))]
    perse = _server_judge(openai_server, "perse", "personalized")
    p_run = _launch(owner_client, study.slug, perse, sent, django_capture_on_commit_callbacks,
                    profile_size=3, held_out=4)
    c_run = _launch(owner_client, study.slug, persona, sent, django_capture_on_commit_callbacks,
                    training_examples=3, held_out=2, method="cinemetric")
    n_raters = study.raters.count()
    n_questions = study.questions.count()
    assert p_run.ratings.count() == n_raters * 4 * n_questions
    assert c_run.ratings.count() == n_raters * 2 * n_questions * 3
    assert c_run.calls.filter(step="propose").count() == n_raters * n_questions
    first = study.raters.order_by("id").first()
    proposal = c_run.calls.filter(step="propose", key__startswith=f"{first.pk}:").first()
    # The imported demographics reach the judge, fields sorted (the same prompt on SQLite and PostgreSQL).
    assert "- age: 25\n- education: graduate" in proposal.prompt

    data = owner_client.get(reverse("study_analysis_json", args=[study.slug])).json()
    for run in (p_run, c_run):
        entries = [e for e in data["personal"] if e["run"] == run.pk]
        assert len(entries) == n_questions
        assert all(e["average"]["n_raters"] == n_raters for e in entries)
        assert next(p for p in data["pools"] if p["run_id"] == run.pk)["n_raters"] == n_raters
    page = owner_client.get(reverse("study_dashboard", args=[study.slug]))
    assert page.status_code == 200 and b'id="per-rater"' in page.content and b"cinemetric" in page.content


def seed_holding_out(study, group: str, k: int) -> int:
    """A split seed under which some rater's held-out items include one of ``group``.

    The split is seeded by rater and item ids, which differ between databases and test orders; the
    filter tests need a split whose held-out items span both groups.
    """
    from llmjudge.kinds.personalized.prompts import split_profile

    items = list(study.items.values_list("id", flat=True))
    wanted = set(study.items.filter(group=group).values_list("id", flat=True))
    ratings = {r: items for r in study.raters.values_list("id", flat=True)}
    return next(seed for seed in range(100)
                if any(wanted & set(h) for h in split_profile(ratings, k=k, seed=seed).held_out.values()))


def test_the_per_rater_section_follows_the_dashboard_filters(
    owner_client, rated_study, openai_server, sent, django_capture_on_commit_callbacks
):
    plain = _server_judge(openai_server, "plain", "plain")
    perse = _server_judge(openai_server, "perse", "personalized")
    plain_run = _launch(owner_client, "story", plain, sent, django_capture_on_commit_callbacks)
    run = _launch(owner_client, "story", perse, sent, django_capture_on_commit_callbacks, profile_size=1,
                  split_seed=seed_holding_out(rated_study, "gpt2", k=1))
    held_out = {int(r): parts["held_out"] for r, parts in run.params["split"].items()}
    assert all(len(items) == 2 for items in held_out.values())  # 3 items, k=1
    human_items = set(rated_study.items.filter(group="human").values_list("id", flat=True))
    names = dict(rated_study.raters.values_list("id", "external_id"))
    url = reverse("study_analysis_json", args=["story"])

    data = owner_client.get(url, {"question": "relevance", "group": "human"}).json()
    [entry] = [e for e in data["personal"] if e["run"] == run.pk]
    assert entry["question"] == "relevance" and entry["baseline"]["run"] == plain_run.pk
    assert {r["rater"]: r["n"] for r in entry["raters"]} == {
        names[rater]: len(set(items) & human_items) for rater, items in held_out.items() if set(items) & human_items}
    assert entry["average"]["n_items"] < sum(len(items) for items in held_out.values())

    # Only the per-rater run selected: shown without a baseline (the plain run is filtered out).
    data = owner_client.get(url, {"run": [run.pk]}).json()
    assert {e["run"] for e in data["personal"]} == {run.pk} and all(e["baseline"] is None for e in data["personal"])
    data = owner_client.get(url, {"run": [plain_run.pk]}).json()
    assert data["personal"] == []

    page = owner_client.get(reverse("study_dashboard", args=["story"]), {"question": "likability"}).content.decode()
    assert "· likability</span></h3>" in page and "· relevance</span></h3>" not in page
