"""What an import job's Celery task runs (evalhub/imports/tasks.py; evalhub/imports/jobs.py queues the job and
says how its progress and its end are recorded): the job's service over its file, its progress in the job's row,
and its end, done or failed, with the file removed."""
from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection
from django.utils import timezone

from annotations.forms import import_summary
from annotations.importing.services import ImportFileError, ImportResult, demographics_import
from annotations.models import ImportJob
from evalhub.imports.ratings import ratings_import

logger = logging.getLogger(__name__)


def items_import_drawn(**arguments: Any) -> ImportResult:
    """``evalhub.analysis.planning.human_subset.items_import_drawn``, imported on use: it needs numpy, and
    django.setup() imports this module (STYLE 15)."""
    from evalhub.analysis.planning.human_subset import items_import_drawn as service

    return service(**arguments)


SERVICES: dict[str, Callable[..., ImportResult]] = {
    ImportJob.Kind.ITEMS: items_import_drawn,  # then the human subset redrawn while nobody has rated (issue 27)
    ImportJob.Kind.RATINGS: ratings_import,
    ImportJob.Kind.DEMOGRAPHICS: demographics_import,
}
PROGRESS_EVERY_SECONDS = 0.5  # a row update per half second at most, whatever the file's size



def import_job_run(*, job_id: int) -> None:
    job = ImportJob.objects.select_related("study").filter(pk=job_id).first()
    if job is None or not job.live:
        return  # gone with its study, or a second delivery of a job that ended
    path = Path(job.path)
    last = 0.0

    def progress(phase: str, done: int) -> None:
        nonlocal last
        if phase == "checking" and time.monotonic() - last >= PROGRESS_EVERY_SECONDS:
            last = time.monotonic()
            ImportJob.objects.filter(pk=job_id).update(status=ImportJob.Status.CHECKING, bytes_done=done)
        elif phase == "writing":
            ImportJob.objects.filter(pk=job_id).update(status=ImportJob.Status.WRITING, bytes_done=job.size_bytes)
        elif phase == "written":  # inside the import's transaction: done commits with the rows
            ImportJob.objects.filter(pk=job_id).update(status=ImportJob.Status.DONE, finished_at=timezone.now())

    ImportJob.objects.filter(pk=job_id).update(status=ImportJob.Status.CHECKING, bytes_done=0, error="")
    # With DEBUG on (the embedded default), Django keeps each connection's last 9,000 queries, and a batch
    # of ratings is one long INSERT: hundreds of MB kept for nothing. The import's queries are not kept.
    kept, connection.queries_log = connection.queries_log, deque(maxlen=0)
    try:
        result = SERVICES[job.kind](study=job.study, path=path, progress=progress, **job.options)
    except ImportFileError as exc:
        job_failed(job, f"{job.file_name}: {exc}. Nothing was imported.")
    except Exception as exc:
        logger.exception("import job %s failed", job_id)
        job_failed(job, f"{job.file_name}: the import stopped ({type(exc).__name__}). Nothing was imported; "
                     "upload the file again.")
    else:
        ImportJob.objects.filter(pk=job_id).update(summary=f"{job.file_name}: {import_summary(job.kind, result)}")
    finally:
        connection.queries_log = kept
        path.unlink(missing_ok=True)


def job_failed(job: ImportJob, error: str) -> None:
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.FAILED, error=error[:2000],
                                               finished_at=timezone.now())
