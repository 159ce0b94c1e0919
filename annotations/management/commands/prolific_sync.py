from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from annotations.models import ProlificStudy
from annotations.prolific.following import prolific_sync
from annotations.prolific.records import ProlificError
from annotations.prolific.tokens import TokenRefused


class Command(BaseCommand):
    help = "Poll a published study's Prolific submissions once: free seats, approve by rule, list the rest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        link = ProlificStudy.objects.filter(study=study, published_at__isnull=False).first()
        if link is None:
            raise CommandError(f"study {study.slug!r} is not published on Prolific")
        try:
            report = prolific_sync(link=link)
        except TokenRefused as exc:
            raise CommandError(str(exc)) from None
        except ProlificError as exc:
            raise CommandError(f"Prolific: {exc.message}") from None
        self.stdout.write(f"{study.slug}: {report.summary()}")
        for submission_id in report.to_review:
            self.stdout.write(f"  to review (reject on the study page or approve on Prolific): {submission_id}")
