"""Researcher pages feel like one product: the log-in page in the house style, EvalHub's home after log-in (staff
too, not the Django admin), a log-out link on every researcher page, and none for anonymous visitors."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_the_login_page_uses_the_house_style(client):
    html = client.get("/accounts/login/").content.decode()
    assert "The researcher pages' shared look" not in html  # a template comment, never sent
    assert 'class="stacked"' in html and 'class="primary"' in html and "button.primary" in html


@pytest.mark.parametrize("staff", [False, True])
def test_logging_in_lands_on_evalhubs_home(client, django_user_model, staff):
    django_user_model.objects.create_user(username="res", password="pw-res-12345", is_staff=staff,
                                          is_superuser=staff)
    response = client.post("/accounts/login/", {"username": "res", "password": "pw-res-12345"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert "Your studies" in client.get("/").content.decode()


def test_every_researcher_page_has_a_log_out_link_that_logs_out(client, researcher, story_study):
    client.force_login(researcher)
    for url in ("/", f"/studies/{story_study.slug}/home/", f"/studies/{story_study.slug}/raters/",
                f"/studies/{story_study.slug}/prolific/", "/llm/"):
        html = client.get(url).content.decode()
        assert 'action="/accounts/logout/"' in html and 'id="logout"' in html, url
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get(f"/studies/{story_study.slug}/home/")["Location"].startswith("/accounts/login/")


def test_anonymous_visitors_see_no_log_out_link(client):
    assert 'id="logout"' not in client.get("/").content.decode()
    assert 'id="logout"' not in client.get("/accounts/login/").content.decode()
