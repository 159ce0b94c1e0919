"""One rule for an uploaded file: imported in the request, or handed to a background job.

A file up to IMPORT_TASK_THRESHOLD_BYTES is imported while the request waits, by the same service the
command runs. A larger one would hold a web worker for minutes, so only a caller that can show a job's
progress (the study page) hands it to a Celery task (evalhub/imports/jobs.py); the API and the admin have
no progress bar and refuse it with UploadTooLarge, naming the study page. The study page, the API's items
upload and the admin's uploads all call ``upload_import``, so the threshold is compared in one place.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from annotations.importing.services import ImportFileError, ImportResult, uploaded_file
from annotations.models import ImportJob, Study
from evalhub.imports.job_run import SERVICES
from evalhub.imports.jobs import import_job_start

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class UploadTooLarge(ImportFileError):
    """A file above the threshold sent to a caller that imports only in the request. An ImportFileError, so a
    caller that does not tell the two apart still says "nothing was imported"."""

    def __init__(self, *, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"{size} bytes, above IMPORT_TASK_THRESHOLD_BYTES ({limit} bytes): upload it on the "
                         "study's page, where it is imported in the background")


@overload
def upload_import(*, study: Study, kind: str, upload: UploadedFile, options: dict[str, bool], user: User,
                  background: Literal[False]) -> ImportResult: ...


@overload
def upload_import(*, study: Study, kind: str, upload: UploadedFile, options: dict[str, bool], user: User,
                  background: Literal[True]) -> ImportResult | ImportJob: ...


def upload_import(*, study: Study, kind: str, upload: UploadedFile, options: dict[str, bool], user: User,
                  background: bool) -> ImportResult | ImportJob:
    """Import ``upload`` as ``kind`` (items, ratings, demographics) into ``study`` now, or, above
    IMPORT_TASK_THRESHOLD_BYTES, hand it to a job when ``background`` and raise UploadTooLarge otherwise.
    Returns the import's result, or the job that will import the file.

    Raises ImportFileError for a file the service refuses; nothing is imported then.
    """
    limit = settings.IMPORT_TASK_THRESHOLD_BYTES
    size = upload.size or 0
    if size > limit:
        if not background:
            raise UploadTooLarge(size=size, limit=limit)
        return import_job_start(study=study, kind=kind, upload=upload, options=options, user=user)
    # The service reads a path, as the command does, in one transaction: a file with one bad row imports
    # nothing. A file Django spooled to disk is copied chunk by chunk, never read whole into memory.
    with uploaded_file(upload) as path:
        return SERVICES[kind](study=study, path=path, **options)
