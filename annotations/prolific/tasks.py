"""The beat task that follows every published study's submissions (polling: the fallback where Prolific's
webhooks cannot reach EvalHub, and the net under them where they can). It takes ids and calls the service."""
from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.utils.module_loading import import_string

from annotations.models import ProlificStudy
from annotations.prolific.following import prolific_sync
from annotations.prolific.records import STUDY_COMPLETED, ProlificError
from annotations.prolific.tokens import TokenRefused

logger = logging.getLogger(__name__)

# The project's Celery app: django.setup() does not load it (start-up, issue 22), so this module does, and
# @shared_task binds to it (its broker, its eager setting) in whatever process queues these tasks.
import_string(settings.EVALHUB_CELERY_APP)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def prolific_sync_all() -> int:
    """Queue one poll per published study that is not finished; returns how many."""
    ids = list(ProlificStudy.objects.filter(published_at__isnull=False).exclude(status=STUDY_COMPLETED)
               .values_list("pk", flat=True))
    for pk in ids:
        prolific_sync_study.delay(pk)
    return len(ids)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def prolific_sync_study(link_id: int) -> None:
    """One poll. A failure is recorded on the study's row (the page shows it) and the next tick tries again:
    a poll repeats nothing that was done, so no retry is needed here."""
    link = ProlificStudy.objects.select_related("study", "published_by").filter(pk=link_id).first()
    if link is None:
        return
    try:
        prolific_sync(link=link)
    except (ProlificError, TokenRefused) as exc:
        message = exc.message if isinstance(exc, ProlificError) else str(exc)
        ProlificStudy.objects.filter(pk=link.pk).update(sync_error=message[:1000])
        logger.warning("prolific sync of %s failed: %s", link.study.slug, message)
