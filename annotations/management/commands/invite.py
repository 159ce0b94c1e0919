from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from annotations.management.lookups import study_or_error
from annotations.models import Study
from annotations.services import InvitationLimitError, invitations_create


class Command(BaseCommand):
    help = "Create single-use invitation links for a study and print one URL per line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--count", type=int, default=1, help="how many links (default 1)")
        parser.add_argument("--base-url", default=None, help="link base (default: PUBLIC_BASE_URL)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        if not 1 <= options["count"] <= 100_000:
            raise CommandError("--count must be between 1 and 100000")
        base = (options["base_url"] or settings.PUBLIC_BASE_URL).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise CommandError(f"--base-url {base!r} must start with http:// or https://")
        if study.status != Study.Status.OPEN:
            # The links are still printed (a researcher may prepare them before opening), but they answer
            # "not open" until the study opens.
            self.stderr.write(
                f"warning: study {study.slug} is {study.status}: these links will not work until you run "
                f"`.venv/bin/python manage.py open_study {study.slug}` or open it on the study's page"
            )
        try:
            raters = invitations_create(study=study, count=options["count"])
        except InvitationLimitError as exc:
            raise CommandError(f"{exc}; nothing was created") from None
        for rater in raters:
            self.stdout.write(base + reverse("annotations:rate", args=[rater.token]))
