"""The user behind a page, admin action or API call that only signed-in users reach."""
from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied


def signed_in_user(user: User | AnonymousUser) -> User:
    """``user`` as the User it is behind login_required, the admin or DRF's IsAuthenticated.

    Those gates keep anonymous users out, so the type says so here, once. An anonymous user reaching this
    means a view lost its gate: refused (403) rather than written as an owner.
    """
    if isinstance(user, AnonymousUser):
        raise PermissionDenied("sign in first")
    return user
