from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.models import Study
from evalhub.imports.meta_study import meta_study_create


class Command(BaseCommand):
    help = (
        "Create a meta-evaluation study (paper appendix C.3.2) from one judge run's answers to one question: "
        "raters see each answer as coming from another rater and say whether they agree."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="slug of the new study")
        parser.add_argument("--run", type=int, required=True, help="JudgeRun id")
        parser.add_argument("--question", required=True, help="question key, e.g. likability")
        parser.add_argument("--limit", type=int, default=None, help="at most this many answers")

    def handle(self, *args: Any, **options: Any) -> None:
        if Study.objects.filter(slug=options["slug"]).exists():
            raise CommandError(f"a study with slug {options['slug']!r} already exists")
        try:
            study = meta_study_create(slug=options["slug"], run_id=options["run"], question_key=options["question"],
                                      limit=options["limit"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        n = study.items.count()
        self.stdout.write(f"created meta-evaluation study {study.slug} with {n} item{pluralize(n)} (draft)")
