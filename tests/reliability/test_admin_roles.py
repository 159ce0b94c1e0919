"""The role model in the admin (issue 18, finding 2): a row per admin change page of the owner's study.

Staff who are not superusers ("staffer", with every model permission) reach nothing of another
researcher's study through the admin; "viewer" (the view_all_studies permission) reads it and changes
nothing. A full database snapshot before and after every POST says "nothing changed" exactly.
"""
from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.core.cache import cache
from django.db.models import Model

from annotations.models import HumanRating
from llmjudge.models import LLMRating
from tests.reliability.access import World, build_world
from tests.support.snapshots import database_snapshot

pytestmark = pytest.mark.django_db

# admin path -> the owner's object it changes
CHANGE_PAGES: dict[str, Callable[[World], Model]] = {
    "annotations/study": lambda w: w.study,
    "annotations/question": lambda w: w.study.questions.first(),
    "annotations/item": lambda w: w.study.items.first(),
    "annotations/rater": lambda w: w.rater_a,
    "annotations/humanrating": lambda w: HumanRating.objects.filter(item__study=w.study).first(),
    "llmjudge/judge": lambda w: w.judge,
    "llmjudge/judgerun": lambda w: w.run,
    "llmjudge/llmrating": lambda w: LLMRating.objects.filter(run=w.run).first(),
}
FORM = {"title": "changed-by-staff", "key": "changed", "text": "changed", "external_id": "changed", "score": "1",
        "name": "changed", "status": "failed", "slug": "changed", "api_key_env": "SECRET_KEY"}


@pytest.fixture
def world(researcher, other_researcher) -> World:
    cache.clear()
    return build_world(owner=researcher, other=other_researcher)


@pytest.mark.parametrize("page", sorted(CHANGE_PAGES))
def test_staff_without_the_permission_neither_see_nor_change_another_researchers_rows(world, page):
    obj = CHANGE_PAGES[page](world)
    client = world.client("staffer")
    response = client.get(f"/admin/{page}/{obj.pk}/change/")
    assert response.status_code == 302 and response["Location"] == "/admin/", "the admin says: no such object"
    before = database_snapshot()
    for url in (f"/admin/{page}/{obj.pk}/change/", f"/admin/{page}/{obj.pk}/delete/"):
        assert client.post(url, {**FORM, "post": "yes"}).status_code in (302, 403), url
    assert database_snapshot() == before


@pytest.mark.parametrize("page", sorted(CHANGE_PAGES))
def test_the_view_all_permission_reads_another_researchers_rows_and_changes_nothing(world, page):
    obj = CHANGE_PAGES[page](world)
    client = world.client("viewer")
    if page != "llmjudge/judge":  # judges are not study data: another's judge is listed only when shared
        assert client.get(f"/admin/{page}/{obj.pk}/change/").status_code == 200
    before = database_snapshot()
    for url in (f"/admin/{page}/{obj.pk}/change/", f"/admin/{page}/{obj.pk}/delete/"):
        assert client.post(url, {**FORM, "post": "yes"}).status_code in (302, 403), url
    assert database_snapshot() == before


def test_admin_lists_and_filters_name_only_the_staff_members_own_studies(world):
    client = world.client("staffer")
    for page in ("annotations/question", "annotations/item", "annotations/rater", "llmjudge/judgerun"):
        body = client.get(f"/admin/{page}/").content.decode()
        assert world.study.slug not in body and world.other_study.slug not in body, page


def test_actions_of_a_viewer_touch_only_what_they_may_change(world):
    client = world.client("viewer")  # logging in sets last_login: before the snapshot
    before = database_snapshot()
    response = client.post("/admin/annotations/rater/", {
        "action": "revoke_links", "_selected_action": [world.rater_a.pk, world.rater_b.pk]})
    assert response.status_code == 302
    assert database_snapshot() == before


def test_a_researcher_sees_and_changes_their_own_study_in_the_admin(world, django_user_model):
    world.owner.is_staff = True
    world.owner.save()
    world.owner.user_permissions.set(world.staffer.user_permissions.all())
    client = world.client("owner")
    assert client.get(f"/admin/annotations/study/{world.study.pk}/change/").status_code == 200
    question = world.study.questions.first()
    response = client.post(f"/admin/annotations/question/{question.pk}/change/", {
        "study": world.study.pk, "order": question.order, "key": question.key, "text": "reworded", "context": "",
        "reveals": question.reveals, "rubric": json.dumps(question.rubric)})
    assert response.status_code == 302, response.content.decode()[:2000]
    question.refresh_from_db()
    assert question.text == "reworded"
