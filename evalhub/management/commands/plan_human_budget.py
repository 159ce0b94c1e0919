from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from evalhub.management.checks import COMMAND_CHECKS


class Command(BaseCommand):
    requires_system_checks = COMMAND_CHECKS
    help = ("How many human-rated items per group give a 95 %% interval of width W for each contrast's difference, "
            "with the judge's ratings (PPI++) and without them, from the study's pilot (docs/analysis.md, PPI).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--width", type=float, required=True,
                            help="The target width (high - low) of the difference's 95 %% interval, in scale points.")
        parser.add_argument("--pool", default=None, help="The LLM pool whose ratings help (default: the first).")
        parser.add_argument("--rho", type=float, default=None,
                            help="A stated judge-human correlation instead of the pilot's (spreads: the pilot's).")

    def handle(self, *args: Any, **options: Any) -> None:
        from evalhub.analysis.planning.human_subset import budget_lines, human_budget_plan  # on use: numpy (STYLE 15)

        study = study_or_error(options["study"])
        try:
            budget = human_budget_plan(study=study, width=options["width"], pool=options["pool"], rho=options["rho"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n".join(budget_lines(budget)))
