from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.models import Study
from llmjudge.models import JudgeRun
from llmjudge.runs.reparse import study_reparse


class Command(BaseCommand):
    help = "Re-parse the stored judge answers of a study with the current parser (calls no LLM)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("--run", type=int, help="only this judge run of the study")
        parser.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")

    def handle(self, *args: Any, **o: Any) -> None:
        study = Study.objects.filter(slug=o["study"]).first()
        if study is None:
            raise CommandError(f"no study {o['study']!r}")
        run = None
        if o["run"] is not None:
            run = JudgeRun.objects.filter(pk=o["run"]).select_related("study", "judge").first()
            if run is None:
                raise CommandError(f"no judge run {o['run']}")
        try:
            report = study_reparse(study=study, run=run, dry_run=o["dry_run"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        would = "would change" if report.dry_run else "changed"
        self.stdout.write(f"re-read {report.n_read} answer{pluralize(report.n_read)}; {would} {report.n_changed}"
                          + (" (dry run: nothing written)" if report.dry_run else ""))
        for transition, n in sorted(report.transitions.items()):
            self.stdout.write(f"  {transition}: {n}")
        for e in report.examples:
            self.stdout.write(f"  e.g. run {e.run_id} item {e.item} / {e.question}: {e.old} -> {e.new}")
        if report.unparseable:
            reasons = ", ".join(f"{reason} {n}" for reason, n in report.unparseable.most_common())
            self.stdout.write(f"unparseable {sum(report.unparseable.values())}: {reasons}")
        if report.kept_readings:
            self.stdout.write(f"read by a person (left as read): {report.kept_readings}")
        for reason, n in report.skipped.items():
            self.stdout.write(f"  skipped {n}: {reason}")
