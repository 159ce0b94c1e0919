"""A view whose database is unreachable answers 503 with a friendly "please retry" page."""
from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError

from annotations import views
from tests.support.raterkit import add_story_items, open_study, url_of


@pytest.fixture
def open_rater(rater):
    add_story_items(open_study(rater.study))
    return rater


@pytest.mark.parametrize("error", [OperationalError("server closed the connection"), InterfaceError("closed")])
def test_a_database_error_in_a_rater_page_is_a_friendly_503_asking_to_retry(client, open_rater, monkeypatch, error):
    def down(**kwargs):
        raise error

    monkeypatch.setattr(views.services, "assignment_start", down)
    response = client.post(url_of(open_rater), {"page": "x"})
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    assert "Please try again in a moment" in html
    assert "Your earlier answers are safe" in html
    assert "Traceback" not in html and "server closed" not in html  # nothing internal shown


def test_other_errors_are_not_dressed_up_as_a_retry(client, open_rater, monkeypatch):
    def broken(**kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(views.services, "assignment_start", broken)
    with pytest.raises(ValueError):
        client.get(url_of(open_rater))
