"""Re-read stored judge answers with the current parser: no LLM is called.

Each rating's ``raw`` answer goes through the parser its kind's builder gives every turn
(``JudgeKind.answer_parser``), so a rubric rating is re-read as the rubric judge reads it. A rating
whose status or score changes keeps its old parse as an entry of its attempt history
(``{"reparse": ..., "status", "score", "rationale", "version"}``); every re-read rating records the
current parser version in ``template_version``. Running it twice changes nothing the second time.

Only answered ratings are re-read (ok, unparseable, refused with a non-empty answer): an error or a
pending row has no answer, and a rating a person read (``read_at`` set, llmjudge/runs/review.py) keeps that
reading. The report counts the unparseable answers by the parser's reason after the re-read. A kind whose
answer cannot be re-read alone (the role-player panel: its votes depend on its roles and on
log-probabilities that are not stored) is skipped and counted.
A rating that becomes "refused" is not asked again here: resuming the run does not re-ask it either
(only pending and, on request, error rows are asked), so the status is the record of the answer.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotations.models import Question, Study
from llmjudge.engine.runner import parse_answer
from llmjudge.kinds import kind_for
from llmjudge.models import JudgeRun, LLMRating
from llmjudge.parsing import PARSER_VERSION, ParsedScore
from llmjudge.runs.swapping import map_choice_back

REREAD_STATUSES = (LLMRating.Status.OK, LLMRating.Status.UNPARSEABLE, LLMRating.Status.REFUSED)
MAX_EXAMPLES = 5
_PARSER_SUFFIX = re.compile(r"\+parser[^+]*$")


@dataclass(frozen=True)
class ReparseExample:
    run_id: int
    item: str
    question: str
    old: str
    new: str


@dataclass
class ReparseReport:
    dry_run: bool
    n_read: int = 0
    n_changed: int = 0
    transitions: Counter[str] = field(default_factory=Counter)  # "unparseable -> ok": count
    examples: list[ReparseExample] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reason: ratings
    # After the re-read: the unparseable ratings by the parser's reason ("no verdict": 3, ...).
    unparseable: Counter[str] = field(default_factory=Counter)
    kept_readings: int = 0  # ratings a person read (llmjudge/runs/review.py): never re-read


def current_version(version: str) -> str:
    """The rating's template version naming the current parser ("...+parser<N>")."""
    base = _PARSER_SUFFIX.sub("", version)
    suffix = f"+parser{PARSER_VERSION}"
    # The field holds 50 characters: the parser suffix is what this version must name, so the base gives way.
    return f"{base[:50 - len(suffix)]}{suffix}" if base else suffix[1:]


def _shown(status: str, score: float | None) -> str:
    return f"{status} {score:g}" if score is not None else status


def _run_parser(run: JudgeRun) -> Callable[[Question], Callable[[str], ParsedScore]] | None:
    """The run's parser per question (the plain judge reads the aspect asked), as the kind's builder gives it."""
    kind = kind_for((run.params or {}).get("kind") or run.judge.kind)
    make = kind.answer_parser
    if make is None:
        return None
    parsers: dict[int, Callable[[str], ParsedScore]] = {}

    def for_question(question: Question) -> Callable[[str], ParsedScore]:
        if question.pk not in parsers:
            parsers[question.pk] = make(study=run.study, question=question)
        return parsers[question.pk]

    return for_question


def study_reparse(*, study: Study, run: JudgeRun | None = None, dry_run: bool = False) -> ReparseReport:
    """Re-parse the stored answers of the study's runs (or of ``run``, which must belong to it)."""
    if run is not None and run.study_id != study.pk:
        raise ValueError(f"run {run.pk} belongs to study {run.study.slug!r}, not {study.slug!r}")
    runs = [run] if run is not None else list(JudgeRun.objects.filter(study=study).select_related("judge", "study"))
    report = ReparseReport(dry_run=dry_run)
    for r in runs:
        parse = _run_parser(r)
        # A person's reading is the record of that answer: the parser, old or new, never overwrites it.
        report.kept_readings += LLMRating.objects.filter(run=r, read_at__isnull=False).count()
        ratings = LLMRating.objects.filter(run=r, status__in=REREAD_STATUSES, read_at__isnull=True).exclude(raw="")
        if parse is None:
            n = ratings.count()
            if n:
                reason = f"a {r.judge.kind} answer cannot be re-read alone (run {r.pk})"
                report.skipped[reason] = n
            continue
        with transaction.atomic():
            _reparse_run(ratings.select_related("item", "question").select_for_update(of=("self",)), parse, report)
            if dry_run:
                transaction.set_rollback(True)
    return report


def _reparse_run(
    ratings: QuerySet[LLMRating], parse: Callable[[Question], Callable[[str], ParsedScore]], report: ReparseReport
) -> None:
    # bulk_update skips auto_now: updated_at is set here, so the analysis cache's fingerprint sees the change.
    now = timezone.now()
    changed: list[LLMRating] = []
    restamped: list[LLMRating] = []
    for rating in ratings.iterator(chunk_size=2000):
        report.n_read += 1
        parsed = parse_answer(parse(rating.question), rating.raw, max_chars=settings.LLM_PARSE_MAX_CHARS,
                              where=f"run {rating.run_id} rating {rating.pk} (reparse)")
        if rating.swapped:  # a position-bias sample: its choice is stored in the original orientation
            parsed = map_choice_back(parsed)
        version = current_version(rating.template_version)
        if parsed.status == LLMRating.Status.UNPARSEABLE:
            report.unparseable[parsed.reason or "no reason"] += 1
        if parsed.status == rating.status and parsed.score == rating.score and parsed.reason == rating.reason:
            if version != rating.template_version:
                rating.template_version, rating.updated_at = version, now
                restamped.append(rating)
            continue
        old, new = _shown(rating.status, rating.score), _shown(parsed.status, parsed.score)
        report.n_changed += 1
        report.transitions[f"{rating.status} -> {parsed.status}"] += 1
        if len(report.examples) < MAX_EXAMPLES:
            report.examples.append(
                ReparseExample(rating.run_id, rating.item.external_id, rating.question.key, old, new))
        entry: dict[str, Any] = {"reparse": now.isoformat(), "status": rating.status, "score": rating.score,
                                 "rationale": rating.rationale, "version": rating.template_version}
        rating.history = [*(rating.history or []), entry]
        rating.status, rating.score, rating.rationale = parsed.status, parsed.score, parsed.rationale
        rating.reason = parsed.reason
        rating.template_version, rating.updated_at = version, now
        changed.append(rating)
    LLMRating.objects.bulk_update(changed, ["status", "score", "rationale", "reason", "history", "template_version",
                                           "updated_at"],
                                  batch_size=500)
    LLMRating.objects.bulk_update(restamped, ["template_version", "updated_at"], batch_size=500)
