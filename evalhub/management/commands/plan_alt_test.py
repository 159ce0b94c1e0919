from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from evalhub.analysis.planning.alt_test_plan import StudyPlan, alt_test_plan_for_study, chance_error
from evalhub.management.checks import COMMAND_CHECKS
from evalhub.stats.alt_test import SCORINGS
from evalhub.stats.alt_test_power import DEFAULT_REPLICATES, Power


class Command(BaseCommand):
    requires_system_checks = COMMAND_CHECKS
    help = ("Estimate by a seeded simulation how likely the alternative annotator test is to pass, and the items "
            "per rater and the raters needed for 80 %% power (docs/alt-test.md, Planning).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--raters", type=int, default=None,
                            help="Human raters in one test, i.e. in one group when the study has groups (default: "
                                 "the pilot's, or 10).")
        parser.add_argument("--items-per-rater", type=int, default=None,
                            help="Ratings (one item on one question) each rater gives, within one group when the "
                                 "study has groups (default: the pilot's median, or 50).")
        parser.add_argument("--raters-per-item", type=int, default=None,
                            help="Human raters per item, at least 2 (default: the pilot's median, or the study's).")
        parser.add_argument("--human-quality", type=float, default=None,
                            help="accuracy: probability a human reports the true category; neg_rmse (negative "
                                 "RMSE): a human's noise sd in scale points (default: the pilot's, or 0.8 / 1.0).")
        parser.add_argument("--judge-quality", type=float, default=None,
                            help="The judge's, on the same terms as --human-quality (default: the pilot's, or a "
                                 "human's).")
        parser.add_argument("--epsilon", type=float, default=None, help="Default: the study's epsilon.")
        parser.add_argument("--scoring", choices=list(SCORINGS), default=None,
                            help="accuracy, or neg_rmse (negative RMSE); default: accuracy for nominal studies, "
                                 "neg_rmse for Likert.")
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


def _power(p: Power, per_rater: str) -> str:
    d = p.design
    return (f"{100 * p.power:.0f} % ({chance_error(p, 1)}) with "
            f"{d.raters} raters x {d.items_per_rater} {per_rater}, {d.raters_per_item} raters per item "
            f"({d.n_items} (item, question) pairs)")


def plan_lines(result: StudyPlan) -> list[str]:
    """The plan in words, every number with its unit; no internal key (issue 25 review, U4)."""
    plan, unit = result.plan, result.per_rater
    d = plan.stated.design
    stated = f"no verdict with {d.raters} raters x {d.items_per_rater} {unit}, {d.raters_per_item} raters per " \
             f"item: {plan.no_verdict}" if plan.no_verdict else _power(plan.stated, unit)
    items = _power(plan.items_needed, unit) if plan.items_needed else \
        f"not reached in the grid ({result.items_grid}) with {d.raters} raters; {result.best_items_text}"
    raters = _power(plan.raters_needed, unit) if plan.raters_needed else \
        f"not reached in the grid ({result.raters_grid}) at {d.items_per_rater} {unit}; {result.best_raters_text}"
    return [
        f"model: {result.model_text}",
        *([f"noise sd: {result.noise_text}"] if result.noise_text else []),
        *([f"scope: {result.scope}"] if result.scope else []),
        *result.sources,
        *([result.pilot_caveat] if result.pilot_caveat else []),
        f"chance to pass: {stated}",
        f"{unit} for an 80 % chance to pass: {items}",
        f"raters for an 80 % chance to pass: {raters}",
        f"grid searched: {unit} {result.items_grid}; raters {result.raters_grid}",
        f"{plan.stated.replicates} simulated replicates per design point, seed {result.seed}, {plan.seconds:.2f} s",
        *(f"note: {note}" for note in result.other_notes),
    ]
