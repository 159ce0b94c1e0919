"""A person's reading of a judge answer the parser could not read: the score a human reads in it.

The run's owner reads an unparseable answer on the run page and records the score it gives. The rating becomes
ok with that score; ``read_by`` and ``read_at`` say who read it and when, and an entry of its history keeps what
the parser had said. Such ratings count as ok everywhere and are counted apart ("read by a person: 12", in the
analysis's ``status_counts``, the dashboard and the ratings export); ``reparse`` never re-reads them
(llmjudge/runs/reparse.py). A reading can be corrected by recording another one; each goes into the history.
"""
from __future__ import annotations

import math

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotations.models import PAIRWISE_CHOICES, Study
from llmjudge.models import LLMRating

# The reason a person-read rating carries (the parser's own reason stays in its history entry), and the key the
# analysis, the dashboard and the export count such ratings under.
READ_BY_A_PERSON = "read by a person"


class ReadingError(ValueError):
    """A reading that cannot be recorded; the message says why. Nothing was written."""


def reading_checked(*, rating: LLMRating, score: float) -> float:
    """``score`` if a person may record it for ``rating``: a number on the study's scale (one of a pairwise or
    categorical study's codes), for an answer the parser could not read or one a person read before."""
    if rating.status != LLMRating.Status.UNPARSEABLE and rating.read_at is None:
        raise ReadingError(f"only an unparseable answer can be read by a person; this one is {rating.status}")
    study = rating.run.study
    low, high = study.scale_min, study.scale_max
    if not math.isfinite(score) or not low <= score <= high:
        raise ReadingError(f"{score:g} is outside the question's scale ({low} to {high})")
    points = study.scale_points()
    if study.is_nominal and score not in points:
        raise ReadingError(f"{score:g} is not one of this study's choices ({', '.join(map(str, points))})")
    return float(score)


def reading_choices(study: Study) -> list[tuple[int, str]]:
    """What a reader chooses from in a pairwise or categorical study: (code, what it means), e.g. (1, "A"); [] for a
    Likert study, where the reader types a number on the scale."""
    if study.is_pairwise:
        return [(code, PAIRWISE_CHOICES[code]) for code in study.scale_points()]
    if study.is_categorical:
        return [(code, study.label_for(code)) for code in study.scale_points()]
    return []


def rating_read_by_person(*, rating: LLMRating, user: User, score: float) -> LLMRating:
    """Record the score ``user`` reads in the answer of ``rating``: the rating becomes ok with it, counted apart.

    The row is locked and checked again inside the transaction, so a reparse or a second reader running at the same
    time cannot interleave with it. ReadingError, and nothing changes, when the score or the rating does not allow
    it (``reading_checked``)."""
    with transaction.atomic():
        locked = LLMRating.objects.select_for_update(of=("self",)).select_related("run__study").get(pk=rating.pk)
        value = reading_checked(rating=locked, score=score)
        now = timezone.now()
        entry = {"read": now.isoformat(), "by": user.get_username(), "score": value,
                 "status": locked.status, "previous_score": locked.score, "reason": locked.reason}
        locked.history = [*(locked.history or []), entry]
        locked.status, locked.score, locked.reason = LLMRating.Status.OK, value, READ_BY_A_PERSON
        locked.read_by, locked.read_at = user, now
        locked.save(update_fields=["history", "status", "score", "reason", "read_by", "read_at", "updated_at"])
    return locked
