"""The meta-evaluation study (paper appendix C.3.2): agree with "another rater", really an LLM."""
from __future__ import annotations

import pytest

from annotations.models import Assignment, MetaAnswer, Rater, Study
from evalhub.imports.meta_study import meta_study_create
from llmjudge.models import Judge, JudgeRun, LLMRating
from tests.support.raterkit import add_story_items, open_study, page_key, url_of


@pytest.fixture
def run(story_study):
    items = add_story_items(story_study)
    judge = Judge.objects.create(name="secret-gpt-judge", backend=Judge.Backend.FAKE, model="gpt-secret")
    run = JudgeRun.objects.create(study=story_study, judge=judge)
    question = story_study.questions.get(key="likability")
    for item in items[:2]:
        LLMRating.objects.create(run=run, item=item, question=question, sample=0, status=LLMRating.Status.OK,
                                 score=4, raw="4. The ending surprised me.", rationale="The ending surprised me.")
    LLMRating.objects.create(run=run, item=items[2], question=question, sample=0,
                             status=LLMRating.Status.UNPARSEABLE, raw="As an AI I cannot enjoy.")
    return run


def test_meta_study_has_one_item_per_parsed_answer_with_the_source_hidden(run, researcher):
    study = meta_study_create(slug="meta", run_id=run.pk, question_key="likability", owner=researcher)
    assert study.kind == Study.Kind.META and study.items.count() == 2
    item = study.items.get(external_id="h1:likability:0")
    assert item.fields["rating"] == "4" and item.fields["explanation"] == "The ending surprised me."
    assert "source_llm_rating" not in study.item_fields


def test_a_rater_sees_the_story_rating_and_explanation_and_answers(client, run, researcher):
    study = open_study(meta_study_create(slug="meta", run_id=run.pk, question_key="likability", owner=researcher))
    rater = Rater.objects.create(study=study)
    html = client.get(url_of(rater)).content.decode()
    assert "The ending surprised me." in html and "How enjoyable do you find the story fragment?" in html
    assert "Their rating" in html and "Partially agree" in html
    for secret in ("secret-gpt-judge", "gpt-secret", "LLM", "language model", "human", "gpt2"):
        assert secret not in html
    key = page_key(html)
    client.post(url_of(rater), {"page": key, "verdict": "partial", "comment": "Too generous."})
    client.post(url_of(rater), {"page": key, "verdict": "agree", "comment": "again"})  # stale: ignored
    answer = MetaAnswer.objects.get()
    assert (answer.verdict, answer.comment, answer.rater) == ("partial", "Too generous.", rater)
    second_key = page_key(client.get(url_of(rater)).content.decode())
    done = client.post(url_of(rater), {"page": second_key, "verdict": "disagree", "comment": ""}, follow=True)
    assert "completion code" in done.content.decode()
    assert MetaAnswer.objects.count() == 2
    assert Assignment.objects.get(rater=rater).completed_at is not None


def test_meta_study_needs_parsed_answers(run):
    with pytest.raises(ValueError):
        meta_study_create(slug="meta", run_id=run.pk, question_key="relevance")
    assert not Study.objects.filter(slug="meta").exists()


def test_create_meta_study_command_wraps_the_service(run):
    import io

    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("create_meta_study", "meta", "--run", str(run.pk), "--question", "likability", "--limit", "1",
                 stdout=out)
    assert "with 1 item " in out.getvalue()
    assert Study.objects.get(slug="meta").items.count() == 1
    with pytest.raises(CommandError):
        call_command("create_meta_study", "meta", "--run", str(run.pk), "--question", "likability")
