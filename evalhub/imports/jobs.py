"""Large uploads imported by a Celery task, with their progress on the study's page.

An upload above IMPORT_TASK_THRESHOLD_BYTES is moved (Django already spooled it to disk) into
IMPORT_UPLOAD_DIR, a directory the web server and the workers share, an ImportJob row records it, and
``import_file`` runs the same service as the command and the small upload: items_import, ratings_import
or demographics_import. The web worker never reads the file and answers at once.

Progress: the services read the file twice (annotations/importing/services.py). During the checking reading the
task writes the bytes read into the job row, outside any transaction, so the page sees it on PostgreSQL
and on the embedded SQLite alike (no cache is involved: the embedded cache is per process). The writing
reading is one transaction, which hides whatever it would write: the job says "writing" until it
commits, and is marked done inside that transaction, so a job is done exactly when its rows are there.
A worker that dies mid-import leaves nothing written; the task is delivered again (acks_late,
reject_on_worker_lost) and starts over. The file is removed when the job ends, done or failed.
An import must end within CELERY_VISIBILITY_TIMEOUT (an hour by default; a 200 MB file takes minutes,
README's benchmarks), or Redis would hand the same job to a second worker while the first still runs.
"""
from __future__ import annotations

import logging
import shutil
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from celery import shared_task
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.utils import timezone

from annotations.forms import import_summary
from annotations.importing.services import ImportFileError, ImportResult, demographics_import
from annotations.models import ImportJob, Study
from evalhub.imports.ratings import ratings_import

if TYPE_CHECKING:
    from django.contrib.auth.models import User

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


def import_job_start(*, study: Study, kind: str, upload: UploadedFile, options: dict[str, bool],
                     user: User) -> ImportJob:
    """Keep the upload in IMPORT_UPLOAD_DIR and queue its import; the task starts after this commits."""
    folder = Path(settings.IMPORT_UPLOAD_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}{Path(upload.name or '').suffix.lower()[:10]}"
    temporary = getattr(upload, "temporary_file_path", None)
    if temporary is not None:
        shutil.move(temporary(), path)  # a rename on one file system, a streamed copy across two
    else:
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
    job = ImportJob.objects.create(study=study, kind=kind, file_name=(upload.name or "upload")[:255], path=str(path),
                                   options=options, size_bytes=path.stat().st_size, created_by=user)
    transaction.on_commit(lambda: _enqueue(job))
    return job


def _enqueue(job: ImportJob) -> None:
    try:
        import_file.delay(job.pk)
    except Exception as exc:  # the broker is unreachable: say so on the page rather than wait for ever
        logger.exception("import job %s could not be queued", job.pk)
        Path(job.path).unlink(missing_ok=True)
        _failed(job, f"{job.file_name}: the import could not be queued ({type(exc).__name__}); nothing was "
                     "imported. Upload the file again.")


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def import_file(job_id: int) -> None:
    import_job_run(job_id=job_id)


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
        _failed(job, f"{job.file_name}: {exc}. Nothing was imported.")
    except Exception as exc:
        logger.exception("import job %s failed", job_id)
        _failed(job, f"{job.file_name}: the import stopped ({type(exc).__name__}). Nothing was imported; "
                     "upload the file again.")
    else:
        ImportJob.objects.filter(pk=job_id).update(summary=f"{job.file_name}: {import_summary(job.kind, result)}")
    finally:
        connection.queries_log = kept
        path.unlink(missing_ok=True)


def remove_waiting_file(sender: type[ImportJob], instance: ImportJob, **kwargs: Any) -> None:
    """post_delete of a job (its study deleted, say) that has not run: nothing will read its file again.
    A job that ended removed its file already; a running one removes it when the task ends."""
    if instance.status == ImportJob.Status.PENDING:
        Path(instance.path).unlink(missing_ok=True)


def _failed(job: ImportJob, error: str) -> None:
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.FAILED, error=error[:2000],
                                               finished_at=timezone.now())


def import_job_progress(*, job: ImportJob) -> dict[str, Any]:
    """What the study page's progress bar polls (evalhub.pages.studies.import_progress)."""
    return {"id": job.pk, "kind": job.kind, "file": job.file_name, "status": job.status, "percent": job.percent,
            "bytes_done": job.bytes_done, "size": job.size_bytes, "error": job.error, "summary": job.summary,
            "live": job.live}
