"""The persona ablation set (CINEMETRIC tables 1-2) launched from the browser or the command line and
compared in one table; the per-rater sections follow the dashboard's filters.

The localhost server answers each role-play or judge prompt with a score derived from the prompt
itself (a CRC of its text), so methods disagree with each other and with the raters in ways the test
can recompute from the stored prompts, without the code under test.
"""
from __future__ import annotations

import json
import zlib
from collections import defaultdict
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotations.models import HumanRating
from llmjudge.models import Experiment, Judge, JudgeRun
from tests.llmjudge.conftest import work_off
from tests.llmjudge.kinds_integration.test_kinds_end_to_end import scripted_answer
from tests.llmjudge.kinds_integration.test_per_rater_dashboard import seed_holding_out
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db(transaction=True)

PAPER_ORDER = ["plain", "personalized_judge", "no_training_examples", "no_character_names", "cinemetric"]
SPLIT = {"training_examples": 1, "held_out": 2, "split_seed": 3}


def score_for(prompt: str) -> int:
    return zlib.crc32(prompt.encode("utf-8")) % 5 + 1


def ablation_answer(prompt: str, body: dict) -> str:
    if "movie character matching expert" in prompt or "You are a movie expert" in prompt:
        return scripted_answer(prompt, body)  # five characters (one invented), then VALID / INVALID
    return f"Reasoning: Seen from this reader's side.\nAnswer: {score_for(prompt)}"


@pytest.fixture
def persona_judge(openai_server, researcher):
    openai_server.behaviour = Behaviour(answer=ablation_answer)
    return Judge.objects.create(
        name="cinemetric", kind="persona", options=dict(SPLIT), owner=researcher,
        backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=f"{openai_server.url}/v1", model="test-model", samples=1,
    )


def vote(scores: list[float]) -> float:
    """Majority, the earliest sample breaking ties (written here, not imported)."""
    return max(scores, key=lambda s: (scores.count(s), -scores.index(s)))


def expected_rows(
    runs: list[JudgeRun], *, groups: set[str] | None = None, questions: set[str] | None = None
) -> dict[tuple[str, str], dict]:
    """(method, question) -> pooled and per-rater-mean accuracy and MAE, from the stored rows."""
    truth = {(r.rater_id, r.item_id, r.question.key): r.score
             for r in HumanRating.objects.select_related("question")}
    out = {}
    for run in runs:
        samples: dict[tuple[int, int, str], list[float]] = defaultdict(list)
        for row in run.ratings.select_related("question", "item").order_by("sample"):
            if (groups is not None and row.item.group not in groups) or (
                questions is not None and row.question.key not in questions
            ):
                continue
            assert row.status == "ok" and row.score == score_for(row.prompt)
            samples[(row.target_rater_id, row.item_id, row.question.key)].append(row.score)
        by_question: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        for (rater, item, question), scores in samples.items():
            by_question[question][rater].append(abs(vote(scores) - truth[(rater, item, question)]))
        for question, errors in by_question.items():
            flat = [e for es in errors.values() for e in es]
            out[(run.params["kind_options"]["method"], question)] = {
                "n_items": len(flat),
                "accuracy": sum(e == 0 for e in flat) / len(flat),
                "mae": sum(flat) / len(flat),
                "rater_accuracy": sum(sum(e == 0 for e in es) / len(es) for es in errors.values()) / len(errors),
                "rater_mae": sum(sum(es) / len(es) for es in errors.values()) / len(errors),
            }
    return out


def assert_table_matches(table: dict, runs: list[JudgeRun], **kw) -> None:
    expected = expected_rows(runs, **kw)
    assert {(r["method"], r["question"]) for r in table["rows"]} == set(expected)
    for row in table["rows"]:
        want = expected[(row["method"], row["question"])]
        assert row["n_missing"] == 0 and row["n_raters"] == 2
        for key, value in want.items():
            assert row[key] == pytest.approx(value), (row["method"], row["question"], key)


def test_the_ablation_set_launches_from_the_browser_and_is_compared_in_one_table(
    owner_client, rated_study, persona_judge, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(reverse("llmjudge:ablation_start", args=["story"]),
                                     {"judge": persona_judge.pk, "methods": PAPER_ORDER, "held_out": 2,
                                      "split_seed": seed_holding_out(rated_study, "gpt2", k=1)})
    assert response.status_code == 302
    experiment = Experiment.objects.get()
    runs = list(experiment.runs.order_by("id"))
    assert [r.params["kind_options"]["method"] for r in runs] == PAPER_ORDER
    assert experiment.grid["methods"] == PAPER_ORDER and experiment.grid["kind_options"]["held_out"] == 2
    assert len({json.dumps(r.params["split"], sort_keys=True) for r in runs}) == 1  # one split for all
    work_off(sent)
    for run in runs:
        run.refresh_from_db()
        assert run.status == "done", run.error

    data = owner_client.get(reverse("study_analysis_json", args=["story"])).json()
    [table] = data["ablations"]
    assert table["runs"] == [r.pk for r in runs] and table["experiment"] == experiment.pk
    # The paper's order within each question: baselines first, the full method last.
    relevance = [r["method"] for r in table["rows"] if r["question"] == "relevance"]
    assert relevance == PAPER_ORDER
    assert table["pairs"] == {q: 4 for q in ("grammaticality", "cohesiveness", "likability", "relevance")}
    assert_table_matches(table, runs)
    assert len({(r["accuracy"], r["mae"]) for r in table["rows"]}) > 3  # the methods really differ

    page = owner_client.get(reverse("study_dashboard", args=["story"])).content.decode()
    assert 'id="ablations"' in page and "CINEMETRIC w/o character names" in page
    first = table["rows"][0]
    assert f"<td>{first['label']}</td><td>{first['run']}</td><td>2</td><td>4</td><td>0</td><td>{first['accuracy']:.3f}" \
        in page

    # The dashboard's filters apply to the table: one question, the items of one group, three runs.
    shown = runs[2:]
    query = "question=relevance&group=human&" + "&".join(f"run={r.pk}" for r in shown)
    data = owner_client.get(reverse("study_analysis_json", args=["story"]) + "?" + query).json()
    [table] = data["ablations"]
    assert table["runs"] == [r.pk for r in shown]
    assert_table_matches(table, shown, groups={"human"}, questions={"relevance"})
    n_human = sum(1 for r in runs[0].ratings.filter(question__key="relevance", item__group="human"))
    assert table["pairs"] == {"relevance": n_human} and 0 < n_human < 4
    assert {(e["run"], e["question"]) for e in data["personal"]} == {(r.pk, "relevance") for r in shown}


def test_run_judge_ablation_and_analyze_give_the_same_table_on_the_command_line(
    rated_study, persona_judge
):
    out = StringIO()
    call_command("run_judge", "story", "cinemetric", "--ablation", "--inline", stdout=out, stderr=StringIO())
    runs = list(JudgeRun.objects.order_by("id"))
    assert len(runs) == 5 and all(r.status == "done" for r in runs)
    assert "started experiment" in out.getvalue() and "(no_character_names)" in out.getvalue()

    out = StringIO()
    call_command("analyze", "story", "--format", "json", "--question", "likability", stdout=out)
    [table] = json.loads(out.getvalue())["ablations"]
    assert {r["question"] for r in table["rows"]} == {"likability"}
    expected = expected_rows(runs)
    for row in table["rows"]:
        assert row["accuracy"] == pytest.approx(expected[(row["method"], "likability")]["accuracy"])
        assert row["mae"] == pytest.approx(expected[(row["method"], "likability")]["mae"])
    text = StringIO()
    call_command("analyze", "story", "--format", "table", stdout=text)
    assert "Per-rater methods side by side" in text.getvalue() and "CINEMETRIC w/o training examples" in text.getvalue()


def test_an_ablation_set_needs_a_persona_judge_and_starts_nothing_when_a_rater_lacks_demographics(
    rated_study, persona_judge
):
    from llmjudge.runs.lifecycle import RunError, persona_ablation_launch

    plain = Judge.objects.create(name="plain", backend=Judge.Backend.FAKE, model="m")
    with pytest.raises(RunError, match="is a plain judge; the ablation set runs a persona judge"):
        persona_ablation_launch(study=rated_study, judge=plain, enqueue=False)
    rated_study.raters.filter(external_id="bob").update(demographics={})
    with pytest.raises(RunError, match="needs demographics of every rater; none for: bob"):
        persona_ablation_launch(study=rated_study, judge=persona_judge, enqueue=False)
    assert not JudgeRun.objects.exists() and not Experiment.objects.exists()
