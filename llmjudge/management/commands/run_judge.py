from __future__ import annotations

import functools
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.template.defaultfilters import pluralize

from annotations.management.lookups import owner_or_error
from annotations.models import Study
from llmjudge.models import Judge, JudgeRun
from llmjudge.runs import lifecycle as judging
from llmjudge.selectors import AmbiguousJudgeName, RunProgress, judge_named, run_progress

ANSWER_UNIT = " (item × question × sample)"  # an answer, in docs/analysis.md's "Words"
_FINAL = (JudgeRun.Status.DONE, JudgeRun.Status.CANCELLED, JudgeRun.Status.FAILED, JudgeRun.Status.PAUSED)


def llm_worker_available(timeout: float = 1.0) -> bool:
    """Whether a Celery worker answers and consumes the `llm` queue.

    The embedded file-system broker cannot broadcast, so there the answer is always no and
    `--wait` does the work itself.
    """
    from django.conf import settings
    from django.utils.module_loading import import_string

    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        return False
    # The project's Celery app, named by the settings: importing it would make llmjudge import evalhub, the
    # layer above it, and django.setup() does not load it (start-up, issue 22).
    app = import_string(settings.EVALHUB_CELERY_APP)
    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception:  # noqa: BLE001 - any broker without remote control means "no worker answers"
        return False
    return any(q.get("name") == "llm" for queues in replies.values() for q in queues or [])


def summary_lines(progress: RunProgress) -> list[str]:
    """The run's figures, each said in words (docs/analysis.md, "Words"): an answer is one item x question x sample
    (a pool's rating is one item x question, made of its samples' answers); a call is one request to the judge's
    server, so retries after an error and re-asks after a refusal make calls exceed answers."""
    preparation = (f", {progress.steps_done} of them preparation calls done of {progress.steps_total} "
                   "(persona characters, panel roles)" if progress.steps_total else "")
    return [
        f"run {progress.run_id}: {progress.status} in {progress.elapsed_seconds:.1f} s",
        f"answers {progress.total} (item × question × sample): ok {progress.ok}  unparseable {progress.unparseable}  "
        f"refused {progress.refused}  errors {progress.failed}  pending {progress.pending}",
        "  refused: answers still refusing after their re-asks; errors: answers that failed after their retries",
        f"calls {progress.calls}: requests sent to the judge's server, retries and re-asks after a refusal included"
        + preparation,
        f"tokens {progress.tokens_prompt} in / {progress.tokens_completion} out, "
        f"estimated cost ${progress.cost_usd:.4f}",
    ] + ([f"error: {progress.error}"] if progress.error else [])


class Command(BaseCommand):
    help = "Start a judge run on a study (work goes to the `llm` queue); --wait blocks and prints the summary."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study")
        parser.add_argument("judge")
        parser.add_argument("--wait", action="store_true", help="block until done; work in-process if no worker")
        parser.add_argument("--inline", action="store_true", help="do the work in this process (implies --wait)")
        parser.add_argument("--resume", type=int, metavar="RUN", help="resume run RUN instead of starting one")
        parser.add_argument("--retry-errors", action="store_true", help="with --resume: ask errors again too")
        parser.add_argument("--temperature", type=float, help="override the judge's temperature for this run")
        parser.add_argument("--variant", help="override the judge's variant for this run")
        parser.add_argument("--swap-share", type=float, metavar="SHARE",
                            help="pairwise studies: re-ask this share (0-1) of the items with A and B swapped, "
                                 "to measure position bias (docs/judges.md)")
        parser.add_argument("--owner", metavar="USERNAME",
                            help="whose judge JUDGE is (names are unique per owner); default: the study owner's "
                                 "judge of that name, else the only judge of that name")
        parser.add_argument("--ablation", action="store_true",
                            help="persona judge: one run per CINEMETRIC method on the same split (tables 1-2)")

    @staticmethod
    def _judge(name: str, study: Study, username: str | None) -> Judge:
        """Judge names are unique per owner: ``--owner``'s judge, else the study owner's, else the one judge of
        that name (an operator's command may run any judge; several owners' judges of that name need --owner)."""
        owner = owner_or_error(username)
        judges = Judge.objects.filter(owner=owner) if owner is not None else Judge.objects.all()
        try:
            judge = judge_named(judges=judges, name=name, owner=owner or study.owner)
        except AmbiguousJudgeName as exc:
            raise CommandError(f"{exc} with --owner") from None
        if judge is None:
            whose = f" of {username}" if owner is not None else ""
            raise CommandError(f"no judge {name!r}{whose} (create one with create_judge)")
        return judge

    def handle(self, *args: Any, **o: Any) -> None:
        started = time.monotonic()  # the command's whole time, run creation included (review 18)
        study = Study.objects.filter(slug=o["study"]).first()
        if study is None:
            raise CommandError(f"no study {o['study']!r}")
        judge = self._judge(o["judge"], study, o["owner"])
        inline = o["inline"] or (o["wait"] and not llm_worker_available())
        overrides = {k: o[k] for k in ("temperature", "variant", "swap_share") if o[k] is not None}
        try:
            if o["resume"]:
                run = JudgeRun.objects.filter(pk=o["resume"], study=study, judge=judge).first()
                if run is None:
                    raise CommandError(f"no run {o['resume']} of judge {judge.name!r} on {study.slug!r}")
                todo = judging.judge_run_resume(run=run, retry_errors=o["retry_errors"], enqueue=not inline)
                self.stdout.write(f"resumed run {run.pk}: {todo} answer{pluralize(todo)} to ask{ANSWER_UNIT}")
                runs = [run]
            elif o["ablation"]:
                experiment = judging.persona_ablation_launch(study=study, judge=judge, enqueue=not inline)
                runs = list(experiment.runs.order_by("id"))
                self.stdout.write(f"started experiment {experiment.pk}: " + ", ".join(
                    f"run {r.pk} ({r.params['kind_options']['method']})" for r in runs))
            else:
                run = judging.judge_run_start(study=study, judge=judge, overrides=overrides, enqueue=not inline)
                self.stdout.write(f"started run {run.pk}: {run.calls_total} answer{pluralize(run.calls_total)} to ask"
                                  f"{ANSWER_UNIT}")
                runs = [run]
        except judging.RunError as exc:
            raise CommandError(str(exc)) from None
        if not (o["wait"] or inline):
            self.stdout.write("enqueued on the `llm` queue; follow it in the browser or with --wait")
            return
        if inline:
            self.stdout.write("no worker consumes the `llm` queue: working in this process")
        for run in runs:
            if inline:
                judging.judge_run_execute_inline(run=run, on_progress=functools.partial(self._progress, run, started))
            else:
                while True:
                    run.refresh_from_db()
                    if run.status in _FINAL:
                        break
                    self._progress(run, started)
                    time.sleep(1.0)
            run.refresh_from_db()
            for line in summary_lines(run_progress(run=run)):
                self.stdout.write(line)
        # The whole command's time, named apart from each run's own "run N: done in ... s" (review: two durations
        # for one run, "done in 3.3 s" and "wall time 3.2 s", read as two measures of the same thing).
        whose = "the run's" if len(runs) == 1 else "each run's"
        self.stdout.write(f"this command took {time.monotonic() - started:.1f} s "
                          f"({whose} own time is on its \"run N: ... in\" line)")

    def _progress(self, run: JudgeRun, started: float) -> None:
        progress = run_progress(run=run)
        self.stderr.write(
            f"  {progress.done}/{progress.total} answers ({progress.percent:.0f} %), {progress.failed} failed, "
            + (f"preparation calls {progress.steps_done}/{progress.steps_total}, " if progress.steps_total else "")
            + f"{time.monotonic() - started:.0f} s"
        )
