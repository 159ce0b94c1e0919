"""The rules written once in annotations.selectors: which studies a researcher may see, which items count."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.http import Http404

from annotations.models import Item, Study
from annotations.selectors import counted_items, studies_for_researcher, study_changeable, study_for_researcher
from annotations.studies import study_create_from_template


@pytest.fixture
def people(django_user_model, researcher, other_researcher):
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    return {
        "owner": researcher,
        "other": other_researcher,
        "staff": django_user_model.objects.create_user(username="staff", password="pw-staff-123", is_staff=True),
        "viewer": viewer,
        "root": django_user_model.objects.create_superuser(username="root", password="pw-root-123"),
    }


ALL = {"story", "others", "staffs"}


@pytest.mark.parametrize(
    ("who", "sees", "changes"),
    [
        ("owner", {"story"}, {"story"}),
        ("other", {"others"}, {"others"}),
        # The role model (issue 18): being staff grants nothing; the permission reads all, changes none.
        ("staff", {"staffs"}, {"staffs"}),
        ("viewer", ALL, set()),
        ("root", ALL, ALL),
    ],
)
def test_which_studies_a_researcher_may_see_and_change(people, story_study, who, sees, changes):
    study_create_from_template(slug="others", template="story-likert", owner=people["other"])
    study_create_from_template(slug="staffs", template="story-likert", owner=people["staff"])
    user = people[who]
    assert set(studies_for_researcher(user=user).values_list("slug", flat=True)) == sees
    assert set(studies_for_researcher(user=user, for_change=True).values_list("slug", flat=True)) == changes
    for slug in ALL:
        study = Study.objects.get(slug=slug)
        assert study_changeable(user=user, study=study) == (slug in changes)
        if slug in sees:
            assert study_for_researcher(user=user, slug=slug).slug == slug
        else:
            with pytest.raises(Http404):
                study_for_researcher(user=user, slug=slug)
        if slug not in changes:
            with pytest.raises(Http404):
                study_for_researcher(user=user, slug=slug, for_change=True)


def test_anonymous_users_see_no_study(story_study):
    assert not studies_for_researcher(user=AnonymousUser()).exists()
    assert not studies_for_researcher(user=AnonymousUser(), for_change=True).exists()
    assert not study_changeable(user=AnonymousUser(), study=story_study)
    with pytest.raises(Http404):
        study_for_researcher(user=AnonymousUser(), slug="story")


def test_gold_items_do_not_count(story_study, meaning_study):
    normal = Item.objects.create(study=story_study, external_id="n", group="human", fields={})
    Item.objects.create(study=story_study, external_id="g", group="human", fields={}, kind=Item.Kind.GOLD)
    Item.objects.create(study=meaning_study, external_id="n", group="human", fields={})
    assert list(counted_items(study=story_study)) == [normal]


def test_the_admin_study_list_asks_the_same_rule_in_its_admin_form(client, people, story_study):
    from django.contrib.auth.models import Permission

    staff = people["staff"]
    staff.user_permissions.add(Permission.objects.get(codename="view_study"))
    own = study_create_from_template(slug="staffs", template="story-likert", owner=staff)
    for user, shown, hidden in ((staff, [own], [story_study]), (people["root"], [own, story_study], [])):
        client.force_login(user)
        page = client.get("/admin/annotations/study/").content.decode()
        for study in shown:
            assert f"/admin/annotations/study/{study.pk}/change/" in page
        for study in hidden:
            assert f"/admin/annotations/study/{study.pk}/change/" not in page
            assert client.get(f"/admin/annotations/study/{study.pk}/change/").status_code == 302  # "does not exist"
