"""The lookups every management command makes, each with the one-line error a command prints."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import CommandError

from annotations.models import Study


def study_or_error(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"no study {slug!r}")
    return study


def owner_or_error(username: str | None) -> User | None:
    """The user named by ``--owner``, or None when the option is not given."""
    if not username:
        return None
    owner = get_user_model().objects.filter(username=username).first()
    if owner is None:
        raise CommandError(f"no user named {username!r}")
    return owner
