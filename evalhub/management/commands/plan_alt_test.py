from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from evalhub.analysis.planning.alt_test_plan import StudyPlan, alt_test_plan_for_study
from evalhub.management.checks import COMMAND_CHECKS
from evalhub.stats.alt_test import SCORINGS
from evalhub.stats.alt_test_power import DEFAULT_REPLICATES, ITEMS_GRID, RATERS_GRID, Power


class Command(BaseCommand):
    requires_system_checks = COMMAND_CHECKS
    help = ("Estimate by a seeded simulation how likely the alternative annotator test is to pass, and the items "
            "per rater and the raters needed for 80 %% power (docs/alt-test.md, Planning).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--raters", type=int, default=None, help="Human raters (default: the pilot's, or 10).")
        parser.add_argument("--items-per-rater", type=int, default=None,
                            help="Items each rater rates (default: the pilot's median, or 50).")
        parser.add_argument("--raters-per-item", type=int, default=None,
                            help="Human raters per item, at least 2 (default: the pilot's median, or the study's).")
        parser.add_argument("--human-quality", type=float, default=None,
                            help="accuracy: probability a human reports the true category; neg_rmse: a human's noise "
                                 "sd in scale points (default: the pilot's, or 0.8 / 1.0).")
        parser.add_argument("--judge-quality", type=float, default=None,
                            help="The judge's, on the same terms as --human-quality (default: the pilot's, or a "
                                 "human's).")
        parser.add_argument("--epsilon", type=float, default=None, help="Default: the study's epsilon.")
        parser.add_argument("--scoring", choices=list(SCORINGS), default=None,
                            help="Default: accuracy for nominal studies, neg_rmse for Likert.")
        parser.add_argument("--replicates", type=int, default=DEFAULT_REPLICATES)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--from-pilot", action="store_true",
                            help="Estimate the design and qualities from the study's existing ratings.")
        parser.add_argument("--pool", default=None,
                            help="With --from-pilot: the LLM pool measured (default: the first).")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        try:
            result = alt_test_plan_for_study(
                study=study, raters=options["raters"], items_per_rater=options["items_per_rater"],
                raters_per_item=options["raters_per_item"], human_quality=options["human_quality"],
                judge_quality=options["judge_quality"], epsilon=options["epsilon"], scoring=options["scoring"],
                replicates=options["replicates"], seed=options["seed"], from_pilot=options["from_pilot"],
                pool=options["pool"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n".join(plan_lines(result)))


def _power(p: Power) -> str:
    d = p.design
    return (f"{p.power:.0%} ± {p.se:.1%} with {d.raters} raters x {d.items_per_rater} ratings per rater, "
            f"{d.raters_per_item} raters per item ({d.n_items} items)")


def plan_lines(result: StudyPlan) -> list[str]:
    plan, model = result.plan, result.plan.model
    quality = "accuracy" if model.scoring == "accuracy" else "noise sd"
    lines = [
        f"model: {model.scoring}, {model.levels} values; human {quality} {model.human:.3g}, "
        f"judge {quality} {model.judge:.3g}; epsilon {plan.epsilon}",
        *result.sources,
        f"power: {_power(plan.stated)}",
        "ratings per rater for 80 %: " + (_power(plan.items_needed) if plan.items_needed else "not reached"),
        "raters for 80 %: " + (_power(plan.raters_needed) if plan.raters_needed else "not reached"),
        f"grid: ratings per rater {', '.join(map(str, ITEMS_GRID))}; raters {', '.join(map(str, RATERS_GRID))}",
        f"{plan.stated.replicates} replicates per design point, seed {result.seed}, {plan.seconds:.2f} s",
        *(f"note: {note}" for note in plan.notes),
    ]
    return lines
