"""The Prolific token rule: the judge keys' allow-list with scopes; only the variable's name is stored."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from annotations.prolific.tokens import TokenRefused, granted_token_variables, prolific_client, token_variable_check


@pytest.fixture
def grants(settings):
    settings.PROLIFIC_TOKEN_VARIABLES = ["PROLIFIC_TOKEN=superusers", "LAB_PROLIFIC=group:lab-2",
                                         "OWNER_PROLIFIC=user:owner", "SHARED_PROLIFIC", "TEAM_PROLIFIC_*=user:owner",
                                         "SECRET_KEY", "DATABASE_URL"]


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "allowed"), [
    ("OWNER_PROLIFIC", True),  # granted to the user by name
    ("SHARED_PROLIFIC", True),  # an entry without scopes: everyone
    ("TEAM_PROLIFIC_A", True),  # a pattern
    ("PROLIFIC_TOKEN", False),  # superusers only
    ("LAB_PROLIFIC", False),  # another group's
    ("UNLISTED", False),
    ("SECRET_KEY", False),  # listed, but a deployment secret
    ("DATABASE_URL", False),
    ("", False),
])
def test_a_researcher_may_name_only_a_variable_granted_to_them(grants, researcher, name, allowed):
    if allowed:
        token_variable_check(name=name, user=researcher)
    else:
        with pytest.raises(TokenRefused):
            token_variable_check(name=name, user=researcher)


@pytest.mark.django_db
def test_groups_and_superusers_get_their_grants_and_the_page_offers_plain_names_only(grants, researcher,
                                                                                    django_user_model):
    researcher.groups.add(Group.objects.create(name="lab-2"))
    assert granted_token_variables(user=researcher) == ["LAB_PROLIFIC", "OWNER_PROLIFIC", "SHARED_PROLIFIC"]
    boss = django_user_model.objects.create_superuser(username="boss", password="pw-boss-123")
    assert granted_token_variables(user=boss) == ["PROLIFIC_TOKEN", "SHARED_PROLIFIC"]


def test_a_variable_without_a_value_is_refused_and_the_message_holds_no_value(monkeypatch, settings):
    monkeypatch.delenv("SHARED_PROLIFIC", raising=False)
    with pytest.raises(TokenRefused, match="SHARED_PROLIFIC holds no Prolific token"):
        prolific_client(token_env="SHARED_PROLIFIC")
    monkeypatch.setenv("SHARED_PROLIFIC", "tok-value-123")
    client = prolific_client(token_env="SHARED_PROLIFIC")
    assert "tok-value-123" not in repr(client) and "tok-value-123" not in repr(vars(client))
