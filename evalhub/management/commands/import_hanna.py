from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from evalhub.imports.datasets import DatasetError, hanna_import


class Command(BaseCommand):
    help = ("Create a study from HANNA's hanna_metric_scores_llm.csv: 1056 stories x 3 human raters x 6 criteria, "
            "plus the 5 LLMs (means of 3 samples) for the chosen Eval-Prompts. All or nothing.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--study", default="hanna", help="Slug of the study to create (default: hanna).")
        parser.add_argument("--prompts", default="1",
                            help="Comma-separated HANNA Eval-Prompts whose LLM ratings to import, or 'none'.")

    def handle(self, *args: Any, **options: Any) -> None:
        raw = options["prompts"].strip().lower()
        try:
            prompts = () if raw == "none" else tuple(int(p) for p in raw.split(",") if p.strip())
        except ValueError:
            raise CommandError(f"--prompts must be numbers 1-4 separated by commas, or 'none', not {raw!r}") from None
        try:
            study = hanna_import(path=options["path"], slug=options["study"], prompts=prompts)
        except DatasetError as exc:
            raise CommandError(f"{options['path']}: {exc}; nothing was imported") from None
        self.stdout.write(f"created study {study.slug}: {study.items.count()} items, "
                          f"{study.judge_runs.count()} LLM pool{pluralize(study.judge_runs.count())}")
