"""The signed-in user of a gated page (annotations.guards.signed_in): the User itself, or a 403 if a gate is missing."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

from annotations.guards.signed_in import signed_in_user


@pytest.mark.django_db
def test_a_signed_in_user_is_handed_back_as_is():
    user = User.objects.create_user("owner")
    assert signed_in_user(user) is user


def test_an_anonymous_user_is_refused_rather_than_written_as_an_owner():
    with pytest.raises(PermissionDenied):
        signed_in_user(AnonymousUser())
