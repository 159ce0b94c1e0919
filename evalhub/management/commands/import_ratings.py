from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.importing.services import ImportFileError
from annotations.management.lookups import study_or_error
from evalhub.imports.ratings import ratings_import


class Command(BaseCommand):
    help = "Import ratings in long format (item, group, question, pool, rater, score[, rationale]). All or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("file", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        try:
            result = ratings_import(study=study, path=options["file"])
        except ImportFileError as exc:
            raise CommandError(f"{options['file']}: {exc}; nothing was imported") from None
        self.stdout.write(result.ratings_summary(study.slug))
