"""`reparse`: stored answers re-read with the current parser, on runs stored by the local OpenAI server.

The tests never assume a parse rule: a stored parse is made deliberately stale, and reparse must bring it
back to what the kind's parser returns now.
"""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotations.studies import study_create_from_template
from llmjudge.kinds.plain.builder import plain_parser
from llmjudge.kinds.rubric import prompts as rubric_prompts
from llmjudge.models import JudgeRun, LLMRating
from llmjudge.parsing import PARSER_VERSION, ParsedScore
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.reparse import study_reparse

pytestmark = pytest.mark.django_db


def _stored_run(study, judge, openai_server) -> JudgeRun:
    run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    openai_server.reset_stats()
    return run


def _snapshot(run: JudgeRun) -> list[tuple]:
    return list(run.ratings.order_by("pk").values_list("pk", "status", "score", "rationale", "history",
                                                       "template_version", "updated_at"))


@pytest.fixture
def stale_run(story_with_items, server_judge, openai_server):
    """A stored plain run with two stale parses: a wrong score, and an ok answer stored as unparseable."""
    run = _stored_run(story_with_items, server_judge, openai_server)
    wrong_score, wrong_status = run.ratings.order_by("pk")[:2]
    assert wrong_score.status == wrong_status.status == "ok"
    LLMRating.objects.filter(pk=wrong_score.pk).update(score=5.0 if wrong_score.score != 5.0 else 1.0,
                                                       template_version="story+p2+parser0")
    LLMRating.objects.filter(pk=wrong_status.pk).update(status="unparseable", score=None, rationale="old rationale")
    return run, wrong_score, wrong_status


def test_reparse_corrects_a_stale_score_and_a_stale_status_without_calling_the_model(stale_run, openai_server):
    run, wrong_score, wrong_status = stale_run
    parse = plain_parser(study=run.study)

    report = study_reparse(study=run.study)

    assert openai_server.stats.requests == 0
    assert report.n_read == run.ratings.count() == 36
    assert report.n_changed == 2
    assert report.transitions == {"ok -> ok": 1, "unparseable -> ok": 1}
    assert {(e.item, e.question) for e in report.examples} == {
        (r.item.external_id, r.question.key) for r in (wrong_score, wrong_status)}
    for before in (wrong_score, wrong_status):
        after = LLMRating.objects.get(pk=before.pk)
        now = parse(after.raw)
        assert (after.status, after.score, after.rationale) == (now.status, now.score, now.rationale)
        assert after.score == before.score  # the run's own parse, before it was made stale
        assert after.template_version.endswith(f"+parser{PARSER_VERSION}")
        assert len(after.history) == len(before.history) + 1
    score_entry = LLMRating.objects.get(pk=wrong_score.pk).history[-1]
    assert score_entry["status"] == "ok" and score_entry["score"] in (1.0, 5.0) and score_entry["score"] != wrong_score.score
    assert score_entry["version"] == "story+p2+parser0"
    status_entry = LLMRating.objects.get(pk=wrong_status.pk).history[-1]
    assert (status_entry["status"], status_entry["score"], status_entry["rationale"]) == (
        "unparseable", None, "old rationale")
    assert "reparse" in status_entry


def test_reparse_twice_changes_nothing_the_second_time(stale_run):
    run, _, _ = stale_run
    study_reparse(study=run.study)
    first = _snapshot(run)

    again = study_reparse(study=run.study)

    assert (again.n_changed, dict(again.transitions)) == (0, {})
    assert _snapshot(run) == first


def test_a_dry_run_reports_the_changes_and_writes_nothing(stale_run, openai_server):
    run, _, _ = stale_run
    before = _snapshot(run)

    report = study_reparse(study=run.study, dry_run=True)

    assert report.n_changed == 2
    assert _snapshot(run) == before
    assert openai_server.stats.requests == 0


def test_a_rubric_rating_is_re_read_by_the_rubric_judges_parser(story_with_items, make_judge, openai_server,
                                                                 monkeypatch):
    from llmjudge.models import Judge

    judge = make_judge("prometheus", kind="rubric", backend=Judge.Backend.OPENAI_COMPATIBLE,
                       base_url=f"{openai_server.url}/v1", model="test-model", samples=1)
    run = _stored_run(story_with_items, judge, openai_server)
    assert run.ratings.filter(status="ok").count() == run.ratings.count() > 0
    # If reparse used any other parser, this sentinel would not be reached.
    monkeypatch.setattr(rubric_prompts, "parse_absolute", lambda text: ParsedScore(None, "refused", "rubric parser"))

    report = study_reparse(study=story_with_items, run=run)

    assert openai_server.stats.requests == 0
    assert set(run.ratings.values_list("status", "score", "rationale")) == {("refused", None, "rubric parser")}
    assert report.transitions == {"ok -> refused": run.ratings.count()}


def test_the_command_reports_counts_and_examples(stale_run, openai_server):
    from io import StringIO

    run, wrong_score, _ = stale_run
    out = StringIO()
    call_command("reparse", run.study.slug, "--run", str(run.pk), "--dry-run", stdout=out)
    text = out.getvalue()
    assert "re-read 36 answers; would change 2 (dry run: nothing written)" in text
    assert "unparseable -> ok: 1" in text and "ok -> ok: 1" in text
    assert f"item {wrong_score.item.external_id} / {wrong_score.question.key}" in text
    assert LLMRating.objects.get(pk=wrong_score.pk).score != wrong_score.score  # still stale
    assert openai_server.stats.requests == 0


def test_the_command_refuses_an_unknown_study_and_another_studys_run(stale_run, researcher):
    run, _, _ = stale_run
    other = study_create_from_template(slug="other", template="story-likert", owner=researcher)
    before = _snapshot(run)
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("reparse", "nope")
    with pytest.raises(CommandError, match=f"run {run.pk} belongs to study 'story', not 'other'"):
        call_command("reparse", other.slug, "--run", str(run.pk))
    with pytest.raises(CommandError, match="no judge run 999999"):
        call_command("reparse", other.slug, "--run", "999999")
    assert _snapshot(run) == before


@pytest.mark.parametrize(("stored", "expected"), [
    ("story+p2+parser1", f"story+p2+parser{PARSER_VERSION}"),
    ("", f"parser{PARSER_VERSION}"),
    ("x" * 50, "x" * (50 - len(f"+parser{PARSER_VERSION}")) + f"+parser{PARSER_VERSION}"),
])
def test_the_version_names_the_current_parser_within_the_fields_length(stored, expected):
    from llmjudge.runs.reparse import current_version

    assert current_version(stored) == expected
    assert len(current_version(stored)) <= 50


def test_every_kind_but_the_panel_re_reads_through_its_own_parser():
    from llmjudge.kinds import kind_for, kind_names

    assert {name for name in kind_names() if kind_for(name).answer_parser is None} == {"roleplay"}


def test_a_panel_run_is_skipped_and_counted_not_guessed(story_with_items, make_judge):
    judge = make_judge("panel", kind="roleplay")
    run = JudgeRun.objects.create(study=story_with_items, judge=judge, params={"kind": "roleplay"})
    item, question = story_with_items.items.first(), story_with_items.questions.first()
    LLMRating.objects.create(run=run, item=item, question=question, sample=0, raw="Critic: 4", status="unparseable")

    report = study_reparse(study=story_with_items)

    assert (report.n_read, report.n_changed) == (0, 0)
    assert report.skipped == {f"a roleplay answer cannot be re-read alone (run {run.pk})": 1}
    assert LLMRating.objects.get(run=run).status == "unparseable"
