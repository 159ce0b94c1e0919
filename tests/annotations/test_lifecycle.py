"""A study's lifecycle from the shell: open_study, close_study, reopen, and invite's warning on a draft."""
from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command

from annotations.lifecycle import StudySettingsError, study_settings_set
from annotations.models import Assignment, HumanRating, Rater, Study
from tests.support.raterkit import add_story_items, answer, url_of


def _call(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def study(story_study):
    add_story_items(story_study)
    return story_study


def test_open_study_opens_a_draft_and_its_links_start_working(client, study):
    links, _ = _call("invite", study.slug)
    path = "/" + links.strip().split("/", 3)[3]
    assert client.get(path).status_code == 403
    out, _ = _call("open_study", study.slug)
    assert out.strip() == f"study {study.slug} is now open"
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN
    assert client.get(path).status_code == 200


def test_close_study_closes_and_open_study_reopens_keeping_the_ratings(client, study):
    _call("open_study", study.slug)
    rater = Rater.objects.create(study=study, external_id="r1")
    answer(client, rater)
    kept = HumanRating.objects.filter(rater=rater).count()
    assert kept > 0
    out, _ = _call("close_study", study.slug)
    assert out.strip() == f"study {study.slug} is now closed"
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED
    _call("open_study", study.slug)
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN
    assert HumanRating.objects.filter(rater=rater).count() == kept


@pytest.mark.parametrize(
    ("command", "status", "message"),
    [
        ("open_study", Study.Status.OPEN, "study 'story' is already open"),
        ("close_study", Study.Status.DRAFT, "study 'story' is not open (draft): there is nothing to close"),
        ("close_study", Study.Status.CLOSED, "study 'story' is not open (closed): there is nothing to close"),
    ],
)
def test_a_status_change_that_cannot_happen_is_refused_and_changes_nothing(study, command, status, message):
    Study.objects.filter(pk=study.pk).update(status=status)
    with pytest.raises(CommandError, match=re.escape(message)):
        _call(command, study.slug)
    study.refresh_from_db()
    assert study.status == status


def test_a_study_without_items_cannot_open(story_study):
    with pytest.raises(CommandError, match="has no item: import items before opening it"):
        _call("open_study", story_study.slug)
    story_study.refresh_from_db()
    assert story_study.status == Study.Status.DRAFT


def test_an_unknown_study_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no study 'nope'"):
        _call("open_study", "nope")


def test_invite_on_a_draft_study_warns_on_stderr_naming_open_study_and_still_prints_the_links(study):
    out, err = _call("invite", study.slug, "--count", "2")
    assert len(out.split()) == 2
    assert f"python manage.py open_study {study.slug}" in err
    assert err.startswith(f"warning: study {study.slug} is draft")


def test_invite_on_an_open_study_does_not_warn(study):
    _call("open_study", study.slug)
    out, err = _call("invite", study.slug)
    assert len(out.split()) == 1 and err == ""


def test_a_rater_at_a_closed_study_sees_a_polite_page_and_a_finished_rater_keeps_the_code(client, study):
    _call("open_study", study.slug)
    Study.objects.filter(pk=study.pk).update(items_per_rater=1)
    finished = Rater.objects.create(study=study, external_id="done")
    page = answer(client, finished)
    while "completion code" not in page.content.decode().lower():  # the item's pages, one after the other
        page = answer(client, finished)
    code = Assignment.objects.get(rater=finished).completion_code
    assert code and code in page.content.decode()
    waiting = Rater.objects.create(study=study, external_id="late")
    _call("close_study", study.slug)
    late = client.get(url_of(waiting))
    assert late.status_code == 403
    assert "This study has closed and takes no more ratings. Thank you for your interest." in late.content.decode()
    again = client.get(url_of(finished))
    assert again.status_code == 200 and code in again.content.decode()


def test_the_settings_service_refuses_unknown_settings_and_pair_order_outside_pairwise(story_study):
    with pytest.raises(StudySettingsError, match=r"unknown settings \['raters_per_itme'\]"):
        study_settings_set(study=story_study, values={"raters_per_itme": 4})
    with pytest.raises(StudySettingsError, match="pair_order is only for kind 'pairwise'") as refused:
        study_settings_set(study=story_study, values={"pair_order": "fixed", "raters_per_item": 4})
    assert refused.value.field == "pair_order"
    story_study.refresh_from_db()
    assert (story_study.pair_order, story_study.raters_per_item) == ("counterbalanced", 3)
    assert study_settings_set(study=story_study, values={"raters_per_item": 4, "title": story_study.title}) == [
        "raters_per_item"]
