from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from evalhub.imports.datasets import DatasetError, judgebench_import


class Command(BaseCommand):
    help = "Create a study from one JUDGE-BENCH data file (graded metrics; position-indexed human raters)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--study", help="Slug of the study to create (default: the dataset name).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            study = judgebench_import(path=options["path"], slug=options["study"])
        except DatasetError as exc:
            raise CommandError(f"{options['path']}: {exc}; nothing was imported") from None
        self.stdout.write(f"created study {study.slug}: {study.items.count()} items, "
                          f"{study.questions.count()} question{pluralize(study.questions.count())}")
