"""A study's lifecycle: draft -> open -> closed, and reopen. Raters reach a study only while it is open.

Services, so that the commands, the API and the study page change a study's status the same way and
refuse the same things with the same one-line messages.
"""

from __future__ import annotations

from django.db import transaction

from annotations.models import Item, Question, Study


class LifecycleError(ValueError):
    """A status change that cannot happen; the message says why in one line."""


def study_open(*, study: Study) -> Study:
    """Open a draft or closed study to raters (a closed study reopens; its ratings stay).

    Refused when the study has no question or no item: its links would lead raters to an empty study.
    """
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status == Study.Status.OPEN:
            raise LifecycleError(f"study {locked.slug!r} is already open")
        if not Question.objects.filter(study=locked).exists():
            raise LifecycleError(f"study {locked.slug!r} has no question: it cannot open")
        if not Item.objects.filter(study=locked).exists():
            raise LifecycleError(f"study {locked.slug!r} has no item: import items before opening it")
        locked.status = Study.Status.OPEN
        locked.save(update_fields=["status"])
    study.status = locked.status
    return study


def study_close(*, study: Study) -> Study:
    """Close an open study: raters who finished keep their completion code; nobody rates any more."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status != Study.Status.OPEN:
            raise LifecycleError(f"study {locked.slug!r} is not open ({locked.status}): there is nothing to close")
        locked.status = Study.Status.CLOSED
        locked.save(update_fields=["status"])
    study.status = locked.status
    return study
