from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from llmjudge.management.commands.run_judge import summary_lines
from llmjudge.models import JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.selectors import run_progress


class Command(BaseCommand):
    help = "Pause, resume, cancel or show a judge run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run", type=int)
        parser.add_argument("action", choices=("status", "pause", "resume", "cancel"))
        parser.add_argument("--retry-errors", action="store_true", help="with resume: ask errors again too")

    def handle(self, *args: Any, **o: Any) -> None:
        run = JudgeRun.objects.filter(pk=o["run"]).first()
        if run is None:
            raise CommandError(f"no judge run {o['run']}")
        action = o["action"]
        try:
            if action == "pause" and not judging.judge_run_pause(run=run):
                raise CommandError(f"run {run.pk} is {run.status}: only a pending or running run can be paused")
            if action == "cancel" and not judging.judge_run_cancel(run=run):
                raise CommandError(f"run {run.pk} is {run.status}: it has already ended")
            if action == "resume":
                todo = judging.judge_run_resume(run=run, retry_errors=o["retry_errors"])
                self.stdout.write(
                    f"resumed run {run.pk}: {todo} answer{pluralize(todo)} to ask (item × question × sample)")
        except judging.RunError as exc:
            raise CommandError(str(exc)) from None
        run.refresh_from_db()
        for line in summary_lines(run_progress(run=run)):
            self.stdout.write(line)
