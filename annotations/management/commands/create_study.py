from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.management.lookups import owner_or_error
from annotations.studies import StudySpecError, protocol_templates, study_create, study_create_from_template


class Command(BaseCommand):
    help = "Create a study from a protocol template (--template) or a JSON specification (--file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--template", choices=sorted(protocol_templates()))
        source.add_argument("--file", type=Path, help="JSON object shaped like one entry of the protocol file")
        parser.add_argument("--owner", help="username of the owning researcher")

    def handle(self, *args: Any, **options: Any) -> None:
        owner = owner_or_error(options["owner"])
        try:
            if options["template"]:
                study = study_create_from_template(slug=options["slug"], template=options["template"], owner=owner)
            else:
                path: Path = options["file"]
                try:
                    spec = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise CommandError(f"cannot read {path}: {exc}") from None
                study = study_create(slug=options["slug"], spec=spec, owner=owner)
        except StudySpecError as exc:
            raise CommandError(str(exc)) from None
        n = study.questions.count()
        self.stdout.write(f"created study {study.slug} with {n} question{pluralize(n)}")
