"""Large uploads imported by a Celery task, with their progress on the study's page.

An upload above IMPORT_TASK_THRESHOLD_BYTES is moved (Django already spooled it to disk) into
IMPORT_UPLOAD_DIR, a directory the web server and the workers share, an ImportJob row records it, and
``import_file`` (evalhub/imports/tasks.py, which runs evalhub/imports/job_run.py) runs the same service as
the command and the small upload: items_import, ratings_import or demographics_import. The web worker never
reads the file and answers at once.

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
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from annotations.models import ImportJob, Study
from evalhub.imports.job_run import job_failed

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


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
    from evalhub.imports.tasks import import_file  # imports Celery: not at django.setup() (start-up, issue 22)

    try:
        import_file.delay(job.pk)
    except Exception as exc:  # the broker is unreachable: say so on the page rather than wait for ever
        logger.exception("import job %s could not be queued", job.pk)
        Path(job.path).unlink(missing_ok=True)
        job_failed(job, f"{job.file_name}: the import could not be queued ({type(exc).__name__}); nothing was "
                     "imported. Upload the file again.")


def remove_waiting_file(sender: type[ImportJob], instance: ImportJob, **kwargs: Any) -> None:
    """post_delete of a job (its study deleted, say) that has not run: nothing will read its file again.
    A job that ended removed its file already; a running one removes it when the task ends."""
    if instance.status == ImportJob.Status.PENDING:
        Path(instance.path).unlink(missing_ok=True)


class ImportJobProgress(TypedDict):
    id: int
    kind: str
    file: str
    status: str
    percent: int
    bytes_done: int
    size: int
    error: str
    summary: str
    live: bool


def import_job_progress(*, job: ImportJob) -> ImportJobProgress:
    """What the study page's progress bar polls (evalhub.pages.studies.import_progress)."""
    return {"id": job.pk, "kind": job.kind, "file": job.file_name, "status": job.status, "percent": job.percent,
            "bytes_done": job.bytes_done, "size": job.size_bytes, "error": job.error, "summary": job.summary,
            "live": job.live}
