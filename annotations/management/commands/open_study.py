from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.lifecycle import LifecycleError, study_open
from annotations.management.lookups import study_or_error
from annotations.models import Study


class Command(BaseCommand):
    # close_study is this command with the other service.
    help = "Open a draft or closed study to raters (its invitation and open links start working)."

    @staticmethod
    def change(*, study: Study) -> Study:
        return study_open(study=study)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        try:
            self.change(study=study)
        except LifecycleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"study {study.slug} is now {study.status}")
