"""A full snapshot of the database: every row of every table, so "nothing changed" means exactly that."""
from __future__ import annotations

from django.apps import apps

# Sessions change on every logged-in request (messages, login); they hold no study data.
SKIPPED = {"sessions.session"}


def database_snapshot() -> dict[str, list[tuple]]:
    return {
        model._meta.label_lower: list(model.objects.order_by("pk").values_list())
        for model in apps.get_models()
        if model._meta.label_lower not in SKIPPED
    }
