from __future__ import annotations

import json
import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.management.lookups import study_or_error
from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.result_json import analysis_json
from evalhub.management.checks import COMMAND_CHECKS
from evalhub.stats.alt_test import SCORINGS


def add_filter_arguments(parser: CommandParser) -> None:
    parser.add_argument("--run", type=int, action="append", dest="runs", help="Judge run id (repeatable).")
    parser.add_argument("--question", action="append", dest="questions", help="Question key (repeatable).")
    parser.add_argument("--group", action="append", dest="groups",
                        help='Item group (repeatable; default: every group, each on its own). "(all)" is the '
                             "pseudo-group that pools every group (docs/analysis.md, Pooled cells).")
    parser.add_argument("--welch-unit", choices=["items", "ratings"], default="items",
                        help="Welch over per-item means (default, as the paper) or all individual ratings "
                             "(treated as independent though ratings of one item or rater are not: optimistic p).")
    parser.add_argument("--n-boot", type=int, default=1000,
                        help="Bootstrap replicates for the 95%% CIs of alpha, Cohen's kappa and Fleiss' kappa "
                             "(default: 1000).")
    parser.add_argument("--seed", type=int, default=0,
                        help="Seed of those bootstraps (default: 0; the same seed gives the same intervals).")
    parser.add_argument("--alt-epsilon", type=float, default=None,
                        help="Alternative annotator test: epsilon, strictly between 0 and 1 (default: the study's; "
                             "the paper's guidance: 0.2 experts, 0.15 skilled annotators, 0.1 crowd workers).")
    parser.add_argument("--alt-scoring", choices=list(SCORINGS), default=None,
                        help="Alternative annotator test: scoring (default: accuracy for nominal data, "
                             "neg_rmse for Likert scores).")


def options_from(options: dict[str, Any]) -> AnalysisOptions:
    if options["n_boot"] < 1:
        raise CommandError("--n-boot must be at least 1")
    epsilon = options.get("alt_epsilon")
    if epsilon is not None and not (math.isfinite(epsilon) and 0.0 < epsilon < 1.0):
        raise CommandError(f"--alt-epsilon must be strictly between 0 and 1, got {epsilon}")
    return AnalysisOptions(
        runs=tuple(options["runs"]) if options["runs"] else None,
        questions=tuple(options["questions"]) if options["questions"] else None,
        groups=tuple(options["groups"]) if options["groups"] else None,
        welch_unit="ratings" if options["welch_unit"] == "ratings" else "item means",
        n_boot=options["n_boot"],
        seed=options["seed"],
        alt_epsilon=epsilon,
        alt_scoring=options.get("alt_scoring"),
    )


class Command(BaseCommand):
    requires_system_checks = COMMAND_CHECKS
    help = ("A study's analysis as JSON, plain text or CSV: agreement (alpha, ICC, Cohen's and Fleiss' kappa, "
            "confusion matrices), Kendall's tau, Welch's t-test, the human ceiling, the alternative annotator "
            "test and prediction-powered inference (PPI).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("--format", choices=["json", "table", "csv"], default="table",
                            help="table: plain-text tables (default); json: every value with its notes; csv: "
                                 "every table's rows.")
        add_filter_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_or_error(options["study"])
        result = study_analysis(study=study, options=options_from(options))
        if options["format"] == "json":
            self.stdout.write(json.dumps(analysis_json(result), indent=2, allow_nan=False))
        elif options["format"] == "csv":
            from evalhub.imports.exports import csv_lines, table_rows  # on use: JSON needs neither (STYLE 15)

            for line in csv_lines(table_rows(result)):
                self.stdout.write(line, ending="")
        else:
            from evalhub.analysis.text_report import text_report

            self.stdout.write(text_report(result), ending="")
