"""EvalHub's Prolific client against the local Prolific server (tests/support/prolific_server.py): what it
sends, what it reads back, how it classifies every failure, and that its token never shows."""

from __future__ import annotations

import logging
import pickle
import threading
import time
import traceback
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotations.prolific import (
    BonusLine,
    CompletionCode,
    ProlificClient,
    ProlificError,
    StudyDraft,
    new_bonus_payments,
)
from annotations.prolific.client import _retry_after_seconds
from tests.support.prolific_server import Fault, ProlificServer

CODE = "EVH-7Q2K"
REASON = (
    "You answered the attention check on page three with the option it asked you not to choose, so we cannot "
    "use your ratings."
)


@pytest.fixture
def server():
    with ProlificServer() as running:
        yield running


@pytest.fixture
def client(server):
    return ProlificClient(token=server.token, base_url=server.url, timeout=5.0)


def draft(**overrides) -> StudyDraft:
    fields = {
        "name": "Rate story continuations",
        "internal_name": "evalhub:story:1",
        "description": "Read short stories and rate how well they continue.",
        "external_study_url": "https://evalhub.example/s/story/open?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "completion_codes": (CompletionCode(CODE),),
        "total_available_places": 4,
        "estimated_completion_time": 12,
        "reward": 240,
    }
    fields.update(overrides)
    return StudyDraft(**fields)


def live_study(client: ProlificClient, **overrides) -> str:
    study = client.create_study(draft(**overrides))
    client.publish_study(study.id)
    return study.id


def finished(server: ProlificServer, study_id: str, participant_id: str | None = None) -> str:
    taken = server.participant_starts(study_id, participant_id)
    server.participant_completes(taken.submission_id, CODE)
    return taken.submission_id


# -- studies ---------------------------------------------------------------------------------------------


def test_a_study_is_created_with_the_documented_fields_and_comes_back_as_a_draft(server, client):
    study = client.create_study(draft(maximum_allowed_time=40, device_compatibility=("desktop",)))

    sent = server.requests[-1].body
    assert sent == {
        "name": "Rate story continuations",
        "internal_name": "evalhub:story:1",
        "description": "Read short stories and rate how well they continue.",
        "external_study_url": "https://evalhub.example/s/story/open?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "prolific_id_option": "url_parameters",
        "completion_codes": [{"code": CODE, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        "total_available_places": 4,
        "estimated_completion_time": 12,
        "reward": 240,
        "device_compatibility": ["desktop"],
        "filters": [],
        "maximum_allowed_time": 40,
    }
    assert (study.status, study.reward, study.total_available_places, study.places_taken) == ("UNPUBLISHED", 240, 4, 0)
    assert study.project == server.project_id
    assert client.get_study(study.id) == study


@pytest.mark.parametrize("overrides", [
    {"reward": 2.4},  # cents are whole: 2.4 would be a bug upstream
    {"reward": 0},
    {"total_available_places": True},
    {"estimated_completion_time": 0},
    {"maximum_allowed_time": 5},  # shorter than the 12 minutes estimated
    {"external_study_url": "evalhub.example/open"},
    {"prolific_id_option": "ask"},
    {"device_compatibility": ("watch",)},
    {"device_compatibility": ()},
    {"completion_codes": ()},
    {"completion_codes": (CompletionCode("A"), CompletionCode("A"))},
    {"name": " "},
])
def test_a_draft_that_prolific_would_refuse_is_refused_before_sending(overrides):
    with pytest.raises(ValueError):
        draft(**overrides)


def test_a_study_goes_live_pauses_resumes_and_stops(server, client):
    study = client.create_study(draft())

    statuses = [client.publish_study(study.id).status, client.pause_study(study.id).status,
                client.start_study(study.id).status, client.stop_study(study.id).status]

    assert statuses == ["ACTIVE", "PAUSED", "ACTIVE", "COMPLETED"]
    assert [(t.action, t.to_status) for t in server.transitions] == [
        ("PUBLISH", "ACTIVE"), ("PAUSE", "PAUSED"), ("START", "ACTIVE"), ("STOP", "COMPLETED")]


def test_a_refused_transition_is_a_permanent_error_carrying_prolifics_reason(client):
    study = client.create_study(draft())

    with pytest.raises(ProlificError) as caught:
        client.pause_study(study.id)

    error = caught.value
    assert (error.status, error.transient, error.outcome_unknown) == (400, False, False)
    assert "Cannot PAUSE a study that is UNPUBLISHED" in str(error)


def test_places_can_be_added_to_a_live_study(client):
    study_id = live_study(client)

    assert client.update_study(study_id, total_available_places=6).total_available_places == 6
    with pytest.raises(ProlificError) as caught:
        client.update_study(study_id, total_available_places=2)
    assert caught.value.status == 400


def test_a_draft_whose_create_answer_was_lost_is_found_by_its_internal_name(server, client):
    server.fail_next("studies.create", Fault.DROP_AFTER_ACTION)

    with pytest.raises(ProlificError) as caught:
        client.create_study(draft(internal_name="evalhub:story:retry-key"))
    found = client.find_studies(internal_name="evalhub:story:retry-key")

    assert caught.value.outcome_unknown
    assert [s.internal_name for s in found] == ["evalhub:story:retry-key"]
    assert server.request_count("studies.create") == 1


def test_the_account_workspace_and_project_are_readable(server, client):
    assert client.whoami() == server.researcher_id
    assert [w.id for w in client.list_workspaces()] == [server.workspace_id]
    assert [(p.id, p.workspace_id) for p in client.list_projects(server.workspace_id)] == [
        (server.project_id, server.workspace_id)]


def test_an_id_is_one_path_segment(server, client):
    with pytest.raises(ValueError):
        client.get_study("../users/me")

    assert server.requests == []


# -- submissions -----------------------------------------------------------------------------------------


def test_every_submission_is_listed_across_pages(server):
    client = ProlificClient(token=server.token, base_url=server.url, page_size=20)
    study_id = live_study(client, total_available_places=45)
    expected = [server.participant_starts(study_id).submission_id for _ in range(45)]

    submissions = client.list_submissions(study_id)

    assert [s.id for s in submissions] == expected
    assert server.request_count("submissions.list") == 3
    assert {s.status for s in submissions} == {"ACTIVE"}
    assert all(s.bonus_payments is None for s in submissions)


def test_an_empty_study_lists_no_submission_in_one_request(server, client):
    assert client.list_submissions(live_study(client)) == []
    assert server.request_count("submissions.list") == 1


def test_a_listing_can_ask_for_one_status(server, client):
    study_id = live_study(client)
    done = finished(server, study_id)
    server.participant_starts(study_id)

    assert [s.id for s in client.list_submissions(study_id, status="AWAITING_REVIEW")] == [done]


def test_a_submission_reads_back_with_participant_code_and_payments(server, client):
    study_id = live_study(client)
    submission_id = finished(server, study_id, "60bf9310e8dec401be6e9615")

    submission = client.get_submission(submission_id)

    assert (submission.participant_id, submission.study_id, submission.status) == (
        "60bf9310e8dec401be6e9615", study_id, "AWAITING REVIEW")
    assert (submission.study_code, submission.bonus_payments) == (CODE, ())


def test_approval_and_rejection_reach_prolific(server, client):
    study_id = live_study(client)
    approved, rejected = finished(server, study_id), finished(server, study_id)

    assert client.approve_submission(approved).status == "APPROVED"
    assert client.approve_submission(approved).status == "APPROVED"  # idempotent on Prolific's side
    assert client.reject_submission(rejected, message=REASON, category="FAILED_CHECK").status == "REJECTED"
    assert server.transitions[-1].message == REASON
    assert server.transitions[-1].rejection_category == "FAILED_CHECK"


@pytest.mark.parametrize(("message", "category"), [
    ("Too short.", "FAILED_CHECK"),
    (" " * 120, "FAILED_CHECK"),
    (REASON, "RUDE"),
])
def test_a_rejection_prolific_would_refuse_is_refused_without_a_request(server, client, message, category):
    submission_id = finished(server, live_study(client))
    before = server.request_count("submissions.transition")

    with pytest.raises(ValueError):
        client.reject_submission(submission_id, message=message, category=category)

    assert server.request_count("submissions.transition") == before


# -- bonuses ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cents", "csv"), [(5, "p,0.05"), (100, "p,1.00"), (1234, "p,12.34"), (30, "p,0.30")])
def test_bonus_lines_go_out_in_pounds_from_cents(cents, csv):
    assert BonusLine("p", cents).csv() == csv


@pytest.mark.parametrize(("recipient", "cents"), [("p", 0), ("p", 1.5), ("p,q", 10), ("", 10), ("p\n", 10)])
def test_a_bonus_line_must_be_one_recipient_and_whole_cents(recipient, cents):
    with pytest.raises(ValueError):
        BonusLine(recipient, cents)


def test_a_bonus_record_reports_what_it_will_cost(server, client):
    study_id = live_study(client)
    finished(server, study_id, "p-1")
    second = finished(server, study_id, "p-2")

    record = client.create_bonus(study_id, [BonusLine("p-1", 425), BonusLine(second, 425)])

    assert server.requests[-1].body == {"study_id": study_id, "csv_bonuses": f"p-1,4.25\n{second},4.25"}
    assert (record.study_id, record.amount, record.fees, record.vat, record.total_amount) == (
        study_id, Decimal(850), Decimal("283.34"), Decimal(0), Decimal("1133.34"))
    assert server.payments == []


def test_paying_twice_pays_twice_which_is_why_the_client_never_retries(server, client):
    study_id = live_study(client)
    submission_id = finished(server, study_id, "p-1")
    record = client.create_bonus(study_id, [BonusLine("p-1", 50)])

    client.pay_bonus(record.id)
    client.pay_bonus(record.id)

    assert client.bonus_payments(submission_id) == (50, 50)
    assert server.request_count("bonuses.pay") == 2


def pay_exactly_once(client: ProlificClient, *, study_id: str, submission_id: str, recipient: str, cents: int) -> str:
    """The procedure the app follows (docs/prolific-api-notes.md): note what was paid, create the record, pay
    once; a failure that may have paid is settled by reading back, never by paying again. Only a failure
    that certainly did not act (429, a refused connection) pays the same record again."""
    before = client.bonus_payments(submission_id)
    record = client.create_bonus(study_id, [BonusLine(recipient, cents)])
    for _ in range(3):
        try:
            client.pay_bonus(record.id)
            return "paid"
        except ProlificError as exc:
            if not exc.transient:
                raise
            if exc.outcome_unknown:
                after = client.bonus_payments(submission_id)
                return "paid" if new_bonus_payments(before, after) == [cents] else "unknown"
    return "unpaid"


def test_a_pay_whose_answer_is_dropped_reads_back_as_paid_and_is_not_paid_again(server, client):
    study_id = live_study(client)
    submission_id = finished(server, study_id, "p-1")
    server.fail_next("bonuses.pay", Fault.DROP_AFTER_ACTION)

    outcome = pay_exactly_once(client, study_id=study_id, submission_id=submission_id, recipient="p-1", cents=250)

    assert outcome == "paid"
    assert server.request_count("bonuses.pay") == 1
    assert [(p.participant_id, p.amount_cents) for p in server.payments] == [("p-1", 250)]
    assert client.bonus_payments(submission_id) == (250,)


def test_a_pay_refused_with_429_is_paid_once_when_retried(server, client):
    study_id = live_study(client)
    submission_id = finished(server, study_id, "p-1")
    server.fail_next("bonuses.pay", Fault.RATE_LIMIT, times=2)

    outcome = pay_exactly_once(client, study_id=study_id, submission_id=submission_id, recipient="p-1", cents=250)

    assert (outcome, server.request_count("bonuses.pay"), len(server.payments)) == ("paid", 3, 1)


def test_a_lost_pay_that_has_not_settled_yet_is_left_unknown_not_paid_again():
    with ProlificServer(settle_payments=False) as server:
        client = ProlificClient(token=server.token, base_url=server.url)
        study_id = live_study(client)
        submission_id = finished(server, study_id, "p-1")
        server.fail_next("bonuses.pay", Fault.DROP_AFTER_ACTION)

        outcome = pay_exactly_once(client, study_id=study_id, submission_id=submission_id, recipient="p-1", cents=250)
        server.settle_payments()

        assert (outcome, server.request_count("bonuses.pay")) == ("unknown", 1)
        assert new_bonus_payments((), client.bonus_payments(submission_id)) == [250]


@pytest.mark.parametrize(("before", "after", "new"), [
    ((), (), []),
    ((), (250,), [250]),
    ((50,), (50, 50), [50]),
    ((100, 50), (50, 100, 250), [250]),
])
def test_new_payments_are_a_multiset_difference(before, after, new):
    assert new_bonus_payments(before, after) == new


def test_payments_that_vanished_are_not_papered_over():
    with pytest.raises(ValueError):
        new_bonus_payments((50, 50), (50,))


# -- failures --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("fault", "status", "transient", "unknown"), [
    (Fault.RATE_LIMIT, 429, True, False),
    (Fault.SERVER_ERROR, 500, True, True),
    (Fault.DROP_AFTER_ACTION, None, True, True),
])
def test_faults_are_classified(server, client, fault, status, transient, unknown):
    server.retry_after = 7
    server.fail_next("studies.create", fault)

    with pytest.raises(ProlificError) as caught:
        client.create_study(draft())

    error = caught.value
    assert (error.status, error.transient, error.outcome_unknown) == (status, transient, unknown)
    assert error.retry_after == (7 if fault is Fault.RATE_LIMIT else None)


def test_an_error_survives_pickling_with_its_classification():
    error = ProlificError("POST bulk-bonus-payments/x/pay/: timed out", transient=True, status=None,
                          retry_after=None, outcome_unknown=True)

    copy = pickle.loads(pickle.dumps(error))

    assert (copy.message, copy.transient, copy.status, copy.outcome_unknown) == (error.message, True, None, True)


def test_a_wrong_token_is_a_permanent_401(server):
    client = ProlificClient(token="not-the-token", base_url=server.url)

    with pytest.raises(ProlificError) as caught:
        client.whoami()

    assert (caught.value.status, caught.value.transient) == (401, False)


def test_an_unknown_study_is_a_permanent_404(client):
    with pytest.raises(ProlificError) as caught:
        client.get_study("5f00000000000000000000ff")

    assert (caught.value.status, caught.value.transient) == (404, False)


def test_a_refused_connection_is_transient_and_certainly_did_nothing():
    with ProlificServer() as server:
        url, token = server.url, server.token
    client = ProlificClient(token=token, base_url=url, timeout=2.0)

    with pytest.raises(ProlificError) as caught:
        client.whoami()

    assert (caught.value.status, caught.value.transient, caught.value.outcome_unknown) == (None, True, False)


@pytest.mark.parametrize("fault", [Fault.HANG, Fault.TRICKLE])
def test_every_call_gives_up_at_its_deadline(server, fault):
    server.hang_seconds = 10.0
    server.trickle_interval = 0.05  # a study's JSON is ~1 KB: nearly a minute at this pace
    client = ProlificClient(token=server.token, base_url=server.url, timeout=0.6)
    study_id = client.create_study(draft()).id
    server.fail_next("studies.get", fault)
    started = time.monotonic()

    with pytest.raises(ProlificError) as caught:
        client.get_study(study_id)

    elapsed = time.monotonic() - started
    assert 0.5 < elapsed < 1.5
    assert (caught.value.transient, caught.value.outcome_unknown) == (True, True)
    assert "timed out" in str(caught.value)


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd


def test_a_redirect_is_refused_so_the_token_never_follows_it():
    seen_elsewhere: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002
            return

        def do_GET(self):
            seen_elsewhere.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    elsewhere = serve(Elsewhere)

    class Redirecting(Elsewhere):
        def do_GET(self):
            # urllib follows a 302 on GET by default, Authorization header included.
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{elsewhere.server_address[1]}/collect")
            self.send_header("Content-Length", "0")
            self.end_headers()

    redirector = serve(Redirecting)
    try:
        client = ProlificClient(token="secret-token-1234", base_url=f"http://127.0.0.1:{redirector.server_address[1]}/api/v1/")
        with pytest.raises(ProlificError) as caught:
            client.get_study("5f0000000000000000000001")
    finally:
        for httpd in (redirector, elsewhere):
            httpd.shutdown()
            httpd.server_close()

    assert (caught.value.status, caught.value.transient) == (302, False)
    assert seen_elsewhere == []


# -- the token -------------------------------------------------------------------------------------------


def all_text_of(error: ProlificError) -> str:
    return " ".join([str(error), repr(error), repr(error.args), "".join(traceback.format_exception(error))])


@pytest.mark.parametrize("fault", [None, Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.DROP_AFTER_ACTION, Fault.HANG])
def test_the_token_is_in_no_error_repr_or_log_line_even_when_the_server_echoes_it(server, caplog, fault):
    server.leaky_errors = True  # every error detail repeats the request's Authorization header
    server.hang_seconds = 3.0
    client = ProlificClient(token=server.token, base_url=server.url, timeout=0.5)
    if fault is not None:
        server.fail_next("studies.get", fault)
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ProlificError) as caught:
        client.get_study("5f00000000000000000000ff")  # unknown: a 404 when no fault comes first

    assert server.token not in all_text_of(caught.value)
    assert server.token not in caplog.text
    assert server.token not in repr(client) + str(vars(client))
    assert caplog.records, "the call should have been logged"
    if fault is None:
        assert "***" in str(caught.value)  # the echoed header was there, and scrubbed


def test_a_successful_call_is_logged_once_without_the_token(server, client, caplog):
    caplog.set_level(logging.DEBUG, logger="annotations.prolific")

    client.create_study(draft())

    lines = [r.getMessage() for r in caplog.records if r.name.startswith("annotations.prolific")]
    assert len(lines) == 1 and lines[0].startswith("prolific POST studies/ -> 201 in ")
    assert server.token not in caplog.text


@pytest.mark.parametrize(("token", "base_url"), [
    ("", "https://api.prolific.com/api/v1/"),
    ("  ", "https://api.prolific.com/api/v1/"),
    ("tok", "api.prolific.com/api/v1/"),
    ("tok", "ftp://api.prolific.com/"),
])
def test_a_client_needs_a_token_and_an_http_url(token, base_url):
    with pytest.raises(ValueError):
        ProlificClient(token=token, base_url=base_url)


def test_the_base_url_works_with_or_without_its_trailing_slash(server):
    client = ProlificClient(token=server.token, base_url=server.url.rstrip("/"))

    assert client.whoami() == server.researcher_id


@pytest.mark.parametrize(("value", "expected"), [
    ("7", 7.0),
    ("0", 0.0),
    ("-3", 0.0),
    ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),  # ten seconds after "now" below
    ("soon", None),
    (None, None),
])
def test_retry_after_is_read_as_seconds_or_as_an_http_date(value, expected):
    now = 1445412480.0  # 2015-10-21T07:28:00Z
    assert _retry_after_seconds(value, now) == expected
