"""The Celery task that imports a large upload (evalhub/imports/jobs.py queues it; it runs
evalhub/imports/job_run.py).

Apart from jobs.py because django.setup() imports jobs.py (its signal handler) and must not import Celery
(start-up, issue 22). Importing this module loads the project's Celery app, so that @shared_task binds to it
(its broker, its eager setting) in whatever process queues the task. The task keeps its old name for messages
already queued.
"""
from __future__ import annotations

from celery import shared_task

import evalhub.celery  # noqa: F401 - the project's app, see above
from evalhub.imports.job_run import import_job_run


@shared_task(name="evalhub.imports.jobs.import_file", acks_late=True, reject_on_worker_lost=True,
             ignore_result=True)
def import_file(job_id: int) -> None:
    import_job_run(job_id=job_id)
