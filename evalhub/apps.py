from __future__ import annotations

from django.apps import AppConfig


class EvalHubConfig(AppConfig):
    name = "evalhub"
    verbose_name = "EvalHub"
