from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.importing.services import ImportFileError
from annotations.management.lookups import owner_or_error
from evalhub.imports.annotator_json import AUTO_QUESTIONS, annotations_import


class Command(BaseCommand):
    help = (
        "Import annotator-keyed JSON: --humans {annotator: {instance: label}} and --llm {llm: {instance: label}} "
        "(one imported pool per LLM). --create makes the study from the files. All or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--humans", type=Path, required=True, help="{annotator: {instance: label}}")
        parser.add_argument("--llm", type=Path, help="{llm_name: {instance: label or [sample labels]}}")
        parser.add_argument("--create", action="store_true",
                            help="create the study, its scale (from the labels) and its items (ids only)")
        parser.add_argument("--questions", default="",
                            help=f"with --create: question keys, comma-separated, or '{AUTO_QUESTIONS}' (the "
                                 "__<question> suffixes of the ids); default one question, 'label'")
        parser.add_argument("--owner", help="with --create: username of the owning researcher")

    def handle(self, *args: Any, **options: Any) -> None:
        owner = owner_or_error(options["owner"])
        questions = [q.strip() for q in options["questions"].split(",") if q.strip()]
        try:
            study, result = annotations_import(
                slug=options["study"], humans=options["humans"], llm=options["llm"], create=options["create"],
                questions=questions, owner=owner,
            )
        except ImportFileError as exc:
            message = str(exc)
            raise CommandError(message if "nothing was imported" in message else f"{message}; nothing was imported"
                               ) from None
        n = study.questions.count()
        made = f"created study {study.slug} ({study.kind}, {n} question{pluralize(n)}); " if options["create"] else ""
        self.stdout.write(f"{made}{result.ratings_summary(study.slug)}")
