"""A real HTTP server that speaks the part of Prolific's API EvalHub uses, for tests and local runs.

Why a real server: EvalHub's Prolific client must survive what the network does to money-moving calls
(a 429, a 500, a response lost after the server acted), and only a socket exercises its error paths.
Standard library only, like ``openai_server``. State lives in memory, guarded by one lock.

Endpoints, under ``/api/v1/``, each following the documentation page named (docs.prolific.com/api-reference/;
a title in quotes names a page by its menu entry):

- ``POST /studies/`` (api-reference/studies/create-study): required name, description,
  external_study_url, prolific_id_option (question | url_parameters | not_required), completion_codes
  ([{code, code_type, actions: [{action}]}]), total_available_places, estimated_completion_time (minutes),
  reward (cents, an integer); optional internal_name, maximum_allowed_time, device_compatibility
  (desktop | tablet | mobile), peripheral_requirements, filters, project. 201 with the study.
- ``GET /studies/`` ("List all studies"; unpaginated here: how a caller finds the draft a lost answer
  hid, by its internal_name), ``GET /studies/{id}/`` ("Retrieve a study"), ``PATCH /studies/{id}/``
  (studies/update-study).
- ``POST /studies/{id}/transition/`` {action: PUBLISH | PAUSE | START | STOP} ("Transition a study's
  status"; the actions as in Prolific's own CLI, prolific-oss/cli model/study.go). Statuses from
  studies/the-study-object: UNPUBLISHED, ACTIVE, PAUSED, AWAITING REVIEW, COMPLETED.
- ``GET /submissions/?study=&page=&page_size=&status=`` (submissions/get-submissions: "Paginate by
  page_size and page (Default page_size is 20)"), ``GET /submissions/{id}/`` (submissions/get-submission,
  with ``bonus_payments`` in cents), ``POST /submissions/{id}/transition/`` {action: APPROVE | REJECT,
  message (>= 100 characters), rejection_category} (submissions/transition-submission; the categories
  are the CLI's list, cmd/submission/transition.go). Submission statuses from submissions/submission-object.
- ``POST /submissions/bonus-payments/`` {study_id, csv_bonuses: "<participant or submission id>,<amount
  in pounds/dollars>\\n..."} -> 201 {id, study, amount, fees, vat, total_amount}, amounts in cents
  (bonuses/create-bonus-payments, whose example: two bonuses of 4.25 give amount 850, fees 283.34,
  total 1133.34). ``POST /bulk-bonus-payments/{id}/pay/`` -> 202 with a JSON string
  (bonuses/pay-bonus-payments: "This endpoint is **not idempotent**": every call pays every line again).
- ``GET /workspaces/``, ``GET /workspaces/{id}/projects/`` (the Workspaces and Projects sections): a
  study's ``project``.
- ``GET /users/me/`` ("Retrieve a user"): what a token check calls.
- ``POST /hooks/secrets/``, ``GET /hooks/secrets/``, ``POST /hooks/subscriptions/`` (201, the secret to
  confirm with in the ``X-Hook-Secret`` header), ``POST /hooks/subscriptions/{id}/`` {secret} to confirm,
  ``GET /hooks/subscriptions/`` (webhooks/*).

Every request needs ``Authorization: Token <token>`` (introduction, "Authentication"); errors have the
shape ``{"error": {"status", "error_code", "title", "detail", "additional_information"}}`` that
Prolific's CLI decodes (client/responses.go, JSONAPIError).

Webhooks (webhooks/receiving, webhooks/verifying, webhooks/idempotency-and-the-x-event-id-header,
webhooks/handling-event-order-with-x-timestamp): a ``submission.status.change`` body is
``{"resource_id", "event_type", "participant_id", "status"}``, a ``study.status.change`` body
``{"resource_id", "event_type", "metadata", "status"}``. Headers: ``X-Prolific-Request-Signature`` =
base64(HMAC-SHA256(secret, timestamp + body)), ``X-Prolific-Request-Timestamp`` (UNIX seconds),
``X-Event-ID`` (the same on every delivery of one event), ``X-Timestamp``.

Where the documentation is silent, this server chooses (docs/prolific-api-notes.md repeats the list):

- Publishing goes straight to ACTIVE (the real API passes through PUBLISHING); a participant's
  submission starts ACTIVE (the real one is RESERVED for up to 10 minutes first).
- The study's own moves: full and nobody still working -> AWAITING REVIEW (or COMPLETED if nothing is left
  to review); all reviewed -> COMPLETED; a place freed after that (reject, return) -> PAUSED, as the help
  centre's "automatic pausing" says. STOP is final: START after it is refused.
- The list's envelope ``{"results", "_links": {"self", "next", "previous", "last": {"href", "title"}},
  "meta": {"count"}}`` is the one Prolific's CLI decodes; ``page_size`` is capped at 100.
- ``error_code`` is the HTTP status (Prolific documents the field, not its values); 401 uses the same shape.
- Fees on bonuses are a third of the amount rounded up to the hundredth of a cent (which reproduces the
  documented example); VAT is 0.
- A study created without ``project`` goes to the default project; ``filters`` may be omitted.
- Webhook targets may be plain http on localhost (the real API wants public https).
- Events are delivered when a test calls ``deliver_events`` (never on their own), so tests choose when.

Test controls are Python methods, not HTTP: participants (``participant_starts`` / ``_completes`` /
``_returns`` / ``_times_out``), ``fail_next`` (429 with Retry-After, 500, act-then-drop, hang, trickle),
``request_count``, the ``payments`` and ``transitions`` ledgers, ``deliver_events`` / ``redeliver``;
``WebhookReceiver`` is a target that records what it receives.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_UP, Decimal, InvalidOperation
from email.message import Message
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

API_PREFIX = "/api/v1"
DEFAULT_TOKEN = "test-prolific-token"

# Study statuses (studies/the-study-object).
UNPUBLISHED = "UNPUBLISHED"
ACTIVE = "ACTIVE"
PAUSED = "PAUSED"
AWAITING_REVIEW = "AWAITING REVIEW"
COMPLETED = "COMPLETED"
# Submission statuses (submissions/submission-object); ACTIVE and AWAITING REVIEW are shared with studies.
APPROVED = "APPROVED"
REJECTED = "REJECTED"
RETURNED = "RETURNED"
TIMED_OUT = "TIMED-OUT"
# Statuses that hold one of the study's places; RETURNED, TIMED-OUT and REJECTED free theirs.
PLACE_HOLDING = frozenset({ACTIVE, AWAITING_REVIEW, APPROVED})

STUDY_ACTIONS = ("PUBLISH", "PAUSE", "START", "STOP")
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
REJECTION_MESSAGE_MIN_LENGTH = 100
PROLIFIC_ID_OPTIONS = ("question", "url_parameters", "not_required")
DEVICES = ("desktop", "tablet", "mobile")
SUBMISSION_EVENT = "submission.status.change"
STUDY_EVENT = "study.status.change"
EVENT_TYPES = (SUBMISSION_EVENT, STUDY_EVENT)
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
# A third of the amount, rounded up: bonuses/create-bonus-payments shows fees 283.34 on 850.
BONUS_FEE_RATE = Decimal(1) / Decimal(3)

REQUIRED_STUDY_FIELDS = (
    "name",
    "description",
    "external_study_url",
    "prolific_id_option",
    "completion_codes",
    "total_available_places",
    "estimated_completion_time",
    "reward",
)
# What PATCH may change once the study is published: the help centre allows more places, nothing else
# that participants see.
PUBLISHED_PATCHABLE = frozenset({"internal_name", "total_available_places"})


class Fault(StrEnum):
    """What the next request to an endpoint meets (``fail_next``)."""

    RATE_LIMIT = "429"  # answered 429 with Retry-After, nothing done
    SERVER_ERROR = "500"  # answered 500, nothing done
    DROP_AFTER_ACTION = "drop"  # the action happens, then the connection closes without an answer
    HANG = "hang"  # nothing done; the connection closes after ``hang_seconds``
    TRICKLE = "trickle"  # the action happens; the answer's body comes one byte per ``trickle_interval``


@dataclass(frozen=True)
class Payment:
    """One bonus line paid by one pay call; a second pay call of the same record adds another."""

    bulk_id: str
    study_id: str
    submission_id: str
    participant_id: str
    amount_cents: int


@dataclass(frozen=True)
class Transition:
    """A status change; ``actor`` is "researcher" (the API), "participant" or "system" (the study's own moves)."""

    resource: Literal["study", "submission"]
    resource_id: str
    action: str
    from_status: str
    to_status: str
    actor: str
    message: str | None = None
    rejection_category: str | None = None


@dataclass(frozen=True)
class Participation:
    """A participant who took the study: their submission (also the session id) and the study URL with
    Prolific's placeholders filled in, as their browser would open it."""

    submission_id: str
    participant_id: str
    url: str


@dataclass(frozen=True)
class RecordedRequest:
    endpoint: str
    method: str
    path: str
    body: Any
    status: int | None  # None when the connection was closed without an answer


@dataclass(frozen=True)
class Event:
    id: str
    event_type: str
    body: bytes


@dataclass(frozen=True)
class Delivery:
    event_id: str
    target_url: str
    status: int | None
    error: str | None


@dataclass
class _Study:
    id: str
    fields: dict[str, Any]
    status: str = UNPUBLISHED
    stopped: bool = False
    date_created: str = ""
    published_at: str | None = None


@dataclass
class _Submission:
    id: str
    study_id: str
    participant_id: str
    status: str
    started_at: str
    completed_at: str | None = None
    study_code: str | None = None
    bonus_payments: list[int] = field(default_factory=list)


@dataclass
class _BulkBonus:
    id: str
    study_id: str
    lines: list[tuple[str, str, int]]  # (submission id, participant id, cents)
    amount: Decimal
    fees: Decimal
    vat: Decimal
    pay_calls: int = 0


@dataclass
class _Subscription:
    id: str
    event_type: str
    target_url: str
    workspace_id: str
    is_enabled: bool
    hook_secret: str
    confirmed: bool = False


@dataclass
class _Reply:
    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)


class ApiError(Exception):
    """A 4xx answer in Prolific's error shape, raised by an endpoint before it changes anything."""

    def __init__(self, status: int, title: str, detail: Any) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.title = title
        self.detail = detail


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _number(value: Decimal) -> int | float:
    """A JSON number as Prolific writes one: 850, or 283.34."""
    return int(value) if value == value.to_integral_value() else float(value)


def sign_webhook(secret: str, timestamp: str, body: bytes) -> str:
    """The signature webhooks/verifying describes: base64 of HMAC-SHA256(secret, timestamp + body)."""
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("utf-8") + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode("ascii")


# (method, path pattern under /api/v1, endpoint name, ProlificServer method). Names are what
# ``fail_next`` and ``request_count`` take.
ROUTES: tuple[tuple[str, str, str, str], ...] = (
    ("GET", r"/users/me/", "users.me", "_api_me"),
    ("GET", r"/workspaces/", "workspaces.list", "_api_workspaces"),
    ("GET", r"/workspaces/(?P<id>[^/]+)/projects/", "projects.list", "_api_projects"),
    ("GET", r"/studies/", "studies.list", "_api_study_list"),
    ("POST", r"/studies/", "studies.create", "_api_study_create"),
    ("GET", r"/studies/(?P<id>[^/]+)/", "studies.get", "_api_study_get"),
    ("PATCH", r"/studies/(?P<id>[^/]+)/", "studies.update", "_api_study_update"),
    ("POST", r"/studies/(?P<id>[^/]+)/transition/", "studies.transition", "_api_study_transition"),
    ("GET", r"/submissions/", "submissions.list", "_api_submission_list"),
    ("POST", r"/submissions/bonus-payments/", "bonuses.create", "_api_bonus_create"),
    ("GET", r"/submissions/(?P<id>[^/]+)/", "submissions.get", "_api_submission_get"),
    ("POST", r"/submissions/(?P<id>[^/]+)/transition/", "submissions.transition", "_api_submission_transition"),
    ("POST", r"/bulk-bonus-payments/(?P<id>[^/]+)/pay/", "bonuses.pay", "_api_bonus_pay"),
    ("POST", r"/hooks/secrets/", "hooks.secrets.create", "_api_secret_create"),
    ("GET", r"/hooks/secrets/", "hooks.secrets.list", "_api_secret_list"),
    ("POST", r"/hooks/subscriptions/", "hooks.subscriptions.create", "_api_subscription_create"),
    ("GET", r"/hooks/subscriptions/", "hooks.subscriptions.list", "_api_subscription_list"),
    ("POST", r"/hooks/subscriptions/(?P<id>[^/]+)/", "hooks.subscriptions.confirm", "_api_subscription_confirm"),
)
ENDPOINTS = frozenset(name for _, _, name, _ in ROUTES)
_COMPILED = tuple((method, re.compile(f"^{pattern}$"), name, attr) for method, pattern, name, attr in ROUTES)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Handlers may be parked in a hang; stop() must not wait for them.
    block_on_close = False
    owner: ProlificServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        split = urllib.parse.urlsplit(self.path)
        route = _route(method, split.path)
        if route is None:
            self._send(_error_reply(404, "Not Found", f"No endpoint {method} {split.path}", self._leak()))
            return
        name, attr, params = route
        body = _parse_body(raw)
        if not owner._authorized(self.headers.get("Authorization")):
            reply = _error_reply(401, "Unauthorized", "Invalid token.", self._leak())
            owner._record(RecordedRequest(name, method, split.path, body, 401))
            self._send(reply)
            return
        fault = owner._take_fault(name)
        if fault in (Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.HANG):
            self._refuse(owner, fault, RecordedRequest(name, method, split.path, body, None))
            return
        query = dict(urllib.parse.parse_qsl(split.query))
        reply = owner._call(attr, params, query, body, self._base_url(), self._leak())
        if fault is Fault.DROP_AFTER_ACTION:
            owner._record(RecordedRequest(name, method, split.path, body, None))
            self.close_connection = True
            return
        owner._record(RecordedRequest(name, method, split.path, body, reply.status))
        self._send(reply, trickle=owner.trickle_interval if fault is Fault.TRICKLE else None)

    def _refuse(self, owner: ProlificServer, fault: Fault, record: RecordedRequest) -> None:
        if fault is Fault.HANG:
            owner._record(record)
            owner._sleep(owner.hang_seconds)
            self.close_connection = True
            return
        if fault is Fault.RATE_LIMIT:
            owner._record(RecordedRequest(record.endpoint, record.method, record.path, record.body, 429))
            reply = _error_reply(429, "Too Many Requests", "Request was throttled.", self._leak())
            reply.headers["Retry-After"] = str(owner.retry_after)
        else:
            owner._record(RecordedRequest(record.endpoint, record.method, record.path, record.body, 500))
            reply = _error_reply(500, "Internal Server Error", "Something went wrong.", self._leak())
        self._send(reply)

    def _authorization(self) -> str:
        return self.headers.get("Authorization") or ""

    def _leak(self) -> str | None:
        return self._authorization() if self.server.owner.leaky_errors else None

    def _base_url(self) -> str:
        return self.server.owner.origin

    def _send(self, reply: _Reply, *, trickle: float | None = None) -> None:
        data = json.dumps(reply.payload).encode("utf-8")
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if trickle is None:
            self.wfile.write(data)
            return
        owner = self.server.owner
        for index in range(len(data)):
            if owner._stopping.is_set():
                return
            self.wfile.write(data[index : index + 1])
            self.wfile.flush()
            owner._sleep(trickle)


def _route(method: str, path: str) -> tuple[str, str, dict[str, str]] | None:
    if not path.startswith(API_PREFIX + "/"):
        return None
    tail = path[len(API_PREFIX) :]
    for route_method, pattern, name, attr in _COMPILED:
        match = pattern.match(tail)
        if match and route_method == method:
            return name, attr, match.groupdict()
    return None


def _parse_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _error_reply(status: int, title: str, detail: Any, leaked_authorization: str | None = None) -> _Reply:
    if leaked_authorization is not None:
        # A misbehaving proxy that echoes the request: the client must scrub its token from messages.
        detail = f"{detail} (request had Authorization: {leaked_authorization})"
    error = {
        "status": status,
        "error_code": status,
        "title": title,
        "detail": detail,
        "additional_information": "",
    }
    return _Reply(status, {"error": error})


class ProlificServer:
    """A Prolific-like API on 127.0.0.1; ``port=0`` picks a free port. ``url`` is the API root, ending in
    ``/api/v1/``, what ``settings.PROLIFIC_API_URL`` would be. Use as a context manager or start()/stop().
    """

    def __init__(
        self,
        *,
        token: str = DEFAULT_TOKEN,
        host: str = "127.0.0.1",
        port: int = 0,
        settle_payments: bool = True,
    ) -> None:
        self.tokens = {token}
        self.token = token
        # False models "Bonus payments are made asynchronously": paid lines reach the submissions'
        # bonus_payments only when a test calls settle_payments().
        self.immediate_payments = settle_payments
        self.retry_after = 1
        self.hang_seconds = 5.0
        self.trickle_interval = 0.05
        self.leaky_errors = False
        self.payments: list[Payment] = []
        self.transitions: list[Transition] = []
        self.requests: list[RecordedRequest] = []
        self.deliveries: list[Delivery] = []
        self.internal_errors: list[str] = []
        self._host = host
        self._port = port
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._faults: dict[str, deque[Fault]] = {}
        self._counts: Counter[str] = Counter()
        self._studies: dict[str, _Study] = {}
        self._submissions: dict[str, _Submission] = {}
        self._bulk: dict[str, _BulkBonus] = {}
        self._pending_payments: list[Payment] = []
        self._subscriptions: dict[str, _Subscription] = {}
        self._secrets: dict[str, tuple[str, str]] = {}  # workspace id -> (secret id, value)
        self._outbox: list[Event] = []
        self._events: dict[str, Event] = {}
        self.researcher_id = self._new_id()
        self.workspace_id = self._new_id()
        self.project_id = self._new_id()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``, without the API path."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://{self._host}:{self._httpd.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.origin}{API_PREFIX}/"

    def start(self) -> ProlificServer:
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._port), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="prolific-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ProlificServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test controls: faults, counters, ledgers ---------------------------------------------------

    def fail_next(self, endpoint: str, fault: Fault | str, times: int = 1) -> None:
        """The next ``times`` authorized requests to ``endpoint`` (a name from ``ENDPOINTS``) meet ``fault``."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}; one of {sorted(ENDPOINTS)}")
        with self._lock:
            self._faults.setdefault(endpoint, deque()).extend([Fault(fault)] * times)

    def request_count(self, endpoint: str) -> int:
        """Requests received for ``endpoint``, whatever their fate (faults and 401s included)."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}")
        with self._lock:
            return self._counts[endpoint]

    def study(self, study_id: str) -> dict[str, Any]:
        """The study as ``GET /studies/{id}/`` would show it."""
        with self._lock:
            return self._study_json(self._get_study(study_id))

    def submission(self, submission_id: str) -> dict[str, Any]:
        with self._lock:
            return self._submission_detail(self._get_submission(submission_id))

    def bulk_pay_calls(self, bulk_id: str) -> int:
        """How many pay calls reached this bonus record (each one paid)."""
        with self._lock:
            return self._bulk[bulk_id].pay_calls

    def settle_payments(self) -> int:
        """Credit the paid-but-pending lines to their submissions (with ``settle_payments=False``)."""
        with self._lock:
            pending, self._pending_payments = self._pending_payments, []
            for payment in pending:
                self._submissions[payment.submission_id].bonus_payments.append(payment.amount_cents)
            return len(pending)

    # -- test controls: participants ------------------------------------------------------------------

    def participant_starts(self, study_id: str, participant_id: str | None = None) -> Participation:
        """A participant takes a place: an ACTIVE submission. Refused (ValueError) when the study is not
        ACTIVE, is full, or this participant already has a submission in it."""
        with self._lock:
            study = self._get_study(study_id)
            if study.status != ACTIVE:
                raise ValueError(f"study {study_id} is {study.status}, not ACTIVE")
            if self._free_places(study) <= 0:
                raise ValueError(f"study {study_id} has no free place")
            pid = participant_id or self._new_id()
            if any(s.participant_id == pid for s in self._study_submissions(study_id)):
                raise ValueError(f"participant {pid} already took study {study_id}")
            submission = _Submission(self._new_id(), study_id, pid, ACTIVE, _now_iso())
            self._submissions[submission.id] = submission
            self.transitions.append(Transition("submission", submission.id, "START", "", ACTIVE, "participant"))
            self._emit_submission(submission)
            self._settle_study(study)
            url = str(study.fields["external_study_url"])
            for placeholder, value in (("PROLIFIC_PID", pid), ("STUDY_ID", study_id), ("SESSION_ID", submission.id)):
                url = url.replace("{{%" + placeholder + "%}}", urllib.parse.quote(value))
            return Participation(submission.id, pid, url)

    def participant_completes(self, submission_id: str, code: str) -> str:
        """The participant finishes with ``code``: APPROVED if the code's actions say
        AUTOMATICALLY_APPROVE, otherwise AWAITING REVIEW. Returns the new status."""
        with self._lock:
            submission = self._get_submission(submission_id)
            study = self._get_study(submission.study_id)
            actions = {
                action.get("action")
                for entry in study.fields["completion_codes"]
                if entry.get("code") == code
                for action in entry.get("actions") or []
                if isinstance(action, dict)
            }
            target = APPROVED if "AUTOMATICALLY_APPROVE" in actions else AWAITING_REVIEW
            submission.study_code = code
            submission.completed_at = _now_iso()
            self._move_submission(submission, (ACTIVE,), target, "COMPLETE", "participant")
            return target

    def participant_returns(self, submission_id: str) -> None:
        with self._lock:
            submission = self._get_submission(submission_id)
            self._move_submission(submission, (ACTIVE, AWAITING_REVIEW), RETURNED, "RETURN", "participant")

    def participant_times_out(self, submission_id: str) -> None:
        with self._lock:
            submission = self._get_submission(submission_id)
            self._move_submission(submission, (ACTIVE,), TIMED_OUT, "TIME_OUT", "system")

    # -- test controls: webhooks ------------------------------------------------------------------------

    def webhook_secret(self, workspace_id: str | None = None) -> str:
        """The workspace's signing secret, created on first use (as ``POST /hooks/secrets/`` would)."""
        with self._lock:
            return self._ensure_secret(workspace_id or self.workspace_id)[1]

    def subscribe(self, target_url: str, event_type: str = SUBMISSION_EVENT) -> str:
        """A confirmed, enabled subscription (the API's create-then-confirm, in one step). Returns its id."""
        if event_type not in EVENT_TYPES:
            raise ValueError(f"event_type must be one of {EVENT_TYPES}")
        with self._lock:
            self._ensure_secret(self.workspace_id)
            subscription = _Subscription(
                self._new_id(), event_type, target_url, self.workspace_id, True, self._new_id(), confirmed=True
            )
            self._subscriptions[subscription.id] = subscription
            return subscription.id

    def pending_events(self) -> list[Event]:
        with self._lock:
            return list(self._outbox)

    def deliver_events(self, *, times: int = 1, timestamp: int | None = None, timeout: float = 5.0) -> list[Delivery]:
        """Send every undelivered event to its subscription's target, ``times`` times each (same X-Event-ID:
        Prolific delivers at least once). ``timestamp`` overrides the signing time (a stale delivery)."""
        with self._lock:
            outbox, self._outbox = self._outbox, []
        results = []
        for event in outbox:
            results += self.redeliver(event.id, times=times, timestamp=timestamp, timeout=timeout)
        return results

    def redeliver(
        self, event_id: str, *, times: int = 1, timestamp: int | None = None, timeout: float = 5.0
    ) -> list[Delivery]:
        """Deliver an already-sent event again, unchanged but for a fresh signature timestamp."""
        with self._lock:
            event = self._events[event_id]
            targets = [
                s
                for s in self._subscriptions.values()
                if s.event_type == event.event_type and s.confirmed and s.is_enabled
            ]
            secrets = {s.id: self._ensure_secret(s.workspace_id)[1] for s in targets}
        results = []
        for _ in range(times):
            for subscription in targets:
                results.append(self._post_event(event, subscription, secrets[subscription.id], timestamp, timeout))
        with self._lock:
            self.deliveries += results
        return results

    def _post_event(
        self, event: Event, subscription: _Subscription, secret: str, timestamp: int | None, timeout: float
    ) -> Delivery:
        stamp = str(timestamp if timestamp is not None else int(time.time()))
        request = urllib.request.Request(
            subscription.target_url,
            data=event.body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "X-Prolific-Request-Signature": sign_webhook(secret, stamp, event.body),
                "X-Prolific-Request-Timestamp": stamp,
                "X-Event-ID": event.id,
                "X-Timestamp": stamp,
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Delivery(event.id, subscription.target_url, response.status, None)
        except urllib.error.HTTPError as exc:
            return Delivery(event.id, subscription.target_url, exc.code, None)
        except OSError as exc:
            return Delivery(event.id, subscription.target_url, None, type(exc).__name__)

    # -- called from handler threads ---------------------------------------------------------------------

    def _authorized(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme == "Token" and any(hmac.compare_digest(token.strip(), t) for t in self.tokens)

    def _take_fault(self, endpoint: str) -> Fault | None:
        with self._lock:
            queue = self._faults.get(endpoint)
            return queue.popleft() if queue else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._counts[request.endpoint] += 1
            self.requests.append(request)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _call(
        self, attr: str, params: dict[str, str], query: dict[str, str], body: Any, base: str, leak: str | None
    ) -> _Reply:
        endpoint: Callable[..., _Reply] = getattr(self, attr)
        with self._lock:
            try:
                return endpoint(params=params, query=query, body=body, base=base)
            except ApiError as exc:
                return _error_reply(exc.status, exc.title, exc.detail, leak)
            except Exception as exc:  # noqa: BLE001 - a bug here must reach the test as an answer, not a hang
                self.internal_errors.append(repr(exc))
                return _error_reply(500, "Internal Server Error", f"test server bug: {exc!r}", leak)

    # -- endpoints ------------------------------------------------------------------------------------

    def _api_me(self, **_: Any) -> _Reply:
        return _Reply(200, {"id": self.researcher_id, "name": "Test Researcher", "currency_code": "GBP"})

    def _api_workspaces(self, **_: Any) -> _Reply:
        workspace = {"id": self.workspace_id, "title": "Test workspace", "owner": self.researcher_id}
        return _Reply(200, {"results": [workspace], "meta": {"count": 1}})

    def _api_projects(self, *, params: dict[str, str], **_: Any) -> _Reply:
        if params["id"] != self.workspace_id:
            raise ApiError(404, "Not Found", "No such workspace.")
        project = {"id": self.project_id, "title": "Test project", "workspace": self.workspace_id}
        return _Reply(200, {"results": [project], "meta": {"count": 1}})

    def _api_study_create(self, *, body: Any, **_: Any) -> _Reply:
        fields = _validate_study(body, known_projects={self.project_id})
        fields.setdefault("internal_name", fields["name"])
        fields.setdefault("device_compatibility", list(DEVICES))
        fields.setdefault("filters", [])
        fields.setdefault("project", self.project_id)
        fields.setdefault("maximum_allowed_time", None)
        study = _Study(self._new_id(), fields, date_created=_now_iso())
        self._studies[study.id] = study
        return _Reply(201, self._study_json(study))

    def _api_study_list(self, **_: Any) -> _Reply:
        results = [self._study_json(study) for study in self._studies.values()]
        return _Reply(200, {"results": results, "meta": {"count": len(results)}})

    def _api_study_get(self, *, params: dict[str, str], **_: Any) -> _Reply:
        return _Reply(200, self._study_json(self._get_study(params["id"], api=True)))

    def _api_study_update(self, *, params: dict[str, str], body: Any, **_: Any) -> _Reply:
        study = self._get_study(params["id"], api=True)
        if not isinstance(body, dict) or not body:
            raise ApiError(400, "Bad Request", "Send a JSON object of the fields to change.")
        if study.status != UNPUBLISHED:
            locked = sorted(set(body) - PUBLISHED_PATCHABLE)
            if locked:
                raise ApiError(400, "Bad Request", {name: ["Cannot be changed once published."] for name in locked})
            places = body.get("total_available_places")
            if places is not None and (not _is_int(places) or places < study.fields["total_available_places"]):
                raise ApiError(400, "Bad Request", {"total_available_places": ["Places can only be increased."]})
        merged = {**study.fields, **body}
        study.fields = {**study.fields, **_validate_study(merged, known_projects={self.project_id})}
        if study.status in (AWAITING_REVIEW, COMPLETED) and not study.stopped and self._free_places(study) > 0:
            # More places reopen a finished study (what Mephisto's notes on the API observed); docs silent.
            self._move_study(study, ACTIVE, "PLACES_ADDED", "system")
        self._settle_study(study)
        return _Reply(200, self._study_json(study))

    def _api_study_transition(self, *, params: dict[str, str], body: Any, **_: Any) -> _Reply:
        study = self._get_study(params["id"], api=True)
        action = body.get("action") if isinstance(body, dict) else None
        if action not in STUDY_ACTIONS:
            raise ApiError(400, "Bad Request", {"action": [f"Must be one of {', '.join(STUDY_ACTIONS)}."]})
        target = self._study_target(study, action)
        if action == "STOP":
            study.stopped = True
        if action == "PUBLISH":
            study.published_at = _now_iso()
        self._move_study(study, target, action, "researcher")
        self._settle_study(study)
        return _Reply(200, self._study_json(study))

    def _study_target(self, study: _Study, action: str) -> str:
        allowed = {
            "PUBLISH": (UNPUBLISHED,),
            "PAUSE": (ACTIVE,),
            "START": (PAUSED,),
            "STOP": (ACTIVE, PAUSED, AWAITING_REVIEW),
        }[action]
        if study.status not in allowed or (action == "START" and study.stopped):
            state = f"{study.status}{' (stopped)' if study.stopped else ''}"
            raise ApiError(400, "Bad Request", f"Cannot {action} a study that is {state}.")
        if action == "PUBLISH" or action == "START":
            return ACTIVE
        if action == "PAUSE":
            return PAUSED
        waiting = any(s.status in (ACTIVE, AWAITING_REVIEW) for s in self._study_submissions(study.id))
        return AWAITING_REVIEW if waiting else COMPLETED

    def _api_submission_list(self, *, query: dict[str, str], base: str, **_: Any) -> _Reply:
        page_size = _positive_int(query.get("page_size"), DEFAULT_PAGE_SIZE, "page_size")
        page_size = min(page_size, MAX_PAGE_SIZE)
        page = _positive_int(query.get("page"), 1, "page")
        rows = sorted(self._submissions.values(), key=lambda s: (s.started_at, s.id))
        if query.get("study"):
            rows = [s for s in rows if s.study_id == query["study"]]
        if query.get("status"):
            wanted = query["status"].upper().replace("_", " ")
            rows = [s for s in rows if s.status.replace("-", " ") == wanted.replace("-", " ")]
        pages = max(1, -(-len(rows) // page_size))
        chunk = rows[(page - 1) * page_size : page * page_size]

        def link(number: int | None, title: str) -> dict[str, Any]:
            if number is None:
                return {"href": None, "title": title}
            params = {**query, "page": str(number), "page_size": str(page_size)}
            return {"href": f"{base}{API_PREFIX}/submissions/?{urllib.parse.urlencode(params)}", "title": title}

        links = {
            "self": link(page, "Current page"),
            "next": link(page + 1 if page < pages else None, "Next page"),
            "previous": link(page - 1 if page > 1 else None, "Previous page"),
            "last": link(pages, "Last page"),
        }
        results = [self._submission_short(s) for s in chunk]
        return _Reply(200, {"results": results, "_links": links, "meta": {"count": len(rows)}})

    def _api_submission_get(self, *, params: dict[str, str], **_: Any) -> _Reply:
        return _Reply(200, self._submission_detail(self._get_submission(params["id"], api=True)))

    def _api_submission_transition(self, *, params: dict[str, str], body: Any, **_: Any) -> _Reply:
        submission = self._get_submission(params["id"], api=True)
        body = body if isinstance(body, dict) else {}
        action = body.get("action")
        target = {"APPROVE": APPROVED, "REJECT": REJECTED}.get(str(action))
        if target is None:
            raise ApiError(400, "Bad Request", {"action": ["This server supports APPROVE and REJECT."]})
        message, category = body.get("message"), body.get("rejection_category")
        if action == "REJECT":
            _validate_rejection(message, category)
        if submission.status == target:
            # "this endpoint is idempotent, so if you make the same request twice, the second request will
            # be ignored" (submissions/transition-submission).
            return _Reply(200, self._submission_detail(submission))
        if submission.status != AWAITING_REVIEW:
            raise ApiError(400, "Bad Request", f"Cannot {action} a submission that is {submission.status}.")
        if action == "REJECT":
            self._move_submission(submission, (AWAITING_REVIEW,), target, action, "researcher", message, category)
        else:
            self._move_submission(submission, (AWAITING_REVIEW,), target, action, "researcher")
        return _Reply(200, self._submission_detail(submission))

    def _api_bonus_create(self, *, body: Any, **_: Any) -> _Reply:
        body = body if isinstance(body, dict) else {}
        study = self._get_study(str(body.get("study_id") or ""), api=True)
        csv_text = body.get("csv_bonuses")
        if not isinstance(csv_text, str) or not csv_text.strip():
            raise ApiError(400, "Bad Request", {"csv_bonuses": ["This field is required."]})
        lines, bad = self._bonus_lines(study, csv_text)
        if bad:
            raise ApiError(400, "Bad Request", {"csv_bonuses": [f"Invalid lines: {', '.join(bad)}"]})
        amount = Decimal(sum(cents for _, _, cents in lines))
        fees = (amount * BONUS_FEE_RATE).quantize(Decimal("0.01"), rounding=ROUND_UP)
        bulk = _BulkBonus(self._new_id(), study.id, lines, amount, fees, Decimal(0))
        self._bulk[bulk.id] = bulk
        payload = {
            "id": bulk.id,
            "study": study.id,
            "amount": _number(amount),
            "fees": _number(fees),
            "vat": _number(bulk.vat),
            "total_amount": _number(amount + fees + bulk.vat),
        }
        return _Reply(201, payload)

    def _bonus_lines(self, study: _Study, csv_text: str) -> tuple[list[tuple[str, str, int]], list[str]]:
        """Each line ``<participant or submission id>,<amount>``; returns the lines in cents and the bad ones
        ("you will get a 400 HTTP response back, which explains which IDs are incorrect")."""
        submissions = self._study_submissions(study.id)
        by_id = {s.id: s for s in submissions} | {s.participant_id: s for s in submissions}
        lines, bad = [], []
        for line in csv_text.strip().splitlines():
            identifier, _, amount_text = line.strip().partition(",")
            submission = by_id.get(identifier.strip())
            try:
                amount = Decimal(amount_text.strip())
            except InvalidOperation:
                amount = Decimal(0)
            cents = amount * 100
            if submission is None or amount <= 0 or cents != cents.to_integral_value():
                bad.append(identifier.strip() or line)
                continue
            lines.append((submission.id, submission.participant_id, int(cents)))
        return lines, bad

    def _api_bonus_pay(self, *, params: dict[str, str], **_: Any) -> _Reply:
        bulk = self._bulk.get(params["id"])
        if bulk is None:
            raise ApiError(404, "Not Found", "No such bulk bonus payment.")
        # Not idempotent (bonuses/pay-bonus-payments): every call pays every line again.
        bulk.pay_calls += 1
        for submission_id, participant_id, cents in bulk.lines:
            payment = Payment(bulk.id, bulk.study_id, submission_id, participant_id, cents)
            self.payments.append(payment)
            if self.immediate_payments:
                self._submissions[submission_id].bonus_payments.append(cents)
            else:
                self._pending_payments.append(payment)
        message = (
            f"Bulk bonus payment with ID {bulk.id} is being processed asynchronously. "
            "Payments will be completed shortly."
        )
        return _Reply(202, message)

    def _api_secret_create(self, *, body: Any, **_: Any) -> _Reply:
        workspace_id = body.get("workspace_id") if isinstance(body, dict) else None
        if workspace_id != self.workspace_id:
            raise ApiError(400, "Bad Request", {"workspace_id": ["Unknown workspace."]})
        # "If a secret already exists, this call will delete the old secret and create a new one."
        self._secrets.pop(workspace_id, None)
        secret_id, value = self._ensure_secret(workspace_id)
        return _Reply(201, {"id": secret_id, "value": value, "workspace_id": workspace_id})

    def _api_secret_list(self, *, query: dict[str, str], **_: Any) -> _Reply:
        workspace_id = query.get("workspace_id", self.workspace_id)
        found = self._secrets.get(workspace_id)
        results = [{"id": found[0], "value": found[1], "workspace_id": workspace_id}] if found else []
        return _Reply(200, {"results": results})

    def _api_subscription_create(self, *, body: Any, **_: Any) -> _Reply:
        body = body if isinstance(body, dict) else {}
        if body.get("workspace_id") != self.workspace_id:
            raise ApiError(400, "Bad Request", {"workspace_id": ["Unknown workspace."]})
        if body.get("event_type") not in EVENT_TYPES:
            raise ApiError(400, "Bad Request", {"event_type": [f"Must be one of {', '.join(EVENT_TYPES)}."]})
        if not str(body.get("target_url") or "").startswith(("http://", "https://")):
            raise ApiError(400, "Bad Request", {"target_url": ["Enter a valid URL."]})
        if self.workspace_id not in self._secrets:
            raise ApiError(400, "Bad Request", "Create a secret for the workspace before subscribing.")
        subscription = _Subscription(
            self._new_id(),
            str(body["event_type"]),
            str(body["target_url"]),
            self.workspace_id,
            bool(body.get("is_enabled", True)),
            self._new_id(),
        )
        self._subscriptions[subscription.id] = subscription
        return _Reply(201, {"results": [_subscription_json(subscription)]}, {"X-Hook-Secret": subscription.hook_secret})

    def _api_subscription_list(self, **_: Any) -> _Reply:
        results = [_subscription_json(s) for s in self._subscriptions.values()]
        return _Reply(200, {"results": results, "meta": {"count": len(results)}})

    def _api_subscription_confirm(self, *, params: dict[str, str], body: Any, **_: Any) -> _Reply:
        subscription = self._subscriptions.get(params["id"])
        if subscription is None:
            raise ApiError(404, "Not Found", "No such subscription.")
        secret = body.get("secret") if isinstance(body, dict) else None
        if not isinstance(secret, str) or not hmac.compare_digest(secret, subscription.hook_secret):
            raise ApiError(400, "Bad Request", {"secret": ["Does not match the X-Hook-Secret of this subscription."]})
        subscription.confirmed = True
        return _Reply(200, _subscription_json(subscription))

    # -- state machine -----------------------------------------------------------------------------------

    def _move_submission(
        self,
        submission: _Submission,
        allowed_from: tuple[str, ...],
        target: str,
        action: str,
        actor: str,
        message: str | None = None,
        category: str | None = None,
    ) -> None:
        if submission.status not in allowed_from:
            raise ValueError(f"submission {submission.id} is {submission.status}; {action} needs {allowed_from}")
        before = submission.status
        submission.status = target
        self.transitions.append(
            Transition("submission", submission.id, action, before, target, actor, message, category)
        )
        self._emit_submission(submission)
        self._settle_study(self._studies[submission.study_id])

    def _move_study(self, study: _Study, target: str, action: str, actor: str) -> None:
        """Record the move (a STOP that leaves the status as it was is still the researcher's act) and
        announce a change of status."""
        before = study.status
        study.status = target
        self.transitions.append(Transition("study", study.id, action, before, target, actor))
        if before == target:
            return
        body = {"resource_id": study.id, "event_type": STUDY_EVENT, "metadata": {}, "status": target}
        self._emit(STUDY_EVENT, body)

    def _settle_study(self, study: _Study) -> None:
        """The study's own moves after its submissions or places changed (see the module docstring)."""
        submissions = self._study_submissions(study.id)
        working = any(s.status == ACTIVE for s in submissions)
        waiting = any(s.status == AWAITING_REVIEW for s in submissions)
        free = self._free_places(study)
        if study.status == ACTIVE and free <= 0 and not working:
            self._move_study(study, AWAITING_REVIEW if waiting else COMPLETED, "FULL", "system")
        elif study.status == AWAITING_REVIEW and not waiting and not working and (study.stopped or free <= 0):
            self._move_study(study, COMPLETED, "REVIEWED", "system")
        elif study.status in (AWAITING_REVIEW, COMPLETED) and not study.stopped and free > 0:
            self._move_study(study, PAUSED, "PLACE_FREED", "system")

    def _free_places(self, study: _Study) -> int:
        taken = sum(1 for s in self._study_submissions(study.id) if s.status in PLACE_HOLDING)
        return int(study.fields["total_available_places"]) - taken

    def _study_submissions(self, study_id: str) -> list[_Submission]:
        return [s for s in self._submissions.values() if s.study_id == study_id]

    def _emit_submission(self, submission: _Submission) -> None:
        body = {
            "resource_id": submission.id,
            "event_type": SUBMISSION_EVENT,
            "participant_id": submission.participant_id,
            "status": submission.status,
        }
        self._emit(SUBMISSION_EVENT, body)

    def _emit(self, event_type: str, body: dict[str, Any]) -> None:
        if not any(s.event_type == event_type and s.confirmed and s.is_enabled for s in self._subscriptions.values()):
            return
        # json.dumps' default separators: the documented verification example re-serialises the parsed
        # body with json.dumps, which then gives back exactly these bytes.
        event = Event(self._new_id(), event_type, json.dumps(body).encode("utf-8"))
        self._events[event.id] = event
        self._outbox.append(event)

    # -- helpers ------------------------------------------------------------------------------------------

    def _new_id(self) -> str:
        # 24 hex digits, the shape of Prolific's (MongoDB) ids.
        return f"{0x5F0000000000000000000000 + next(self._ids):024x}"

    def _ensure_secret(self, workspace_id: str) -> tuple[str, str]:
        if workspace_id not in self._secrets:
            value = base64.urlsafe_b64encode(hashlib.sha256(self._new_id().encode()).digest()).decode().rstrip("=")
            self._secrets[workspace_id] = (self._new_id(), value)
        return self._secrets[workspace_id]

    def _get_study(self, study_id: str, *, api: bool = False) -> _Study:
        study = self._studies.get(study_id)
        if study is None:
            if api:
                raise ApiError(404, "Not Found", "No such study.")
            raise KeyError(study_id)
        return study

    def _get_submission(self, submission_id: str, *, api: bool = False) -> _Submission:
        submission = self._submissions.get(submission_id)
        if submission is None:
            if api:
                raise ApiError(404, "Not Found", "No such submission.")
            raise KeyError(submission_id)
        return submission

    def _study_json(self, study: _Study) -> dict[str, Any]:
        taken = int(study.fields["total_available_places"]) - self._free_places(study)
        return {
            "id": study.id,
            **study.fields,
            "status": study.status,
            "places_taken": taken,
            "date_created": study.date_created,
            "published_at": study.published_at,
            "currency_code": "GBP",
        }

    def _submission_short(self, submission: _Submission) -> dict[str, Any]:
        return {
            "id": submission.id,
            "participant_id": submission.participant_id,
            "study_id": submission.study_id,
            "status": submission.status,
            "started_at": submission.started_at,
            "completed_at": submission.completed_at,
            "study_code": submission.study_code,
            "has_siblings": False,
            "return_requested": None,
        }

    def _submission_detail(self, submission: _Submission) -> dict[str, Any]:
        # The detail names the participant "participant", the list "participant_id" (submissions/get-submission).
        return {
            "id": submission.id,
            "study_id": submission.study_id,
            "participant": submission.participant_id,
            "status": submission.status,
            "started_at": submission.started_at,
            "completed_at": submission.completed_at,
            "entered_code": submission.study_code,
            "bonus_payments": list(submission.bonus_payments),
            "return_requested": None,
            "parent_study_id": None,
        }


def _subscription_json(subscription: _Subscription) -> dict[str, Any]:
    return {
        "id": subscription.id,
        "event_type": subscription.event_type,
        "target_url": subscription.target_url,
        "is_enabled": subscription.is_enabled,
        "workspace_id": subscription.workspace_id,
    }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_int(text: str | None, default: int, name: str) -> int:
    if text is None:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ApiError(400, "Bad Request", {name: ["A positive integer is required."]})
    return int(text)


def _validate_rejection(message: Any, category: Any) -> None:
    errors: dict[str, list[str]] = {}
    if not isinstance(message, str) or len(message) < REJECTION_MESSAGE_MIN_LENGTH:
        errors["message"] = [f"Required for REJECT; at least {REJECTION_MESSAGE_MIN_LENGTH} characters."]
    if category not in REJECTION_CATEGORIES:
        errors["rejection_category"] = [f"Required for REJECT; one of {', '.join(REJECTION_CATEGORIES)}."]
    if errors:
        raise ApiError(400, "Bad Request", errors)


def _validate_study(body: Any, *, known_projects: set[str]) -> dict[str, Any]:
    """The create body's fields, checked; an ApiError names every bad field at once."""
    if not isinstance(body, dict):
        raise ApiError(400, "Bad Request", "Send a JSON object.")
    errors: dict[str, list[str]] = {
        name: ["This field is required."] for name in REQUIRED_STUDY_FIELDS if body.get(name) in (None, "", [])
    }
    checks: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
        ("name", lambda v: isinstance(v, str), "A string."),
        ("description", lambda v: isinstance(v, str), "A string."),
        ("external_study_url", lambda v: isinstance(v, str) and v.startswith(("http://", "https://")), "A URL."),
        ("prolific_id_option", lambda v: v in PROLIFIC_ID_OPTIONS, f"One of {', '.join(PROLIFIC_ID_OPTIONS)}."),
        ("total_available_places", lambda v: _is_int(v) and v > 0, "A positive integer."),
        ("estimated_completion_time", lambda v: _is_int(v) and v > 0, "A positive integer (minutes)."),
        ("maximum_allowed_time", lambda v: v is None or (_is_int(v) and v > 0), "A positive integer (minutes)."),
        ("reward", lambda v: _is_int(v) and v > 0, "A positive integer (cents)."),
        ("device_compatibility", lambda v: isinstance(v, list) and set(v) <= set(DEVICES), f"Of {DEVICES}."),
        ("filters", lambda v: isinstance(v, list), "A list."),
        ("project", lambda v: v in known_projects, "An existing project id."),
        ("completion_codes", _valid_completion_codes, "A list of {code, code_type, actions} with unique codes."),
    )
    for name, ok, message in checks:
        if name in body and name not in errors and not ok(body[name]):
            errors[name] = [message]
    if errors:
        raise ApiError(400, "Bad Request", errors)
    return dict(body)


def _valid_completion_codes(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    codes = []
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("code"), str) or not entry["code"]:
            return False
        if not isinstance(entry.get("code_type"), str) or not isinstance(entry.get("actions"), list):
            return False
        if not all(isinstance(a, dict) and isinstance(a.get("action"), str) for a in entry["actions"]):
            return False
        codes.append(entry["code"])
    return len(codes) == len(set(codes))


@dataclass(frozen=True)
class ReceivedHook:
    path: str
    headers: Message  # case-insensitive, as HTTP headers are: hook.headers["X-Event-ID"]
    body: bytes


class WebhookReceiver:
    """A target for ``subscribe``: records every POST it receives and answers ``status`` (200 by default).
    For tests of the server and of anything that verifies Prolific's signatures without Django."""

    def __init__(self, *, status: int = 200, host: str = "127.0.0.1") -> None:
        self.status = status
        self.received: list[ReceivedHook] = []
        self._host = host
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("receiver not started")
        return f"http://{self._host}:{self._httpd.server_address[1]}/hooks/prolific/"

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.received.append(ReceivedHook(self.path, self.headers, body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._httpd = ThreadingHTTPServer((self._host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
