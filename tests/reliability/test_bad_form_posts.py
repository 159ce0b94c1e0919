"""Malformed form posts on the rater pages: each is refused (a message on the page, or a redirect to the
rater's current page, or an error status) and changes no row of any table.

The clock is frozen, so the claim's `touched_at` (refreshed by every page view, by design) is rewritten
with the same value and the snapshot compares every row of every table (tests/support/snapshots.py).
CSRF is enforced (`Client(enforce_csrf_checks=True)`), as in the browser.
"""
from __future__ import annotations

import html as htmllib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from django.test import Client

from annotations import services
from annotations.models import HumanRating, ItemClaim, Rater, Study
from tests.support.raterkit import add_story_items, open_study, url_of
from tests.support.snapshots import database_snapshot

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
CHOOSE = "Please choose an answer to this question."


@dataclass
class World:
    study: Study
    a: Rater  # at the first page of their first item
    b: Rater  # another rater of the same study, at a different item
    client: Client  # rater A's browser (CSRF enforced)
    b_client: Client
    kept: dict[str, dict[str, str]] = field(default_factory=dict)  # forms sent earlier, to replay


def _form(client: Client, rater: Rater, value: str = "3") -> dict[str, str]:
    """The rater's current form as the browser would send it, every radio answered with `value`."""
    page = client.get(url_of(rater)).content.decode()
    data = {
        "csrfmiddlewaretoken": re.search(r'name="csrfmiddlewaretoken" value="([^"]*)"', page).group(1),
        "page": re.search(r'name="page" value="([^"]*)"', page).group(1),
    }
    data.update({name: value for name in re.findall(r'type="radio" name="([^"]+)"', page)})
    return data


def _claimed(rater: Rater) -> int:
    return ItemClaim.objects.get(assignment__rater=rater, completed_at__isnull=True).item_id


def _post(w: World, **changes: object) -> object:
    """Rater A's current form with `changes` (None removes a field)."""
    data = _form(w.client, w.a)
    for name, value in changes.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return w.client.post(url_of(w.a), data)


def _finish_first_page(w: World) -> dict[str, str]:
    """Answer A's first page (a real, accepted POST) and return the form that was sent."""
    data = _form(w.client, w.a)
    _send_and_follow(w, data)
    return data


def _finish_item(w: World) -> dict[str, str]:
    """Answer both pages of A's item; return the last page's form."""
    _finish_first_page(w)
    data = _form(w.client, w.a)
    _send_and_follow(w, data)
    return data


def _send_and_follow(w: World, data: dict[str, str]) -> None:
    # As the browser does: the redirect's GET is what claims the next item.
    response = w.client.post(url_of(w.a), data, follow=True)
    assert response.redirect_chain == [(url_of(w.a), 302)]


def _comment_too_long(w: World) -> object:
    return _post(w, comment="x" * 5001)


def _nul_in_comment(w: World) -> object:
    return _post(w, comment="fine\x00")


def _unclaimed_item(w: World) -> int:
    return w.study.items.exclude(pk=_claimed(w.a)).exclude(pk=_claimed(w.b)).first().pk


def _only_the_csrf_token(w: World) -> object:
    return w.client.post(url_of(w.a), {"csrfmiddlewaretoken": _form(w.client, w.a)["csrfmiddlewaretoken"]})


def _csrf_token_of_another_browser(w: World) -> object:
    data = _form(w.client, w.a)
    data["csrfmiddlewaretoken"] = _form(w.b_client, w.b)["csrfmiddlewaretoken"]
    return w.client.post(url_of(w.a), data)


def _a_form_to_b(w: World) -> object:
    """Rater A's own page key, sent to rater B's link (B holds another item)."""
    data = _form(w.b_client, w.b)
    data["page"] = _form(w.client, w.a)["page"]
    return w.b_client.post(url_of(w.b), data)


def _keep(name: str, step: Callable[[World], dict[str, str]]) -> Callable[[World], None]:
    """A legitimate step (before the snapshot) whose sent form is kept for the bad request to replay."""
    return lambda w: w.kept.update({name: step(w)})


def _replay(name: str, **changes: str) -> Callable[[World], object]:
    return lambda w: w.client.post(url_of(w.a), {**w.kept[name], **changes})


def _revoke_after_loading(w: World) -> None:
    w.kept["form"] = _form(w.client, w.a)
    services.rater_revoke(rater=w.a)


def _close_after_loading(w: World) -> None:
    w.kept["form"] = _form(w.client, w.a)
    Study.objects.filter(pk=w.study.pk).update(status=Study.Status.CLOSED)


def _complete_after_an_item(w: World) -> None:
    Study.objects.filter(pk=w.study.pk).update(items_per_rater=1)
    w.kept["form"] = _finish_item(w)
    assert "completion code" in w.client.get(url_of(w.a)).content.decode().lower()


def _to_attention_check(w: World) -> None:
    Study.objects.filter(pk=w.study.pk).update(attention_positions=[1])
    _finish_item(w)
    assert _form(w.client, w.a)["page"] == "check:1"


@dataclass(frozen=True)
class Case:
    id: str
    send: Callable[[World], object]  # the bad request (rater A's browser unless said otherwise)
    status: int  # 200: the page again with a message; 302: back to the rater's current page
    says: str = ""  # what the page tells the rater (for statuses other than 302)
    prepare: Callable[[World], object] | None = None  # legitimate steps taken before the snapshot


VALID_CHOICE = "Select a valid choice. {} is not one of the available choices."
CSRF = "CSRF verification failed"
NO_ANSWERS = {"q_grammaticality": None, "q_cohesiveness": None, "q_likability": None}

CASES = [
    # -- missing fields
    Case("no-answers", lambda w: _post(w, **NO_ANSWERS), 200, CHOOSE),
    Case("one-answer-missing", lambda w: _post(w, q_likability=None), 200, CHOOSE),
    Case("empty-answer", lambda w: _post(w, q_cohesiveness=""), 200, CHOOSE),
    Case("answers-of-the-other-page", lambda w: _post(w, **NO_ANSWERS, q_relevance="3"), 200, CHOOSE),
    Case("no-page-key", lambda w: _post(w, page=None), 302),
    Case("only-the-csrf-token", _only_the_csrf_token, 302),
    # -- out-of-range and malformed values
    Case("zero", lambda w: _post(w, q_grammaticality="0"), 200, VALID_CHOICE.format(0)),
    Case("six", lambda w: _post(w, q_grammaticality="6"), 200, VALID_CHOICE.format(6)),
    Case("two-and-a-half", lambda w: _post(w, q_cohesiveness="2.5"), 200, VALID_CHOICE.format(2.5)),
    Case("three-point-zero", lambda w: _post(w, q_cohesiveness="3.0"), 200, VALID_CHOICE.format("3.0")),
    Case("letters", lambda w: _post(w, q_likability="abc"), 200, VALID_CHOICE.format("abc")),
    Case("huge-number", lambda w: _post(w, q_likability="9" * 40), 200, VALID_CHOICE.format("9" * 40)),
    Case("negative", lambda w: _post(w, q_likability="-1"), 200, VALID_CHOICE.format(-1)),
    Case("comment-over-5000-characters", _comment_too_long, 200, "Ensure this value has at most 5000 characters",
         prepare=_finish_first_page),
    Case("nul-in-comment", _nul_in_comment, 200, "Null characters are not allowed.", prepare=_finish_first_page),
    # -- tampered page keys and item ids
    Case("page-key-of-an-unclaimed-item", lambda w: _post(w, page=f"item:{_unclaimed_item(w)}:0"), 302),
    Case("page-key-skipping-to-the-second-page",
         lambda w: _post(w, **NO_ANSWERS, page=f"item:{_claimed(w.a)}:1", q_relevance="3"), 302),
    Case("page-key-of-an-attention-check", lambda w: _post(w, page="check:1", answer="3"), 302),
    Case("page-key-done", lambda w: _post(w, page="done"), 302),
    Case("page-key-of-10000-characters", lambda w: _post(w, page="item:" + "9" * 10000 + ":0"), 302),
    Case("item-id-not-a-number", lambda w: _post(w, page="item:abc:0"), 302),
    # -- other links
    Case("a-form-sent-to-another-raters-link", _a_form_to_b, 302),
    Case("unknown-token", lambda w: w.client.post("/r/not-a-real-token/", _form(w.client, w.a)), 404, "Not Found"),
    # -- replays
    Case("same-form-twice", _replay("first"), 302, prepare=_keep("first", _finish_first_page)),
    Case("same-form-twice-with-other-answers", _replay("first", q_grammaticality="5"), 302,
         prepare=_keep("first", _finish_first_page)),
    Case("first-page-after-moving-on", _replay("first", q_likability="1"), 302,
         prepare=_keep("first", _finish_first_page)),
    Case("last-page-of-an-item-after-the-next-item", _replay("last", q_relevance="1"), 302,
         prepare=_keep("last", _finish_item)),
    # -- CSRF
    Case("no-csrf-token", lambda w: _post(w, csrfmiddlewaretoken=None), 403, CSRF),
    Case("wrong-csrf-token", lambda w: _post(w, csrfmiddlewaretoken="x" * 64), 403, CSRF),
    Case("csrf-token-of-another-browser", _csrf_token_of_another_browser, 403, CSRF),
    Case("no-csrf-cookie", lambda w: Client(enforce_csrf_checks=True).post(url_of(w.a), _form(w.client, w.a)),
         403, CSRF),
    # -- revoked link, completion, closed study
    Case("revoked-link", _replay("form"), 410, "This invitation link has been withdrawn", prepare=_revoke_after_loading),
    Case("after-completion", _replay("form"), 302, prepare=_complete_after_an_item),
    Case("study-closed", _replay("form"), 403, "This study has closed and takes no more ratings", prepare=_close_after_loading),
    # -- attention checks
    Case("check-answer-off-scale", lambda w: _post(w, answer="9"), 200, VALID_CHOICE.format(9),
         prepare=_to_attention_check),
    Case("check-answer-missing", lambda w: _post(w, answer=None), 200, "Please choose an answer.",
         prepare=_to_attention_check),
]


@pytest.fixture
def world(db, story_study, monkeypatch) -> World:
    monkeypatch.setattr("django.utils.timezone.now", lambda: NOW)
    # One rater per item, so A and B hold different items.
    study = open_study(story_study, raters_per_item=1)
    add_story_items(study)
    a, b = Rater.objects.create(study=study), Rater.objects.create(study=study)
    w = World(study, a, b, Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True))
    w.client.get(url_of(a))
    w.b_client.get(url_of(b))
    assert _claimed(a) != _claimed(b)
    return w


def test_there_are_at_least_25_cases():
    assert len(CASES) >= 25 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_malformed_post_is_refused_and_changes_nothing(world, case):
    if case.prepare is not None:
        case.prepare(world)
    before = database_snapshot()

    response = case.send(world)

    assert response.status_code == case.status, response.content.decode()[:500]
    if case.status == 302:  # the rater's own current page
        assert response["Location"] == (url_of(world.b) if case.send is _a_form_to_b else url_of(world.a))
    else:
        assert case.says in htmllib.unescape(response.content.decode())
    assert database_snapshot() == before


def test_the_same_form_twice_stores_one_rating_per_question(world):
    data = _form(world.client, world.a)
    world.client.post(url_of(world.a), data)
    world.client.post(url_of(world.a), {**data, "q_grammaticality": "1"})

    assert sorted(HumanRating.objects.filter(rater=world.a).values_list("question__key", "score")) == [
        ("cohesiveness", 3.0), ("grammaticality", 3.0), ("likability", 3.0)]


@pytest.mark.parametrize("elapsed", ["-5", "abc", "1e3", str(10**12), "99999999999999999999"])
def test_a_tampered_time_measure_is_dropped_and_the_answers_are_saved(world, elapsed):
    # The page script sends elapsed_ms; the rater cannot fix a hidden field, so a value the script
    # cannot have sent is ignored and the server's own measure is used.
    response = _post(world, elapsed_ms=elapsed)

    assert response.status_code == 302
    assert list(HumanRating.objects.filter(rater=world.a).values_list("time_spent_ms", flat=True)) == [0, 0, 0]
