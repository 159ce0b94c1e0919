"""The local Prolific server must behave as Prolific's documentation says, faults included. These tests
talk raw HTTP (urllib), not EvalHub's client, so a mistake shared by client and server cannot hide here."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support.prolific_server import (
    ACTIVE,
    APPROVED,
    AWAITING_REVIEW,
    COMPLETED,
    PAUSED,
    REJECTED,
    RETURNED,
    TIMED_OUT,
    UNPUBLISHED,
    Fault,
    ProlificServer,
    Transition,
    WebhookReceiver,
)

CODE = "C0MPL3TE"
REASON = "Your answers did not follow the instructions shown on the first page of the study, so we cannot use them."


def call(server: ProlificServer, method: str, path: str, body: Any = None, *, token: str | None = None,
         timeout: float = 5.0) -> tuple[int, Any, dict[str, str]]:
    """(status, parsed JSON body, headers) of one request to the server's API."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token != "":
        headers["Authorization"] = f"Token {server.token if token is None else token}"
    request = urllib.request.Request(server.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read()), dict(response.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers.items())


def study_body(**overrides: Any) -> dict[str, Any]:
    body = {
        "name": "Rate story continuations",
        "internal_name": "evalhub story-likert",
        "description": "Read short stories and rate them.",
        "external_study_url": "https://evalhub.example/s/story/open?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "prolific_id_option": "url_parameters",
        "completion_codes": [{"code": CODE, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "total_available_places": 2,
        "estimated_completion_time": 10,
        "reward": 150,
        "device_compatibility": ["desktop"],
    }
    body.update(overrides)
    return body


def published_study(server: ProlificServer, **overrides: Any) -> str:
    status, study, _ = call(server, "POST", "studies/", study_body(**overrides))
    assert status == 201, study
    status, _, _ = call(server, "POST", f"studies/{study['id']}/transition/", {"action": "PUBLISH"})
    assert status == 200
    return str(study["id"])


def finished(server: ProlificServer, study_id: str, participant_id: str | None = None) -> str:
    """A participant who took the study and completed it with the study's code; their submission id."""
    taken = server.participant_starts(study_id, participant_id)
    server.participant_completes(taken.submission_id, CODE)
    return taken.submission_id


@pytest.fixture
def server():
    with ProlificServer() as running:
        yield running


# -- authentication ------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["", "wrong-token"])
def test_requests_without_the_token_are_refused_with_401_in_prolifics_error_shape(server, token):
    status, body, _ = call(server, "GET", "users/me/", token=token)

    assert status == 401
    assert body == {"error": {"status": 401, "error_code": 401, "title": "Unauthorized", "detail": "Invalid token.",
                              "additional_information": ""}}
    assert server.request_count("users.me") == 1


def test_a_bearer_header_is_not_the_documented_token_scheme(server):
    request = urllib.request.Request(server.url + "users/me/", headers={"Authorization": f"Bearer {server.token}"})

    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)

    assert caught.value.code == 401


def test_the_token_opens_the_researchers_account_and_workspace(server):
    _, me, _ = call(server, "GET", "users/me/")
    _, workspaces, _ = call(server, "GET", "workspaces/")
    _, projects, _ = call(server, "GET", f"workspaces/{server.workspace_id}/projects/")

    assert me["id"] == server.researcher_id
    assert [w["id"] for w in workspaces["results"]] == [server.workspace_id]
    assert [p["id"] for p in projects["results"]] == [server.project_id]


def test_unknown_paths_are_404(server):
    status, body, _ = call(server, "GET", "study/")

    assert status == 404
    assert body["error"]["status"] == 404


# -- studies ---------------------------------------------------------------------------------------------


def test_a_created_study_is_an_unpublished_draft_with_what_was_sent(server):
    status, study, _ = call(server, "POST", "studies/", study_body())

    assert status == 201
    assert study["status"] == UNPUBLISHED
    assert study["reward"] == 150
    assert study["total_available_places"] == 2
    assert study["places_taken"] == 0
    assert study["completion_codes"][0]["code"] == CODE
    assert study["project"] == server.project_id
    assert call(server, "GET", f"studies/{study['id']}/")[1] == study


def test_studies_are_listed_so_a_lost_create_can_be_found_by_internal_name(server):
    _, first, _ = call(server, "POST", "studies/", study_body(internal_name="evalhub:a"))
    _, second, _ = call(server, "POST", "studies/", study_body(internal_name="evalhub:b"))

    status, listing, _ = call(server, "GET", "studies/")

    assert status == 200
    assert [(s["id"], s["internal_name"]) for s in listing["results"]] == [
        (first["id"], "evalhub:a"), (second["id"], "evalhub:b")]


def test_a_study_without_its_required_fields_is_refused_naming_each(server):
    status, body, _ = call(server, "POST", "studies/", {"name": "only a name"})

    assert status == 400
    assert set(body["error"]["detail"]) == {
        "description", "external_study_url", "prolific_id_option", "completion_codes", "total_available_places",
        "estimated_completion_time", "reward",
    }


@pytest.mark.parametrize(("field", "value"), [
    ("reward", 1.5),  # cents are an integer: 1.5 would be a pound and a half read as cents
    ("reward", "150"),
    ("total_available_places", 0),
    ("prolific_id_option", "cookie"),
    ("device_compatibility", ["smartwatch"]),
    ("external_study_url", "evalhub.example/s/story"),
    ("project", "no-such-project"),
    ("completion_codes", [{"code": "A", "code_type": "COMPLETED", "actions": []},
                          {"code": "A", "code_type": "OTHER", "actions": []}]),
    ("completion_codes", [{"code": "A", "code_type": "COMPLETED"}]),
])
def test_a_study_with_a_bad_field_is_refused_naming_it(server, field, value):
    status, body, _ = call(server, "POST", "studies/", study_body(**{field: value}))

    assert status == 400
    assert list(body["error"]["detail"]) == [field]


@pytest.mark.parametrize(("actions", "expected"), [
    (["PUBLISH"], ACTIVE),
    (["PUBLISH", "PAUSE"], PAUSED),
    (["PUBLISH", "PAUSE", "START"], ACTIVE),
    (["PUBLISH", "STOP"], COMPLETED),  # nothing to review
    (["PUBLISH", "PAUSE", "STOP"], COMPLETED),
])
def test_study_transitions_follow_the_state_machine(server, actions, expected):
    _, study, _ = call(server, "POST", "studies/", study_body())
    for action in actions:
        status, after, _ = call(server, "POST", f"studies/{study['id']}/transition/", {"action": action})
        assert status == 200, after

    assert after["status"] == expected
    assert [(t.action, t.to_status) for t in server.transitions if t.actor == "researcher"][-1] == (actions[-1], expected)


@pytest.mark.parametrize(("actions", "refused"), [
    ([], "PAUSE"),
    ([], "START"),
    ([], "STOP"),
    (["PUBLISH"], "PUBLISH"),
    (["PUBLISH"], "START"),
    (["PUBLISH", "STOP"], "START"),  # stopping is final
    ([], "RESUME"),
])
def test_impossible_study_transitions_are_refused_and_change_nothing(server, actions, refused):
    _, study, _ = call(server, "POST", "studies/", study_body())
    for action in actions:
        call(server, "POST", f"studies/{study['id']}/transition/", {"action": action})
    before = call(server, "GET", f"studies/{study['id']}/")[1]["status"]

    status, body, _ = call(server, "POST", f"studies/{study['id']}/transition/", {"action": refused})

    assert status == 400
    assert body["error"]["status"] == 400
    assert call(server, "GET", f"studies/{study['id']}/")[1]["status"] == before


def test_a_full_study_awaits_review_then_completes_when_all_are_approved(server):
    study_id = published_study(server)
    first, second = finished(server, study_id), finished(server, study_id)
    assert server.study(study_id)["status"] == AWAITING_REVIEW

    for submission_id in (first, second):
        call(server, "POST", f"submissions/{submission_id}/transition/", {"action": "APPROVE"})

    assert server.study(study_id)["status"] == COMPLETED
    moves = [(t.action, t.to_status) for t in server.transitions if t.resource == "study" and t.actor == "system"]
    assert moves == [("FULL", AWAITING_REVIEW), ("REVIEWED", COMPLETED)]


def test_a_study_still_being_worked_on_stays_active_when_its_places_are_all_taken(server):
    study_id = published_study(server)
    finished(server, study_id)
    working = server.participant_starts(study_id)

    assert server.study(study_id)["status"] == ACTIVE
    with pytest.raises(ValueError, match="no free place"):
        server.participant_starts(study_id)
    server.participant_completes(working.submission_id, CODE)
    assert server.study(study_id)["status"] == AWAITING_REVIEW


def test_rejecting_in_a_full_study_frees_a_place_and_pauses_it_until_restarted(server):
    study_id = published_study(server)
    first = finished(server, study_id)
    finished(server, study_id)

    call(server, "POST", f"submissions/{first}/transition/",
         {"action": "REJECT", "message": REASON, "rejection_category": "FAILED_INSTRUCTIONS"})

    assert server.study(study_id)["status"] == PAUSED
    assert server.study(study_id)["places_taken"] == 1
    with pytest.raises(ValueError, match="PAUSED"):
        server.participant_starts(study_id)
    call(server, "POST", f"studies/{study_id}/transition/", {"action": "START"})
    assert server.participant_starts(study_id).submission_id


def test_a_stopped_study_is_not_paused_when_a_place_frees(server):
    study_id = published_study(server)
    first = finished(server, study_id)
    call(server, "POST", f"studies/{study_id}/transition/", {"action": "STOP"})
    assert server.study(study_id)["status"] == AWAITING_REVIEW

    server.participant_returns(first)

    assert server.study(study_id)["status"] == COMPLETED


def test_places_may_only_grow_once_published_and_growing_reopens_a_full_study(server):
    study_id = published_study(server)
    finished(server, study_id)
    finished(server, study_id)

    refused = [call(server, "PATCH", f"studies/{study_id}/", change)[0]
               for change in ({"reward": 300}, {"total_available_places": 1})]
    status, study, _ = call(server, "PATCH", f"studies/{study_id}/", {"total_available_places": 3})

    assert refused == [400, 400]
    assert (status, study["status"], study["total_available_places"]) == (200, ACTIVE, 3)


def test_a_draft_may_change_anything(server):
    _, study, _ = call(server, "POST", "studies/", study_body())

    status, changed, _ = call(server, "PATCH", f"studies/{study['id']}/", {"reward": 300, "name": "Renamed"})

    assert (status, changed["reward"], changed["name"]) == (200, 300, "Renamed")


# -- participants ----------------------------------------------------------------------------------------


def test_a_participant_opens_the_study_url_with_prolifics_placeholders_filled(server):
    study_id = published_study(server)

    taken = server.participant_starts(study_id, "60bf9310e8dec401be6e9615")

    assert taken.url == (
        "https://evalhub.example/s/story/open?PROLIFIC_PID=60bf9310e8dec401be6e9615"
        f"&STUDY_ID={study_id}&SESSION_ID={taken.submission_id}"
    )
    assert server.submission(taken.submission_id)["status"] == ACTIVE


def test_a_participant_takes_a_study_once(server):
    study_id = published_study(server, total_available_places=5)
    server.participant_starts(study_id, "p1")

    with pytest.raises(ValueError, match="already took"):
        server.participant_starts(study_id, "p1")


def test_an_unpublished_study_cannot_be_taken(server):
    _, study, _ = call(server, "POST", "studies/", study_body())

    with pytest.raises(ValueError, match="UNPUBLISHED"):
        server.participant_starts(study["id"])


def test_returned_and_timed_out_submissions_free_their_places(server):
    study_id = published_study(server, total_available_places=3)
    returned, timed_out = server.participant_starts(study_id), server.participant_starts(study_id)

    server.participant_returns(returned.submission_id)
    server.participant_times_out(timed_out.submission_id)

    assert server.submission(returned.submission_id)["status"] == RETURNED
    assert server.submission(timed_out.submission_id)["status"] == TIMED_OUT
    assert server.study(study_id)["places_taken"] == 0


def test_a_code_with_automatic_approval_approves_on_completion(server):
    codes = [{"code": CODE, "code_type": "COMPLETED", "actions": [{"action": "AUTOMATICALLY_APPROVE"}]}]
    study_id = published_study(server, completion_codes=codes, total_available_places=3)
    taken = server.participant_starts(study_id)

    assert server.participant_completes(taken.submission_id, CODE) == APPROVED


# -- submissions -----------------------------------------------------------------------------------------


def test_submissions_are_listed_in_pages_of_the_asked_size_with_a_next_link_until_the_last(server):
    study_id = published_study(server, total_available_places=45)
    expected = [server.participant_starts(study_id).submission_id for _ in range(45)]

    pages, path = [], f"submissions/?study={study_id}&page_size=20"
    while path:
        status, page, _ = call(server, "GET", path)
        assert status == 200
        pages.append(page)
        next_href = page["_links"]["next"]["href"]
        path = next_href.removeprefix(server.url) if next_href else ""

    assert [len(p["results"]) for p in pages] == [20, 20, 5]
    assert [r["id"] for p in pages for r in p["results"]] == expected
    assert {p["meta"]["count"] for p in pages} == {45}
    assert pages[0]["_links"]["previous"]["href"] is None
    assert pages[-1]["_links"]["last"]["href"] == pages[-1]["_links"]["self"]["href"]


def test_the_default_page_holds_twenty_and_pages_are_capped_at_a_hundred(server):
    study_id = published_study(server, total_available_places=120)
    for _ in range(120):
        server.participant_starts(study_id)

    default = call(server, "GET", f"submissions/?study={study_id}")[1]
    capped = call(server, "GET", f"submissions/?study={study_id}&page_size=500")[1]

    assert (len(default["results"]), len(capped["results"])) == (20, 100)


def test_submissions_filter_by_study_and_by_status(server):
    one = published_study(server, total_available_places=3)
    other = published_study(server, total_available_places=3)
    done = finished(server, one)
    server.participant_starts(one)
    server.participant_starts(other)

    in_one = call(server, "GET", f"submissions/?study={one}")[1]["results"]
    waiting = call(server, "GET", f"submissions/?study={one}&status=awaiting_review")[1]["results"]

    assert len(in_one) == 2 and {r["study_id"] for r in in_one} == {one}
    assert [r["id"] for r in waiting] == [done]


@pytest.mark.parametrize("page_size", ["0", "-1", "lots"])
def test_a_bad_page_size_is_refused(server, page_size):
    assert call(server, "GET", f"submissions/?page_size={page_size}")[0] == 400


def test_a_submission_reads_back_with_its_code_and_no_bonus_yet(server):
    study_id = published_study(server)
    submission_id = finished(server, study_id, "p-7")

    status, submission, _ = call(server, "GET", f"submissions/{submission_id}/")

    assert status == 200
    assert (submission["participant"], submission["study_id"], submission["status"]) == ("p-7", study_id, AWAITING_REVIEW)
    assert submission["entered_code"] == CODE
    assert submission["bonus_payments"] == []


def test_approving_twice_is_ignored_the_second_time(server):
    submission_id = finished(server, published_study(server))

    first = call(server, "POST", f"submissions/{submission_id}/transition/", {"action": "APPROVE"})
    second = call(server, "POST", f"submissions/{submission_id}/transition/", {"action": "APPROVE"})

    assert (first[0], first[1]["status"], second[0], second[1]["status"]) == (200, APPROVED, 200, APPROVED)
    assert [t.action for t in server.transitions if t.resource_id == submission_id] == ["START", "COMPLETE", "APPROVE"]


@pytest.mark.parametrize(("body", "fields"), [
    ({"action": "REJECT"}, {"message", "rejection_category"}),
    ({"action": "REJECT", "message": REASON}, {"rejection_category"}),
    ({"action": "REJECT", "message": "x" * 99, "rejection_category": "LOW_EFFORT"}, {"message"}),
    ({"action": "REJECT", "message": REASON, "rejection_category": "RUDE"}, {"rejection_category"}),
    ({"action": "UNREJECT"}, {"action"}),
])
def test_a_rejection_needs_a_hundred_character_message_and_a_category(server, body, fields):
    submission_id = finished(server, published_study(server))

    status, error, _ = call(server, "POST", f"submissions/{submission_id}/transition/", body)

    assert status == 400
    assert set(error["error"]["detail"]) == fields
    assert server.submission(submission_id)["status"] == AWAITING_REVIEW


def test_a_rejection_with_exactly_a_hundred_characters_is_recorded_with_its_reason(server):
    submission_id = finished(server, published_study(server))
    message = "m" * 100

    status, submission, _ = call(server, "POST", f"submissions/{submission_id}/transition/",
                                 {"action": "REJECT", "message": message, "rejection_category": "FAILED_CHECK"})

    assert (status, submission["status"]) == (200, REJECTED)
    assert server.transitions[-1] == Transition("submission", submission_id, "REJECT", AWAITING_REVIEW, REJECTED,
                                                "researcher", message, "FAILED_CHECK")


def test_only_a_submission_awaiting_review_can_be_approved(server):
    taken = server.participant_starts(published_study(server))

    status, _, _ = call(server, "POST", f"submissions/{taken.submission_id}/transition/", {"action": "APPROVE"})

    assert status == 400
    assert server.submission(taken.submission_id)["status"] == ACTIVE


# -- bonuses ---------------------------------------------------------------------------------------------


def test_a_bonus_record_reports_amount_fees_and_total_in_cents_as_documented(server):
    study_id = published_study(server)
    first, second = finished(server, study_id, "p-1"), finished(server, study_id, "p-2")

    status, bulk, _ = call(server, "POST", "submissions/bonus-payments/",
                           {"study_id": study_id, "csv_bonuses": f"p-1,4.25\n{second},4.25\n"})

    # The documented example: two bonuses of 4.25 -> amount 850, fees 283.34, total 1133.34.
    assert status == 201
    assert {k: bulk[k] for k in ("study", "amount", "fees", "vat", "total_amount")} == {
        "study": study_id, "amount": 850, "fees": 283.34, "vat": 0, "total_amount": 1133.34}
    assert server.payments == []
    assert call(server, "GET", f"submissions/{first}/")[1]["bonus_payments"] == []


@pytest.mark.parametrize("line", ["not-in-study,1.00", "p-1,0", "p-1,-2", "p-1,1.005", "p-1,lots"])
def test_a_bonus_line_naming_an_outsider_or_a_bad_amount_is_refused(server, line):
    study_id = published_study(server)
    finished(server, study_id, "p-1")

    status, body, _ = call(server, "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": line})

    assert status == 400
    assert line.split(",")[0] in body["error"]["detail"]["csv_bonuses"][0]


def test_paying_a_bonus_record_twice_pays_every_line_twice(server):
    study_id = published_study(server)
    submission_id = finished(server, study_id, "p-1")
    bulk = call(server, "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": "p-1,0.50"})[1]

    answers = [call(server, "POST", f"bulk-bonus-payments/{bulk['id']}/pay/") for _ in range(2)]

    assert [status for status, _, _ in answers] == [202, 202]
    assert "being processed asynchronously" in answers[0][1]
    assert [(p.participant_id, p.amount_cents) for p in server.payments] == [("p-1", 50), ("p-1", 50)]
    assert server.submission(submission_id)["bonus_payments"] == [50, 50]
    assert server.bulk_pay_calls(bulk["id"]) == 2


def test_paying_an_unknown_bonus_record_is_404(server):
    assert call(server, "POST", "bulk-bonus-payments/5f00000000000000000000ff/pay/")[0] == 404


def test_asynchronous_payments_reach_the_submission_only_when_settled():
    with ProlificServer(settle_payments=False) as server:
        study_id = published_study(server)
        submission_id = finished(server, study_id, "p-1")
        bulk = call(server, "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": "p-1,1.00"})[1]
        call(server, "POST", f"bulk-bonus-payments/{bulk['id']}/pay/")

        assert len(server.payments) == 1
        assert server.submission(submission_id)["bonus_payments"] == []
        assert server.settle_payments() == 1
        assert server.submission(submission_id)["bonus_payments"] == [100]


# -- faults ----------------------------------------------------------------------------------------------


def test_a_429_carries_retry_after_and_does_nothing(server):
    server.retry_after = 7
    server.fail_next("studies.create", Fault.RATE_LIMIT)

    status, body, headers = call(server, "POST", "studies/", study_body())

    assert (status, headers["Retry-After"], body["error"]["status"]) == (429, "7", 429)
    assert server.request_count("studies.create") == 1
    assert call(server, "POST", "studies/", study_body())[0] == 201  # only the next one failed


def test_a_500_does_nothing(server):
    study_id = published_study(server)
    submission_id = finished(server, study_id)
    server.fail_next("submissions.transition", "500", times=2)

    answers = [call(server, "POST", f"submissions/{submission_id}/transition/", {"action": "APPROVE"})[0]
               for _ in range(3)]

    assert answers == [500, 500, 200]
    assert [t.action for t in server.transitions if t.resource_id == submission_id][-1] == "APPROVE"
    assert server.request_count("submissions.transition") == 3


def test_a_dropped_answer_comes_after_the_action_so_the_pay_happened(server):
    study_id = published_study(server)
    finished(server, study_id, "p-1")
    bulk = call(server, "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": "p-1,2.00"})[1]
    server.fail_next("bonuses.pay", Fault.DROP_AFTER_ACTION)

    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, urllib.error.URLError)):
        call(server, "POST", f"bulk-bonus-payments/{bulk['id']}/pay/")

    assert [p.amount_cents for p in server.payments] == [200]
    assert server.requests[-1].status is None


def test_a_hung_request_times_out_the_caller_and_does_nothing(server):
    server.hang_seconds = 3.0
    server.fail_next("studies.create", Fault.HANG)
    started = time.monotonic()

    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        call(server, "POST", "studies/", study_body(), timeout=0.3)

    assert time.monotonic() - started < 2.0
    assert server.transitions == [] and server.request_count("studies.create") == 1


def test_a_trickled_answer_arrives_whole_but_slowly(server):
    server.trickle_interval = 0.002
    server.fail_next("users.me", Fault.TRICKLE)
    started = time.monotonic()

    status, me, _ = call(server, "GET", "users/me/")

    assert (status, me["id"]) == (200, server.researcher_id)
    assert time.monotonic() - started > 0.1


def test_faults_name_a_known_endpoint(server):
    with pytest.raises(ValueError, match="unknown endpoint"):
        server.fail_next("bonus.pay", Fault.SERVER_ERROR)


def test_leaky_errors_echo_the_authorization_header_like_a_bad_proxy(server):
    server.leaky_errors = True

    _, body, _ = call(server, "GET", "studies/nope/")

    assert server.token in body["error"]["detail"]


# -- webhooks --------------------------------------------------------------------------------------------


def documented_signature_is_valid(secret: str, hook) -> bool:
    """webhooks/verifying's Python example, line for line (it re-serialises the parsed body)."""
    timestamp = hook.headers["X-Prolific-Request-Timestamp"]
    signature = hook.headers["X-Prolific-Request-Signature"]
    encoded_secret = secret.encode()
    body = json.dumps(json.loads(hook.body))
    calculated_signature = base64.b64encode(hmac.new(encoded_secret, str.encode(timestamp + body), hashlib.sha256).digest())
    return hmac.compare_digest(calculated_signature, str.encode(signature))


def test_a_status_change_is_delivered_signed_as_documented(server):
    with WebhookReceiver() as receiver:
        server.subscribe(receiver.url)
        study_id = published_study(server)
        taken = server.participant_starts(study_id, "p-1")
        server.participant_returns(taken.submission_id)

        deliveries = server.deliver_events()

    assert [d.status for d in deliveries] == [200, 200]
    bodies = [json.loads(hook.body) for hook in receiver.received]
    assert bodies == [
        {"resource_id": taken.submission_id, "event_type": "submission.status.change", "participant_id": "p-1",
         "status": ACTIVE},
        {"resource_id": taken.submission_id, "event_type": "submission.status.change", "participant_id": "p-1",
         "status": RETURNED},
    ]
    secret = server.webhook_secret()
    assert all(documented_signature_is_valid(secret, hook) for hook in receiver.received)
    assert len({hook.headers["X-Event-ID"] for hook in receiver.received}) == 2
    assert abs(int(receiver.received[0].headers["X-Prolific-Request-Timestamp"]) - time.time()) < 60


def test_an_event_delivered_twice_keeps_its_event_id(server):
    with WebhookReceiver() as receiver:
        server.subscribe(receiver.url)
        server.participant_starts(published_study(server))
        server.deliver_events(times=2)
        event_id = receiver.received[0].headers["X-Event-ID"]
        server.redeliver(event_id)

    assert [hook.headers["X-Event-ID"] for hook in receiver.received] == [event_id] * 3
    assert len({hook.body for hook in receiver.received}) == 1
    assert server.pending_events() == []


def test_a_tampered_body_or_another_secret_fails_the_documented_check(server):
    with WebhookReceiver() as receiver:
        server.subscribe(receiver.url)
        server.participant_starts(published_study(server))
        server.deliver_events(timestamp=1_700_000_000)

    hook = receiver.received[0]
    tampered = type(hook)(hook.path, hook.headers, hook.body.replace(b"ACTIVE", b"APPROVED"))
    assert hook.headers["X-Prolific-Request-Timestamp"] == hook.headers["X-Timestamp"] == "1700000000"
    assert documented_signature_is_valid(server.webhook_secret(), hook)
    assert not documented_signature_is_valid(server.webhook_secret(), tampered)
    assert not documented_signature_is_valid("another secret", hook)


def test_study_status_changes_go_to_their_own_subscribers(server):
    with WebhookReceiver() as receiver:
        server.subscribe(receiver.url, "study.status.change")
        study_id = published_study(server)
        server.participant_starts(study_id)
        server.deliver_events()

    assert [json.loads(h.body) for h in receiver.received] == [
        {"resource_id": study_id, "event_type": "study.status.change", "metadata": {}, "status": ACTIVE}]


def test_a_subscription_made_through_the_api_delivers_only_once_confirmed(server):
    with WebhookReceiver() as receiver:
        refused = call(server, "POST", "hooks/subscriptions/", {
            "event_type": "submission.status.change", "target_url": receiver.url, "workspace_id": server.workspace_id})
        status, secret, _ = call(server, "POST", "hooks/secrets/", {"workspace_id": server.workspace_id})
        created, subscription, headers = call(server, "POST", "hooks/subscriptions/", {
            "event_type": "submission.status.change", "target_url": receiver.url, "workspace_id": server.workspace_id})
        subscription_id = subscription["results"][0]["id"]
        study_id = published_study(server, total_available_places=3)
        server.participant_starts(study_id)
        unconfirmed = server.deliver_events()
        wrong = call(server, "POST", f"hooks/subscriptions/{subscription_id}/", {"secret": "guess"})[0]
        confirmed = call(server, "POST", f"hooks/subscriptions/{subscription_id}/", {"secret": headers["X-Hook-Secret"]})
        server.participant_starts(study_id)
        delivered = server.deliver_events()

    assert refused[0] == 400  # a secret must exist first
    assert (status, created, unconfirmed, wrong, confirmed[0]) == (201, 201, [], 400, 200)
    assert secret["value"] == server.webhook_secret()
    assert [d.status for d in delivered] == [200]
    assert documented_signature_is_valid(secret["value"], receiver.received[0])


def test_a_failing_target_is_reported_not_raised(server):
    with WebhookReceiver(status=500) as receiver:
        server.subscribe(receiver.url)
        server.participant_starts(published_study(server))
        deliveries = server.deliver_events()

    assert [(d.status, d.error) for d in deliveries] == [(500, None)]
