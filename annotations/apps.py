from __future__ import annotations

from django.apps import AppConfig


class AnnotationsConfig(AppConfig):
    name = "annotations"
    verbose_name = "Studies and human ratings"
