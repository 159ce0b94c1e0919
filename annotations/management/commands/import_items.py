from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.importing.services import ImportFileError, items_import
from annotations.management.lookups import study_or_error


class Command(BaseCommand):
    help = "Import items from CSV or JSONL (columns id, group and the study's item fields). All or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("file", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        try:
            result = items_import(study=study, path=options["file"])
        except ImportFileError as exc:
            raise CommandError(f"{options['file']}: {exc}; nothing was imported") from None
        self.stdout.write(f"imported {result.created_items} item{pluralize(result.created_items)} into {study.slug}")
