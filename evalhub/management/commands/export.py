from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from evalhub.analysis import study_analysis
from evalhub.imports.exports import (
    TABLE_COLUMNS,
    csv_lines,
    demographic_rows,
    empty_tables_note,
    rating_rows,
    table_rows,
)
from evalhub.management.checks import COMMAND_CHECKS
from evalhub.management.commands.analyze import add_filter_arguments, options_from


class Command(BaseCommand):
    requires_system_checks = COMMAND_CHECKS
    help = ("CSV export of a study: every rating in long form, the analysis tables, or the raters' demographics "
            "(one row per rater with their external ids). Standard output by default.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--what", choices=["ratings", "tables", "demographics"], required=True)
        parser.add_argument("--table", choices=list(TABLE_COLUMNS),
                            help="Only this analysis table (its own columns); default: all, with a `table` column.")
        parser.add_argument("--out", type=Path, help="Write to this file instead of standard output.")
        add_filter_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        if options["what"] == "ratings":
            rows = rating_rows([study])
        elif options["what"] == "demographics":
            rows = demographic_rows(study)
        else:
            result = study_analysis(study=study, options=options_from(options))
            rows = table_rows(result, options["table"])
            if note := empty_tables_note(result, options["table"]):
                self.stderr.write(note)
        out = options["out"]
        if out is not None and not out.parent.is_dir():
            raise CommandError(f"no such directory: {out.parent}")
        if out is None:
            for line in csv_lines(rows):
                self.stdout.write(line, ending="")
            return
        with out.open("w", newline="", encoding="utf-8") as handle:
            for line in csv_lines(rows):
                handle.write(line)
        self.stderr.write(f"wrote {out}")
