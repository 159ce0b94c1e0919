"""Issue 6 in headless Chromium: on HANNA, a researcher logs in, launches a personalized and a persona run
from the run form, watches both finish and reads each rater's metrics on the dashboard.

The HANNA file comes from ../shared/data (skipped locally when absent, a failure under CI=true). Raters'
demographics are synthetic, written by the test and imported with ``import_demographics``. The judges
call the OpenAI-protocol test server on localhost. Chunks run in worker threads on PostgreSQL (the
run page polls the progress while they work) and inline in the live server's thread on SQLite (one
writer at a time); either way the test waits in the browser for status done at 100 %.
"""
from __future__ import annotations

import itertools
import re
from collections import defaultdict

import pytest
from django.core.management import call_command
from django.db import connection

from tests.conftest import shared_path
from tests.llmjudge.kinds_integration.test_kinds_end_to_end import scripted_answer
from tests.support.browser import log_in
from tests.support.openai_server import Behaviour

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SLUG = "hanna"
PASSWORD = "pw-owner-123"  # the researcher fixture's
_CALLS = itertools.count()


def _varied_answer(prompt: str, body: dict) -> str:
    """The scripted answers, except that the personalized judge's score changes from call to call, so
    Kendall's tau is defined wherever a rater's held-out scores vary. (HANNA's score file carries no story
    texts: a rater's prompts for one question are identical, and a score drawn from the prompt would be
    constant.) Which call gets which score may differ between runs; the test reads the scores from the
    database."""
    if "[Instruction]" in prompt and "Reviewer Preference" in prompt:
        return f"[Review] Reads well for this critic. [Score] {next(_CALLS) % 5 + 1}"
    return scripted_answer(prompt, body)


@pytest.fixture
def hanna_study(researcher, openai_server, tmp_path):
    """HANNA with synthetic demographics and the two per-rater judges, made before the browser starts."""
    from evalhub.imports.datasets import hanna_import
    from llmjudge.models import Judge

    study = hanna_import(path=shared_path("data", "hanna-benchmark-asg", "hanna_metric_scores_llm.csv"),
                         slug=SLUG, prompts=(), owner=researcher)
    names = list(study.raters.order_by("id").values_list("external_id", flat=True))
    demographics = tmp_path / "hanna-demographics.csv"
    demographics.write_text("rater,education,age\n" + "".join(
        f"{name},graduate,{25 + 10 * n}\n" for n, name in enumerate(names)), encoding="utf-8")
    call_command("import_demographics", study.slug, str(demographics))
    openai_server.behaviour = Behaviour(answer=_varied_answer)
    for name, kind in (("perse", Judge.Kind.PERSONALIZED), ("cinemetric", Judge.Kind.PERSONA)):
        Judge.objects.create(name=name, kind=kind, owner=researcher, backend=Judge.Backend.OPENAI_COMPATIBLE,
                             base_url=f"{openai_server.url}/v1", model="test-model", samples=1, concurrency=4)
    return study


def _launch(page, live_url: str, judge: str, fields: dict[str, object]) -> int:  # noqa: ANN001 - Playwright page
    """Start a run from the study's run form; wait on its page until it is done; its id."""
    page.goto(f"{live_url}/llm/studies/{SLUG}/")
    form = page.locator("#run-form")
    form.locator("#id_judge").select_option(label=judge)
    form.locator("summary").click()  # the split options are folded away
    for name, value in fields.items():
        field = form.locator(f"#id_{name}")
        if name == "method":
            field.select_option(str(value))
        else:
            field.fill(str(value))
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/llm/runs/\d+/$"))
    run_id = int(re.search(r"/llm/runs/(\d+)/$", page.url).group(1))
    page.wait_for_function("() => document.getElementById('f-status').textContent === 'done'", timeout=45_000)
    assert float(page.get_attribute("#bar", "aria-valuenow")) == 100
    assert page.text_content("#f-done") == page.text_content("#f-total")
    return run_id


def _cells(table) -> list[list[str]]:  # noqa: ANN001 - Playwright locator
    return [[cell.strip() for cell in row] for row in
            table.locator("tbody tr").evaluate_all("rows => rows.map(r => [...r.cells].map(c => c.textContent))")]


def _expected(run_id: int, study) -> dict[tuple[str, str], dict[str, float | None]]:  # noqa: ANN001
    """(question key, rater name) -> metrics recomputed from the database: each rater's held-out human
    scores against the run's votes for that rater."""
    from annotations.models import HumanRating
    from evalhub.analysis.per_rater import per_rater_predictions
    from evalhub.stats.prediction_metrics import per_rater_metrics

    votes = per_rater_predictions(run_id=run_id)
    human = {(r.item_id, r.question_id, r.rater_id): r.score
             for r in HumanRating.objects.filter(rater__study=study)}
    questions = dict(study.questions.values_list("id", "key"))
    raters = dict(study.raters.values_list("id", "external_id"))
    true: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    pred: dict[str, dict[str, dict[int, float | None]]] = defaultdict(lambda: defaultdict(dict))
    for (item, question, rater), vote in votes.items():
        true[questions[question]][raters[rater]][item] = human[(item, question, rater)]
        pred[questions[question]][raters[rater]][item] = vote
    return {(question, row.rater): {"n": row.n, "kendall": row.kendall, "accuracy": row.accuracy, "mae": row.mae}
            for question in true for row in per_rater_metrics(true[question], pred[question])}


def _shown(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def test_hanna_personalized_and_persona_runs_from_the_browser_show_per_rater_metrics_on_the_dashboard(
    hanna_study, live_url, browser_page, chunk_worker
):
    from llmjudge.models import JudgeRun

    page = browser_page
    log_in(page, f"/llm/studies/{SLUG}/", "owner", PASSWORD, base_url=live_url)

    perse = _launch(page, live_url, "perse", {"profile_size": 3, "held_out": 3, "split_seed": 7})
    persona = _launch(page, live_url, "cinemetric", {"training_examples": 3, "held_out": 2, "method": "cinemetric"})

    # Read the database once, then close this connection: with Playwright's loop running, Django keys
    # connections by context, and one left open would keep the test database from being dropped.
    try:
        raters = sorted(hanna_study.raters.values_list("external_id", flat=True))
        questions = sorted(hanna_study.questions.values_list("key", flat=True))
        runs = {run.pk: run for run in JudgeRun.objects.filter(pk__in=(perse, persona)).select_related("judge")}
        ratings = {pk: run.ratings.count() for pk, run in runs.items()}
        proposals = runs[persona].calls.filter(step="propose").count()
        expected = {pk: _expected(pk, hanna_study) for pk in runs}
    finally:
        connection.close()
    n_raters, n_questions = len(raters), len(questions)
    assert ratings == {perse: n_raters * 3 * n_questions, persona: n_raters * 2 * n_questions * 3}
    assert proposals == n_raters * n_questions  # CINEMETRIC's characters proposed per rater and question

    page.goto(f"{live_url}/studies/{SLUG}/")
    assert page.locator("#per-rater").is_visible()
    for run_id, judge, method, held_out in ((perse, "perse", "personalized", 3), (persona, "cinemetric", "cinemetric", 2)):
        run = runs[run_id]
        assert run.status == JudgeRun.Status.DONE and run.judge.name == judge
        assert run.params["options"]["held_out"] == held_out  # the form's split reached the run
        headings = page.locator(f"h3:has-text('({method}, run {run_id})')")
        assert sorted(h.split(" · ")[-1] for h in headings.all_inner_texts()) == questions
        kendall_shown = 0
        for question in questions:
            table = page.locator(f"h3:has-text('({method}, run {run_id}) · {question}') + div.scroll > table.per-rater")
            rows = _cells(table)
            # One row per rater, then the average; columns: rater, n, missing, Kendall, Pearson, Spearman,
            # accuracy, MAE.
            assert sorted(r[0] for r in rows[:-1]) == raters
            assert rows[-1][0] == f"average ({n_raters} raters)"
            for rater, n, missing, kendall, _pearson, _spearman, accuracy, mae in (r[:8] for r in rows[:-1]):
                want = expected[run_id][(question, rater)]
                assert int(n) == want["n"] == held_out and missing == "0"
                assert re.fullmatch(r"\d\.\d\d", accuracy) and re.fullmatch(r"\d\.\d\d", mae)
                assert (kendall, accuracy, mae) == (
                    _shown(want["kendall"]), _shown(want["accuracy"]), _shown(want["mae"])), (run_id, question, rater)
                kendall_shown += kendall != "–"
        if method == "personalized":  # varied predictions: tau is defined wherever the held-out truth varies
            assert kendall_shown > 0
