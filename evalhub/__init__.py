from __future__ import annotations

# The Celery app is imported here so that @shared_task binds to it when Django starts.
from evalhub.celery import app as celery_app

__all__ = ["celery_app"]
