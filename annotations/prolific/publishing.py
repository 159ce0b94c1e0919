"""Publishing a study on Prolific, and pausing, resuming and stopping it (docs/raters.md, "Prolific").

Publishing creates the Prolific study with the study's open link and Prolific's placeholders, as many places
as the design needs, the study's completion code, and the reward and time (from the pilot's median time
when the study has a pilot); then publishes it by a transition and stores its id. The network calls happen
outside any transaction; the row is written before the create, under a unique internal name, so that a
create whose answer was lost is found again (``find_studies``) rather than created twice.
"""
from __future__ import annotations

import math
import secrets
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotations.models import ProlificStudy, ProlificTransition, Study
from annotations.prolific.client import ProlificClient
from annotations.prolific.records import STUDY_PAUSED, CompletionCode, ProlificError, StudyDraft
from annotations.prolific.tokens import prolific_client, token_variable_check
from annotations.selectors import counted_items, study_rater_stats

if TYPE_CHECKING:
    from django.contrib.auth.models import User

COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="
PLACEHOLDERS = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


class PublishError(ValueError):
    """The study cannot be published as asked; nothing was sent to Prolific."""


@dataclass(frozen=True)
class Terms:
    """What a participant is offered. ``from_pilot``: the time is the pilot's median (and the reward keeps the
    researcher's rate per minute), ``pilot_raters`` how many finished raters it came from."""

    places: int
    minutes: int
    reward_cents: int
    from_pilot: bool
    pilot_raters: int


def places_needed(*, study: Study) -> int:
    """Seats the design needs: items x raters per item, divided by the items one rater rates (rounded up)."""
    items = counted_items(study=study).count()
    if items == 0:
        raise PublishError(f"study {study.slug!r} has no items to rate")
    per_rater = min(study.items_per_rater or items, items)
    return math.ceil(items * study.raters_per_item / per_rater)


def pilot_minutes(*, study: Study) -> tuple[float | None, int]:
    """The median time (minutes) of the raters who finished before publishing, and how many there were."""
    finished = [row.total_minutes for row in study_rater_stats(study=study) if row.status == "done" and row.items_done]
    return (statistics.median(finished) if finished else None), len(finished)


def publish_terms(*, study: Study, reward_cents: int, minutes: int) -> Terms:
    """The offer: the researcher's reward and minutes, or, with a pilot, the pilot's median time (rounded up to
    a whole minute) paid at the researcher's rate (reward_cents per ``minutes``), rounded up to a cent."""
    if reward_cents < 1 or minutes < 1:
        raise PublishError("the reward (cents) and the minutes must be positive whole numbers")
    places = places_needed(study=study)
    median, raters = pilot_minutes(study=study)
    if median is None:
        return Terms(places, minutes, reward_cents, from_pilot=False, pilot_raters=0)
    pilot = max(1, math.ceil(median))
    return Terms(places, pilot, math.ceil(reward_cents * pilot / minutes), from_pilot=True, pilot_raters=raters)


def open_link_url(*, study: Study, base_url: str) -> str:
    return base_url.rstrip("/") + reverse("annotations:open_link", args=[study.open_token]) + PLACEHOLDERS


def _link_row(*, study: Study, token_env: str, terms: Terms, user: User | None) -> ProlificStudy:
    """The row, written (and committed) before any call; a second publish reuses an unfinished one."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        link = ProlificStudy.objects.filter(study=study).first()
        if link is not None and link.published_at is not None:
            raise PublishError(f"study {study.slug!r} is already published on Prolific ({link.prolific_id})")
        if link is None:
            link = ProlificStudy(study=study, internal_name=f"evalhub-{study.slug}-{secrets.token_hex(6)}",
                                 completion_code=secrets.token_hex(4).upper())
        link.token_env, link.places = token_env, terms.places
        link.reward_cents, link.minutes = terms.reward_cents, terms.minutes
        link.published_by = user
        link.save()  # under the study's lock: two publishing requests take turns
        study.completion_redirect_url = COMPLETE_URL + link.completion_code
        study.open_link_enabled = True
        study.save(update_fields=["completion_redirect_url", "open_link_enabled"])
    return link


def prolific_publish(
    *, study: Study, token_env: str, reward_cents: int, minutes: int, base_url: str, user: User | None
) -> ProlificStudy:
    """Create and publish the study on Prolific (module docstring). PublishError or TokenRefused change
    nothing; a ProlificError after the row was written leaves it unpublished, and publishing again resumes."""
    if study.status != Study.Status.OPEN:
        raise PublishError(f"study {study.slug!r} is {study.status}: open it before publishing on Prolific")
    token_variable_check(name=token_env, user=user)
    client = prolific_client(token_env=token_env)
    terms = publish_terms(study=study, reward_cents=reward_cents, minutes=minutes)
    link = _link_row(study=study, token_env=token_env, terms=terms, user=user)
    if not link.prolific_id:
        link.prolific_id = _create_once(client, link, study, base_url)
        link.save(update_fields=["prolific_id"])
    published = client.publish_study(link.prolific_id)
    link.status, link.published_at = published.status, timezone.now()
    link.save(update_fields=["status", "published_at"])
    _record(link, "", published.status, actor=_who(user))
    return link


def _create_once(client: ProlificClient, link: ProlificStudy, study: Study, base_url: str) -> str:
    found = client.find_studies(internal_name=link.internal_name)
    if found:  # an earlier create whose answer was lost
        return found[0].id
    draft = StudyDraft(
        name=study.title,
        description=study.instruction[:5000] or study.title,
        external_study_url=open_link_url(study=study, base_url=base_url),
        completion_codes=(CompletionCode(link.completion_code),),
        total_available_places=link.places,
        estimated_completion_time=link.minutes,
        reward=link.reward_cents,
        internal_name=link.internal_name,
    )
    try:
        return client.create_study(draft).id
    except ProlificError as exc:
        if not exc.outcome_unknown:
            raise
        found = client.find_studies(internal_name=link.internal_name)
        if not found:
            raise
        return found[0].id


def prolific_transition(*, link: ProlificStudy, action: str, user: User | None) -> ProlificStudy:
    """PAUSE, START (resume) or STOP the Prolific study, recorded with who did it."""
    if not link.prolific_id or link.published_at is None:
        raise PublishError("the study is not published on Prolific")
    client = link_client(link=link)
    before = link.status
    moved = client.transition_study(link.prolific_id, action)
    link.status = moved.status
    link.save(update_fields=["status"])
    _record(link, before, moved.status, actor=_who(user))
    return link


def prolific_pause(*, link: ProlificStudy, user: User | None) -> ProlificStudy:
    return prolific_transition(link=link, action="PAUSE", user=user)


def prolific_resume(*, link: ProlificStudy, user: User | None) -> ProlificStudy:
    if link.status != STUDY_PAUSED:
        raise PublishError(f"the Prolific study is {link.status or 'not published'}, not paused")
    return prolific_transition(link=link, action="START", user=user)


def link_client(*, link: ProlificStudy) -> ProlificClient:
    """The client of a published study, its grant checked again for the researcher who published (as judge
    keys are checked again at call time: a grant withdrawn by the operator stops the calls)."""
    token_variable_check(name=link.token_env, user=link.published_by)
    return prolific_client(token_env=link.token_env)


def _who(user: User | None) -> str:
    return user.get_username() if user is not None else "evalhub"


def _record(link: ProlificStudy, before: str, after: str, *, actor: str) -> None:
    if before != after:
        ProlificTransition.objects.create(link=link, resource="study", resource_id=link.prolific_id,
                                          from_status=before, to_status=after, actor=actor)
