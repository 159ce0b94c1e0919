from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.management.lookups import owner_or_error, study_or_error
from annotations.prolific.publishing import PublishError, prolific_publish, publish_terms
from annotations.prolific.records import ProlificError
from annotations.prolific.tokens import TokenRefused


class Command(BaseCommand):
    help = ("Publish an open study on Prolific: its open link with Prolific's placeholders, the places its design "
            "needs, the study's completion code, the reward and time (from the pilot's median when there is one).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--token-env", required=True, help="the environment variable holding the Prolific token "
                            "(one PROLIFIC_TOKEN_VARIABLES grants to the publishing user)")
        parser.add_argument("--reward-cents", type=int, required=True, help="reward per participant, in cents")
        parser.add_argument("--minutes", type=int, required=True, help="estimated completion time in minutes")
        parser.add_argument("--user", help="who publishes (the token's grant is checked for them; default: the owner)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        user = owner_or_error(options["user"]) or study.owner
        try:
            terms = publish_terms(study=study, reward_cents=options["reward_cents"], minutes=options["minutes"])
            link = prolific_publish(study=study, token_env=options["token_env"], reward_cents=options["reward_cents"],
                                    minutes=options["minutes"], base_url=settings.PUBLIC_BASE_URL, user=user)
        except (PublishError, TokenRefused) as exc:
            raise CommandError(str(exc)) from None
        except ProlificError as exc:
            raise CommandError(f"Prolific: {exc.message}") from None
        n = terms.pilot_raters
        source = f"the pilot's median ({n} rater{pluralize(n)})" if terms.from_pilot else "your numbers"
        self.stdout.write(f"published {study.slug} on Prolific as {link.prolific_id} ({link.status}): "
                          f"{link.places} places, {link.minutes} min, {link.reward_cents} cents from {source}; "
                          f"completion code {link.completion_code}")
