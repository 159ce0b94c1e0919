from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.importing.services import ImportFileError, demographics_import
from annotations.management.lookups import study_or_error


class Command(BaseCommand):
    help = ("Set raters' demographics from CSV or JSONL (column rater = the rater's external id, plus one column "
            "per demographic field). All or nothing.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("file", type=Path)
        parser.add_argument("--replace", action="store_true",
                            help="overwrite demographics a rater already has (rater form or earlier import)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        try:
            result = demographics_import(study=study, path=options["file"], replace=options["replace"])
        except ImportFileError as exc:
            raise CommandError(f"{options['file']}: {exc}; nothing was imported") from None
        self.stdout.write(f"set the demographics of {result.updated_raters} rater{pluralize(result.updated_raters)} "
                          f"in {study.slug} "
                          f"({result.unchanged_raters} already had exactly these)")
