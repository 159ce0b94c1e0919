from __future__ import annotations

from django.apps import AppConfig


class LLMJudgeConfig(AppConfig):
    name = "llmjudge"
    verbose_name = "LLM judges"
