"""Issue 24: the run's owner reads the answers the parser could not read and records the score a human reads.

The run is stored by the local OpenAI-protocol server, which answers the lighthouse story (item s1) with prose that
names no score and carries a reasoning trace, and the other items with a score.
"""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from llmjudge.kinds.plain.builder import plain_parser
from llmjudge.models import JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging
from llmjudge.runs.reparse import study_reparse
from llmjudge.runs.review import READ_BY_A_PERSON, ReadingError, rating_read_by_person
from tests.support.openai_answers import default_answer, default_reasoning
from tests.support.openai_server import Behaviour

pytestmark = pytest.mark.django_db

NO_SCORE = "The keeper's loneliness comes through, though the ending feels rushed."


def _answer(prompt_text: str, request_json: dict) -> str:
    return NO_SCORE if "lighthouse" in prompt_text else default_answer(prompt_text, request_json)


@pytest.fixture
def unread_run(story_with_items, server_judge, openai_server) -> JudgeRun:
    openai_server.behaviour = Behaviour(answer=_answer, reasoning_field="reasoning_content")
    run = judging.judge_run_start(study=story_with_items, judge=server_judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    return run


def _unread(run: JudgeRun) -> LLMRating:
    return run.ratings.filter(status="unparseable").order_by("pk").first()


def _row(rating: LLMRating) -> tuple:
    rating.refresh_from_db()
    return rating.status, rating.score, rating.reason, rating.read_by_id, rating.read_at, rating.history


def _read_url(rating: LLMRating) -> str:
    return reverse("llmjudge:rating_read", args=[rating.run_id, rating.pk])


def test_the_run_page_lists_the_unparseable_answers_with_their_reasons_and_folded_trace(unread_run, owner_client):
    parse = plain_parser(study=unread_run.study)
    unread = list(unread_run.ratings.filter(status="unparseable"))
    reasons = {parse(r.raw).reason for r in unread}
    assert len(unread) == 12 and len(reasons) == 1 and {r.reason for r in unread} == reasons

    page = owner_client.get(reverse("llmjudge:run_detail", args=[unread_run.pk])).content.decode()

    assert f"12 unparseable, by reason:\n  <span class=\"reason\">{reasons.pop()}: <b>12</b></span>" in page
    for rating in unread:
        assert f'id="review-{rating.pk}"' in page and f'action="{_read_url(rating)}"' in page
    assert page.count(NO_SCORE.replace("'", "&#x27;")) >= 12
    trace = default_reasoning(unread[0].prompt, {}).replace("'", "&#x27;")
    assert f'<details class="trace"><summary>reasoning ({len(default_reasoning(unread[0].prompt, {}))} characters, ' \
           f'not scored)</summary><pre>{trace}</pre></details>' in page
    assert 'id="cut-off-reasoning"' not in page


def test_the_owner_records_a_reading_that_counts_as_ok_and_goes_into_the_history(unread_run, owner_client, researcher):
    rating = _unread(unread_run)
    reason_before, history_before = rating.reason, list(rating.history)

    response = owner_client.post(_read_url(rating), {"score": "4"})

    assert response.status_code == 302 and response["Location"] == reverse("llmjudge:run_detail",
                                                                           args=[unread_run.pk])
    status, score, reason, read_by, read_at, history = _row(rating)
    assert (status, score, reason, read_by) == ("ok", 4.0, READ_BY_A_PERSON, researcher.pk)
    assert read_at is not None
    assert history[:-1] == history_before
    assert history[-1] == {"read": read_at.isoformat(), "by": "owner", "score": 4.0, "status": "unparseable",
                           "previous_score": None, "reason": reason_before}
    page = owner_client.get(reverse("llmjudge:run_detail", args=[unread_run.pk])).content.decode()
    assert '<b id="f-read">1</b>' in page and "Read by a person: 1" in page
    assert f'id="review-{rating.pk}"' not in page and "11 unparseable" in page


@pytest.mark.parametrize("value", ["6", "0", "-1", "nan", "inf", "four", ""])
def test_a_value_off_the_scale_is_refused_with_a_clear_error_and_changes_nothing(unread_run, owner_client, value):
    rating = _unread(unread_run)
    before = _row(rating)

    response = owner_client.post(_read_url(rating), {"score": value})

    assert response.status_code == 400
    page = response.content.decode()
    assert f'id="review-error-{rating.pk}" role="alert"' in page
    if value in ("6", "0", "-1"):
        assert f"{value} is outside the question&#x27;s scale (1 to 5)" in page
    assert _row(rating) == before


def test_a_read_only_viewer_gets_403_and_another_researcher_404_and_nothing_changes(unread_run, other_researcher,
                                                                                     client):
    rating = _unread(unread_run)
    before = _row(rating)
    client.force_login(other_researcher)
    assert client.post(_read_url(rating), {"score": "3"}).status_code == 404

    other_researcher.is_staff = True
    other_researcher.save()
    other_researcher.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    page = client.get(reverse("llmjudge:run_detail", args=[unread_run.pk]))
    assert page.status_code == 200 and b"Record reading" not in page.content
    assert client.post(_read_url(rating), {"score": "3"}).status_code == 403
    assert _row(rating) == before


def test_the_form_needs_its_csrf_token(unread_run, researcher):
    rating = _unread(unread_run)
    before = _row(rating)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(researcher)

    assert browser.post(_read_url(rating), {"score": "3"}).status_code == 403
    assert _row(rating) == before
    page = browser.get(reverse("llmjudge:run_detail", args=[unread_run.pk])).content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    assert browser.post(_read_url(rating), {"score": "3", "csrfmiddlewaretoken": token}).status_code == 302
    assert _row(rating)[:2] == ("ok", 3.0)


def test_a_rating_of_another_run_is_not_found(unread_run, owner_client, story_with_items, make_judge):
    other = judging.judge_run_start(study=story_with_items, judge=make_judge("fake"), enqueue=False)
    rating = _unread(unread_run)
    assert owner_client.post(reverse("llmjudge:rating_read", args=[other.pk, rating.pk]),
                             {"score": "3"}).status_code == 404
    assert _row(rating)[0] == "unparseable"


def test_an_answer_the_parser_read_cannot_be_read_by_a_person(unread_run, researcher):
    read = unread_run.ratings.filter(status="ok").first()
    before = _row(read)
    with pytest.raises(ReadingError, match="only an unparseable answer can be read by a person; this one is ok"):
        rating_read_by_person(rating=read, user=researcher, score=2)
    assert _row(read) == before


def test_a_second_reading_corrects_the_first_and_both_are_in_the_history(unread_run, researcher):
    rating = _unread(unread_run)
    rating_read_by_person(rating=rating, user=researcher, score=2)
    rating_read_by_person(rating=rating, user=researcher, score=3)
    status, score, _, _, _, history = _row(rating)
    assert (status, score) == ("ok", 3.0)
    assert [(e["score"], e["status"], e["previous_score"]) for e in history if "read" in e] == [
        (2.0, "unparseable", None), (3.0, "ok", 2.0)]


def test_reparse_never_overwrites_a_persons_reading_and_counts_the_rest_by_reason(unread_run, researcher):
    parse = plain_parser(study=unread_run.study)
    rating = _unread(unread_run)
    rating_read_by_person(rating=rating, user=researcher, score=5)
    after_reading = _row(rating)
    assert parse(rating.raw).status == "unparseable"  # the parser, asked again, would undo the reading

    report = study_reparse(study=unread_run.study)
    out = StringIO()
    call_command("reparse", unread_run.study.slug, stdout=out)

    assert _row(rating) == after_reading
    assert report.kept_readings == 1 and report.n_read == 35 and report.n_changed == 0
    reason = parse(rating.raw).reason
    assert report.unparseable == {reason: 11}
    assert f"unparseable 11: {reason} 11" in out.getvalue()
    assert "read by a person (left as read): 1" in out.getvalue()


def test_a_pairwise_answer_is_read_as_one_of_the_studys_choices(researcher, openai_server, owner_client):
    from annotations.models import Item
    from annotations.studies import study_create_from_template
    from llmjudge.models import Judge

    study = study_create_from_template(slug="pairs", template="story-pairwise", owner=researcher)
    Item.objects.create(study=study, external_id="p0", group="pairs", position=0,
                        fields={"prompt": "p", "response_a": "one story", "response_b": "another story"})
    openai_server.behaviour = Behaviour(answer=lambda prompt, request: NO_SCORE)
    judge = Judge.objects.create(name="pairwise", owner=researcher, backend=Judge.Backend.OPENAI_COMPATIBLE,
                                 base_url=f"{openai_server.url}/v1", model="test-model", samples=1)
    run = judging.judge_run_start(study=study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    rating = _unread(run)
    choices = [(code, label) for code, label in ((1, "A"), (2, "B"), (3, "tie")) if code <= study.scale_max]

    page = owner_client.get(reverse("llmjudge:run_detail", args=[run.pk])).content.decode()
    assert '<select name="score"' in page
    assert all(f'<option value="{code}">{label}</option>' in page for code, label in choices)

    before = _row(rating)
    response = owner_client.post(_read_url(rating), {"score": "1.5"})
    assert response.status_code == 400 and "1.5 is not one of this study&#x27;s choices" in response.content.decode()
    assert _row(rating) == before
    assert owner_client.post(_read_url(rating), {"score": "2"}).status_code == 302
    assert _row(rating)[:3] == ("ok", 2.0, READ_BY_A_PERSON)
