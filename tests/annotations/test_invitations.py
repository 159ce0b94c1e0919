"""Invitation links (command and researcher page), the open link, revocation, researcher access."""
from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Assignment, Rater, Study
from tests.support.raterkit import open_study


def test_invite_prints_one_working_url_per_line(client, study):
    out = io.StringIO()
    call_command("invite", "story", "--count", "3", "--base-url", "https://rate.example.org/", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    tokens = [re.fullmatch(r"https://rate\.example\.org/r/([A-Za-z0-9_-]{32})/", line).group(1) for line in lines]
    assert set(Rater.objects.values_list("token", flat=True)) == set(tokens)
    assert all(r.source == Rater.Source.INVITED for r in Rater.objects.all())
    path = lines[0].removeprefix("https://rate.example.org")
    assert client.get(path).status_code == 200


def test_invite_uses_the_public_base_url_by_default(study, settings):
    settings.PUBLIC_BASE_URL = "https://evalhub.example.org"
    out = io.StringIO()
    call_command("invite", "story", stdout=out)
    assert out.getvalue().startswith("https://evalhub.example.org/r/")


@pytest.mark.parametrize("args", [["nope"], ["story", "--count", "0"], ["story", "--base-url", "ftp://x"]])
def test_invite_refuses_bad_input_and_creates_nothing(study, args):
    with pytest.raises(CommandError):
        call_command("invite", *args, stdout=io.StringIO())
    assert not Rater.objects.exists()


def test_tokens_carry_at_least_128_bits(study):
    call_command("invite", "story", "--count", "2", stdout=io.StringIO())
    for token in Rater.objects.values_list("token", flat=True):
        assert len(token) * 6 >= 128  # URL-safe base64: 6 bits per character


def test_open_link_creates_one_rater_per_prolific_participant_and_resumes(client, study):
    study.open_link_enabled = True
    study.save()
    url = f"/s/{study.open_token}/?PROLIFIC_PID=pp-1&STUDY_ID=st-9&SESSION_ID=se-3"
    first = client.get(url)
    rater = Rater.objects.get()
    assert first.status_code == 302 and first["Location"] == f"/r/{rater.token}/"
    assert (rater.external_id, rater.external_study_id, rater.external_session_id, rater.source) == (
        "pp-1", "st-9", "se-3", Rater.Source.OPEN)
    assert client.get(url)["Location"] == f"/r/{rater.token}/"
    assert Rater.objects.count() == 1


def test_open_link_without_a_participant_id_creates_a_rater_only_on_start(client, study):
    study.open_link_enabled = True
    study.save()
    assert client.get(f"/s/{study.open_token}/").status_code == 200
    assert not Rater.objects.exists()
    response = client.post(f"/s/{study.open_token}/")
    assert response.status_code == 302 and Rater.objects.count() == 1


def test_a_disabled_or_unknown_open_link_is_not_found(client, study):
    assert client.get(f"/s/{study.open_token}/?PROLIFIC_PID=x").status_code == 404
    assert client.get("/s/guess/?PROLIFIC_PID=x").status_code == 404
    assert not Rater.objects.exists()


def test_open_tokens_differ_between_studies(study, meaning_study):
    assert study.open_token != meaning_study.open_token and len(study.open_token) >= 22


# --- researcher pages ---


def test_researcher_pages_require_login(client, study):
    response = client.get("/studies/story/raters/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_another_researcher_cannot_see_or_change_the_study(client, study, other_researcher):
    client.force_login(other_researcher)
    assert client.get("/studies/story/raters/").status_code == 404
    assert client.post("/studies/story/raters/invite/", {"count": 5}).status_code == 404
    assert client.post("/studies/story/raters/open-link/", {"enabled": "1"}).status_code == 404
    victim = Rater.objects.create(study=study)
    assert client.post(f"/studies/story/raters/{victim.pk}/revoke/").status_code == 404
    study.refresh_from_db()
    victim.refresh_from_db()
    assert Rater.objects.count() == 1 and not study.open_link_enabled and victim.revoked_at is None


def test_staff_read_another_study_only_with_the_permission_and_never_change_it(client, study, other_researcher):
    from django.contrib.auth.models import Permission

    other_researcher.is_staff = True
    other_researcher.save()
    client.force_login(other_researcher)
    assert client.get("/studies/story/raters/").status_code == 404  # the raters' tokens: not for staff alone
    other_researcher.user_permissions.add(Permission.objects.get(codename="view_all_studies"))
    assert client.get("/studies/story/raters/").status_code == 200
    assert client.post("/studies/story/raters/invite/", {"count": 2}).status_code == 404
    assert not Rater.objects.exists()


def test_the_owner_creates_links_sees_them_and_revokes_one(client, study, researcher):
    client.force_login(researcher)
    response = client.post("/studies/story/raters/invite/", {"count": 2}, follow=True)
    html = response.content.decode()
    raters = list(Rater.objects.all())
    assert len(raters) == 2
    for rater in raters:
        assert f"http://testserver/r/{rater.token}/" in html
    client.post(f"/studies/story/raters/{raters[0].pk}/revoke/")
    raters[0].refresh_from_db()
    assert raters[0].revoked_at is not None
    assert client.get(f"/r/{raters[0].token}/").status_code == 410
    assert client.get(f"/r/{raters[1].token}/").status_code == 200


def test_the_owner_enables_the_open_link_and_sees_the_prolific_form(client, study, researcher):
    client.force_login(researcher)
    client.post("/studies/story/raters/open-link/", {"enabled": "1"})
    study.refresh_from_db()
    assert study.open_link_enabled
    html = client.get("/studies/story/raters/").content.decode()
    assert f"/s/{study.open_token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}" in html


def test_rater_stats_page_lists_progress(client, study, researcher):
    rater = Rater.objects.create(study=study, external_id="teacher-1")
    client.get(f"/r/{rater.token}/")
    client.force_login(researcher)
    html = client.get("/studies/story/raters/").content.decode()
    assert "teacher-1" in html and "in progress" in html


def test_a_draft_study_can_have_links_before_it_opens(client, study, researcher):
    study.status = Study.Status.DRAFT
    study.save()
    call_command("invite", "story", stdout=io.StringIO())
    rater = Rater.objects.get()
    assert client.get(f"/r/{rater.token}/").status_code == 403
    open_study(study)
    assert client.get(f"/r/{rater.token}/").status_code == 200
    assert Assignment.objects.filter(rater=rater).exists()


def test_admin_actions_create_links_and_revoke_them(client, study, researcher):
    researcher.is_staff = researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    client.post("/admin/annotations/study/", {"action": "create_invitations", "_selected_action": [study.pk]})
    assert Rater.objects.filter(study=study, source=Rater.Source.INVITED).count() == 10
    chosen = list(Rater.objects.values_list("pk", flat=True)[:3])
    client.post("/admin/annotations/rater/", {"action": "revoke_links", "_selected_action": chosen})
    assert Rater.objects.filter(revoked_at__isnull=False).count() == 3
    assert "/studies/story/raters/" in client.get(f"/admin/annotations/study/{study.pk}/change/").content.decode()


def test_the_per_study_rater_cap_holds_for_the_page_the_admin_and_the_command(client, django_user_model, study,
                                                                             settings):
    # One rule in the service (annotations.services.invitations_create), so every caller stops at the cap.
    settings.RATERS_PER_STUDY_MAX = Rater.objects.filter(study=study).count() + 2
    client.force_login(study.owner)
    response = client.post("/studies/story/raters/invite/", {"count": 3}, follow=True)
    assert "RATERS_PER_STUDY_MAX" in response.content.decode() and "No links were created" in response.content.decode()
    assert Rater.objects.filter(study=study).count() == settings.RATERS_PER_STUDY_MAX - 2
    with pytest.raises(CommandError, match="RATERS_PER_STUDY_MAX"):
        call_command("invite", "story", "--count", "3", stdout=io.StringIO(), stderr=io.StringIO())
    admin = django_user_model.objects.create_superuser("root", password="pw-not-used-1")
    client.force_login(admin)
    response = client.post("/admin/annotations/study/", {"action": "create_invitations", "_selected_action": [study.pk]},
                           follow=True)
    assert "RATERS_PER_STUDY_MAX" in response.content.decode()
    assert Rater.objects.filter(study=study).count() == settings.RATERS_PER_STUDY_MAX - 2
    # Up to the cap is fine.
    out = io.StringIO()
    call_command("invite", "story", "--count", "2", stdout=out, stderr=io.StringIO())
    assert len(out.getvalue().splitlines()) == 2
    assert Rater.objects.filter(study=study).count() == settings.RATERS_PER_STUDY_MAX


@pytest.mark.parametrize(("query", "expected"), [
    ("participantId=cr-7&assignmentId=a1", "cr-7"),  # CloudResearch Connect
    ("id=sona-42", "sona-42"),  # SONA's %SURVEY_CODE%
    ("PID=gen-3", "gen-3"),  # any other panel
    ("PROLIFIC_PID=pp-9&id=other", "pp-9"),  # Prolific's name first
])
def test_other_panels_enter_through_the_open_link_with_their_own_id_parameter(client, study, query, expected):
    study.open_link_enabled = True
    study.save()
    assert client.get(f"/s/{study.open_token}/?{query}").status_code == 302
    assert list(Rater.objects.values_list("external_id", flat=True)) == [expected]


def test_the_completion_redirect_can_name_the_participant_for_a_panel_that_wants_its_id_back(client, study):
    from tests.support.raterkit import answer

    study.open_link_enabled = True
    study.items_per_rater = 1
    study.completion_redirect_url = "https://uni.sona-systems.com/webstudy_credit.aspx?experiment_id=1&survey_code={pid}"
    study.save()
    client.get(f"/s/{study.open_token}/?id=sona-42")
    rater = Rater.objects.get()
    html = ""
    for _ in range(5):  # the item's pages, until the finished page
        html = answer(client, rater).content.decode()
        if 'id="completion-code"' in html:
            break
    assert "survey_code=sona-42" in html
