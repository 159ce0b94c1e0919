"""EvalHub's Prolific API client: typed, Django-free, standard library HTTP.

The caller gives the API root (the app passes ``settings.PROLIFIC_API_URL``, by default
``DEFAULT_API_URL``) and the token (read from the environment variable the operator granted). Endpoints,
fields and statuses follow docs.prolific.com; docs/prolific-api-notes.md lists them with their pages.

Why ``urllib.request`` rather than httpx: a study makes a few calls a minute and needs neither pooling
nor async; the standard library keeps this module independent of the httpx that the OpenAI SDK pins for
the judges (and honours proxy variables as httpx does). Redirects are refused, because urllib would
resend the Authorization header to wherever a redirect points.

Errors: every failure is a ``ProlificError``. ``transient`` says whether the same call may succeed
later (429, 5xx, the network); ``outcome_unknown`` says whether the server may have acted although we
got no usable answer (a 5xx, a connection lost after the request was sent, a timeout while waiting): for
a call that moves money, such an error means "read the state back before doing anything else". Retrying
is the caller's decision; this client never retries.

Deadline: connecting and every wait on the socket are bounded by ``timeout``, and the answer's body is
read in pieces with the call's deadline (``timeout`` after it started) checked between them, so a server
that trickles an answer cannot hold a worker. A silent server fails the call after ``timeout``; the
worst case (a slow connect, then a slow first byte) is about twice ``timeout``.

The token is never written into an exception, a repr or a log line: it lives in a wrapper whose repr is
masked, and any text the server sends back is scrubbed of it before it becomes a message.

Bonuses exactly once: Prolific's pay call is not idempotent and documents no way to read a bonus
record back. What it documents is the submission's ``bonus_payments`` (cents already paid). So the app
records the bonus and the submission's payments before paying (``bonus_payments``), creates the record
(``create_bonus``), pays once (``pay_bonus``), and after any failure whose outcome is unknown reads the
submission again and compares (``new_bonus_payments``) before deciding to pay again. Payments are
asynchronous ("done in the following minutes"), so "not there yet" right after a lost answer is not "not
paid": wait before concluding.
"""

from __future__ import annotations

import http.client
import json
import logging
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from typing import Any, Final

logger = logging.getLogger(__name__)

DEFAULT_API_URL: Final = "https://api.prolific.com/api/v1/"
DEFAULT_TIMEOUT: Final = 20.0
DEFAULT_PAGE_SIZE: Final = 100
# A study of 100 000 submissions at 100 a page; past this the listing is looping, not long.
MAX_PAGES: Final = 1000
USER_AGENT: Final = "EvalHub-Prolific-client"

# Study statuses (studies/the-study-object) and actions ("Transition a study's status"; the CLI's list).
STUDY_UNPUBLISHED: Final = "UNPUBLISHED"
STUDY_ACTIVE: Final = "ACTIVE"
STUDY_PAUSED: Final = "PAUSED"
STUDY_AWAITING_REVIEW: Final = "AWAITING REVIEW"
STUDY_COMPLETED: Final = "COMPLETED"
STUDY_ACTIONS: Final = ("PUBLISH", "PAUSE", "START", "STOP")

# Submission statuses (submissions/submission-object).
SUBMISSION_RESERVED: Final = "RESERVED"
SUBMISSION_ACTIVE: Final = "ACTIVE"
SUBMISSION_AWAITING_REVIEW: Final = "AWAITING REVIEW"
SUBMISSION_APPROVED: Final = "APPROVED"
SUBMISSION_REJECTED: Final = "REJECTED"
SUBMISSION_RETURNED: Final = "RETURNED"
SUBMISSION_TIMED_OUT: Final = "TIMED-OUT"
# "The study place becomes available for another participant": the statuses that free a seat.
SEAT_FREEING_STATUSES: Final = frozenset({SUBMISSION_RETURNED, SUBMISSION_TIMED_OUT, SUBMISSION_REJECTED})

# submissions/transition-submission: a REJECT needs a message of at least 100 characters and a category
# (the list is the one Prolific's CLI validates against, cmd/submission/transition.go).
REJECTION_MESSAGE_MIN_LENGTH: Final = 100
REJECTION_CATEGORIES: Final = (
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
PROLIFIC_ID_OPTIONS: Final = ("question", "url_parameters", "not_required")
DEVICES: Final = ("desktop", "tablet", "mobile")


class ProlificError(Exception):
    """A failed call. ``status`` is the HTTP status when there was one; ``retry_after`` the seconds a 429
    or 503 asked us to wait; ``outcome_unknown`` whether the server may have acted (see the module)."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        status: int | None = None,
        retry_after: float | None = None,
        outcome_unknown: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.status = status
        self.retry_after = retry_after
        self.outcome_unknown = outcome_unknown

    def __repr__(self) -> str:
        return (
            f"ProlificError({self.message!r}, transient={self.transient}, status={self.status}, "
            f"outcome_unknown={self.outcome_unknown})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's default pickling replays only the message, and the keyword-only fields would be lost
        # (or the rebuild would fail) wherever Celery or multiprocessing carries the error.
        fields = {
            "transient": self.transient,
            "status": self.status,
            "retry_after": self.retry_after,
            "outcome_unknown": self.outcome_unknown,
        }
        return (_rebuild_error, (self.message, fields))


def _rebuild_error(message: str, fields: dict[str, Any]) -> ProlificError:
    return ProlificError(message, **fields)


class _Secret:
    """Holds the token; its repr and str are masked, so no traceback, log or vars() dump shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "_Secret('***')"

    __str__ = __repr__


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # Refusing turns the 3xx into an HTTPError: the Authorization header never follows a redirect.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# -- what goes in -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompletionCode:
    """A code participants bring back (studies/the-study-object, completion_codes). EvalHub's default:
    the study's code, reviewed by hand, so approval stays EvalHub's rule."""

    code: str
    code_type: str = "COMPLETED"
    actions: tuple[str, ...] = ("MANUALLY_REVIEW",)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "code_type": self.code_type, "actions": [{"action": a} for a in self.actions]}


@dataclass(frozen=True)
class StudyDraft:
    """What ``POST /studies/`` needs. ``reward`` is in cents (an integer), ``estimated_completion_time``
    and ``maximum_allowed_time`` in minutes. ``internal_name`` is what finds the draft again when the
    create's answer is lost (``find_studies``): give it something unique."""

    name: str
    description: str
    external_study_url: str
    completion_codes: tuple[CompletionCode, ...]
    total_available_places: int
    estimated_completion_time: int
    reward: int
    internal_name: str | None = None
    prolific_id_option: str = "url_parameters"
    device_compatibility: tuple[str, ...] = DEVICES
    maximum_allowed_time: int | None = None
    project: str | None = None
    # An empty list is "everyone"; sent always, since the study object page marks filters as required.
    filters: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        for name in ("total_available_places", "estimated_completion_time", "reward"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.maximum_allowed_time is not None and self.maximum_allowed_time < self.estimated_completion_time:
            raise ValueError("maximum_allowed_time must not be shorter than estimated_completion_time")
        if not self.name.strip() or not self.description.strip():
            raise ValueError("a study needs a name and a description")
        if not self.external_study_url.startswith(("https://", "http://")):
            raise ValueError("external_study_url must be an http(s) URL")
        if self.prolific_id_option not in PROLIFIC_ID_OPTIONS:
            raise ValueError(f"prolific_id_option must be one of {PROLIFIC_ID_OPTIONS}")
        if not self.device_compatibility or not set(self.device_compatibility) <= set(DEVICES):
            raise ValueError(f"device_compatibility must be some of {DEVICES}")
        codes = [c.code for c in self.completion_codes]
        if not codes or len(set(codes)) != len(codes) or not all(codes):
            raise ValueError("completion_codes must hold at least one code, each unique and non-empty")

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "internal_name": self.internal_name or self.name,
            "description": self.description,
            "external_study_url": self.external_study_url,
            "prolific_id_option": self.prolific_id_option,
            "completion_codes": [c.to_json() for c in self.completion_codes],
            "total_available_places": self.total_available_places,
            "estimated_completion_time": self.estimated_completion_time,
            "reward": self.reward,
            "device_compatibility": list(self.device_compatibility),
            "filters": [dict(f) for f in self.filters],
        }
        if self.maximum_allowed_time is not None:
            body["maximum_allowed_time"] = self.maximum_allowed_time
        if self.project is not None:
            body["project"] = self.project
        return body


@dataclass(frozen=True)
class BonusLine:
    """One bonus: a participant id or submission id and an amount in cents. Prolific's CSV wants the
    amount in pounds/dollars ("An amount of 30 will pay £/$30.00"); cents never leave EvalHub otherwise."""

    recipient_id: str
    amount_cents: int

    def __post_init__(self) -> None:
        if not self.recipient_id or any(ch in self.recipient_id for ch in ",\r\n"):
            raise ValueError("a bonus recipient id must be non-empty, without commas or line breaks")
        if not isinstance(self.amount_cents, int) or isinstance(self.amount_cents, bool) or self.amount_cents < 1:
            raise ValueError(f"a bonus must be a positive whole number of cents, got {self.amount_cents!r}")

    def csv(self) -> str:
        return f"{self.recipient_id},{self.amount_cents // 100}.{self.amount_cents % 100:02d}"


# -- what comes out ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Study:
    id: str
    name: str
    internal_name: str
    status: str
    total_available_places: int
    places_taken: int
    reward: int
    estimated_completion_time: int
    external_study_url: str
    project: str | None


@dataclass(frozen=True)
class Submission:
    """A submission as listed or read. The listing gives no ``bonus_payments`` (None); ``get_submission``
    gives them, in cents, one entry per payment made."""

    id: str
    participant_id: str
    status: str
    study_id: str | None
    started_at: str | None
    completed_at: str | None
    study_code: str | None
    bonus_payments: tuple[int, ...] | None


@dataclass(frozen=True)
class BulkBonus:
    """A bonus record (bonuses/create-bonus-payments); amounts in cents, fees possibly in fractions of one."""

    id: str
    study_id: str | None
    amount: Decimal
    fees: Decimal
    vat: Decimal
    total_amount: Decimal


@dataclass(frozen=True)
class Project:
    id: str
    title: str
    workspace_id: str | None = None


@dataclass(frozen=True)
class Workspace:
    id: str
    title: str


def new_bonus_payments(before: Sequence[int], after: Sequence[int]) -> list[int]:
    """The payments in ``after`` that ``before`` did not hold, counted as a multiset: [50] -> [50, 50]
    gives [50] (the same amount paid again is a new payment). ``after`` missing one of ``before``'s is
    an inconsistency the caller should not paper over, so it raises ValueError."""
    remaining = Counter(after)
    remaining.subtract(Counter(before))
    if any(count < 0 for count in remaining.values()):
        raise ValueError(f"payments {sorted(before)} are not all among {sorted(after)}")
    return sorted(remaining.elements())


# -- the client -------------------------------------------------------------------------------------------


class ProlificClient:
    """One token's view of the API. Thread-safe: it keeps no state between calls."""

    def __init__(
        self,
        *,
        token: str,
        base_url: str = DEFAULT_API_URL,
        timeout: float = DEFAULT_TIMEOUT,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        if not token or not token.strip():
            raise ValueError("a Prolific API token is required")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the Prolific API URL must be http(s)://host/..., got {base_url!r}")
        if timeout <= 0 or page_size < 1:
            raise ValueError("timeout and page_size must be positive")
        self.token = _Secret(token.strip())
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout = timeout
        self.page_size = page_size
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:
        return f"ProlificClient(base_url={self.base_url!r}, timeout={self.timeout})"

    # -- account ---------------------------------------------------------------------------------------

    def whoami(self) -> str:
        """The researcher id the token belongs to ("Retrieve a user"): what a "check the token" button calls."""
        return _text(self._call("GET", "users/me/"), "id")

    def list_workspaces(self) -> list[Workspace]:
        return [Workspace(_text(w, "id"), str(w.get("title") or "")) for w in self._results("GET", "workspaces/")]

    def list_projects(self, workspace_id: str) -> list[Project]:
        rows = self._results("GET", f"workspaces/{_segment(workspace_id)}/projects/")
        return [Project(_text(p, "id"), str(p.get("title") or ""), _optional_text(p, "workspace")) for p in rows]

    # -- studies ---------------------------------------------------------------------------------------

    def create_study(self, draft: StudyDraft) -> Study:
        """A draft study (UNPUBLISHED). Not idempotent: after an error with ``outcome_unknown``, look for
        the draft by its internal_name (``find_studies``) before creating another."""
        return _study(self._call("POST", "studies/", body=draft.to_json()))

    def find_studies(self, *, internal_name: str) -> list[Study]:
        return [_study(s) for s in self._results("GET", "studies/") if s.get("internal_name") == internal_name]

    def get_study(self, study_id: str) -> Study:
        return _study(self._call("GET", f"studies/{_segment(study_id)}/"))

    def update_study(
        self, study_id: str, *, total_available_places: int | None = None, internal_name: str | None = None
    ) -> Study:
        """The changes a published study allows (more places, a new internal name)."""
        body: dict[str, Any] = {}
        if total_available_places is not None:
            body["total_available_places"] = total_available_places
        if internal_name is not None:
            body["internal_name"] = internal_name
        if not body:
            raise ValueError("nothing to update")
        return _study(self._call("PATCH", f"studies/{_segment(study_id)}/", body=body))

    def transition_study(self, study_id: str, action: str) -> Study:
        if action not in STUDY_ACTIONS:
            raise ValueError(f"action must be one of {STUDY_ACTIONS}")
        return _study(self._call("POST", f"studies/{_segment(study_id)}/transition/", body={"action": action}))

    def publish_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "PUBLISH")

    def pause_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "PAUSE")

    def start_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "START")

    def stop_study(self, study_id: str) -> Study:
        """Final: a stopped study cannot be started again."""
        return self.transition_study(study_id, "STOP")

    # -- submissions -----------------------------------------------------------------------------------

    def list_submissions(self, study_id: str, *, status: str | None = None) -> list[Submission]:
        """Every submission of the study, following the pages (``page``/``page_size``) until the answer's
        ``_links.next.href`` is empty. A submission seen on two pages (the list moved under us) counts once.
        The next link only says whether to go on: the page number is ours, so the token is never sent to
        a host the answer names."""
        seen: dict[str, Submission] = {}
        for page in range(1, MAX_PAGES + 1):
            query = {"study": study_id, "page": str(page), "page_size": str(self.page_size)}
            if status is not None:
                query["status"] = status
            payload = self._call("GET", "submissions/", query=query)
            rows = _rows(payload)
            for row in rows:
                submission = _submission(row)
                seen[submission.id] = submission
            links = payload.get("_links") if isinstance(payload, dict) else None
            following = links.get("next") if isinstance(links, dict) else None
            if not rows or not (isinstance(following, dict) and following.get("href")):
                return list(seen.values())
        raise ProlificError(f"GET submissions/: still more pages after {MAX_PAGES}", transient=False)

    def get_submission(self, submission_id: str) -> Submission:
        return _submission(self._call("GET", f"submissions/{_segment(submission_id)}/"))

    def approve_submission(self, submission_id: str) -> Submission:
        """Idempotent on Prolific's side: approving an approved submission changes nothing."""
        body = {"action": "APPROVE"}
        return _submission(self._call("POST", f"submissions/{_segment(submission_id)}/transition/", body=body))

    def reject_submission(self, submission_id: str, *, message: str, category: str) -> Submission:
        """``message`` goes to the participant and must be at least 100 characters; ``category`` is one of
        ``REJECTION_CATEGORIES``. Checked here first (ValueError), as Prolific would refuse them anyway."""
        if len(message.strip()) < REJECTION_MESSAGE_MIN_LENGTH:
            raise ValueError(f"a rejection message needs at least {REJECTION_MESSAGE_MIN_LENGTH} characters")
        if category not in REJECTION_CATEGORIES:
            raise ValueError(f"rejection category must be one of {REJECTION_CATEGORIES}")
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        return _submission(self._call("POST", f"submissions/{_segment(submission_id)}/transition/", body=body))

    # -- bonuses ---------------------------------------------------------------------------------------

    def create_bonus(self, study_id: str, lines: Sequence[BonusLine]) -> BulkBonus:
        """A bonus record; it pays nothing until ``pay_bonus``. Creating twice only makes a spare record."""
        if not lines:
            raise ValueError("a bonus record needs at least one line")
        body = {"study_id": study_id, "csv_bonuses": "\n".join(line.csv() for line in lines)}
        data = self._call("POST", "submissions/bonus-payments/", body=body)
        return BulkBonus(
            id=_text(data, "id"),
            study_id=_optional_text(data, "study"),
            amount=_decimal(data, "amount"),
            fees=_decimal(data, "fees"),
            vat=_decimal(data, "vat"),
            total_amount=_decimal(data, "total_amount"),
        )

    def pay_bonus(self, bulk_id: str) -> None:
        """Pay every line of the record. NOT idempotent: each call pays again. Call it once per record;
        after an error with ``outcome_unknown``, read the submissions' ``bonus_payments`` before anything else."""
        self._call("POST", f"bulk-bonus-payments/{_segment(bulk_id)}/pay/")

    def bonus_payments(self, submission_id: str) -> tuple[int, ...]:
        """The bonuses paid on a submission so far, in cents, one entry per payment (the documented read-back)."""
        payments = self.get_submission(submission_id).bonus_payments
        return payments if payments is not None else ()

    # -- plumbing --------------------------------------------------------------------------------------

    def _results(self, method: str, path: str) -> list[dict[str, Any]]:
        return _rows(self._call(method, path))

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> Any:
        """One request; the parsed JSON of its 2xx answer (whichever 2xx: Prolific's are 200, 201 or 202),
        or a ProlificError. Logs one line, without the token."""
        url = urllib.parse.urljoin(self.base_url, path)
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        # Built in place rather than in a named local, so a traceback's locals never hold it.
        request.add_header("Authorization", "Token " + self.token.reveal())
        started = time.monotonic()
        try:
            status, raw = self._exchange(request, method, path, started + self.timeout)
            answer = _json(raw, method, path, status)
        except ProlificError as exc:
            logger.info("prolific %s %s failed in %.0f ms: %s", method, path, _ms(started), exc.message)
            raise
        logger.info("prolific %s %s -> %s in %.0f ms", method, path, status, _ms(started))
        return answer

    def _exchange(self, request: urllib.request.Request, method: str, path: str, deadline: float) -> tuple[int, bytes]:
        """(status, body) of a 2xx answer (urllib raises HTTPError for the others); a classified
        ProlificError for anything else."""
        try:
            response = self._opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            raw = b"" if exc.fp is None else _read_within(exc.fp, deadline, method, path, tolerate_errors=True)
            exc.close()
            raise self._unexpected(method, path, exc.code, raw, exc.headers) from None
        except urllib.error.URLError as exc:
            # urllib raises URLError only while connecting and sending: the request did not get through whole.
            raise self._network_error(method, path, exc.reason, sent=False) from None
        except (OSError, http.client.HTTPException) as exc:
            # Raised while waiting for the answer: the request was sent, the server may have acted.
            raise self._network_error(method, path, exc, sent=True) from None
        with response:
            return response.status, _read_within(response, deadline, method, path)

    def _unexpected(self, method: str, path: str, status: int, raw: bytes, headers: Any) -> ProlificError:
        title, detail = _error_text(raw)
        text = self._scrub(f"{method} {path}: HTTP {status}{f' {title}' if title else ''}: {detail}")
        retry_after = None
        if status in (429, 503) and headers is not None:
            retry_after = _retry_after_seconds(headers.get("Retry-After"), time.time())
        return ProlificError(
            text,
            transient=status in (408, 429) or status >= 500,
            status=status,
            retry_after=retry_after,
            outcome_unknown=status >= 500,
        )

    def _network_error(self, method: str, path: str, reason: object, *, sent: bool) -> ProlificError:
        permanent = isinstance(reason, ssl.SSLCertVerificationError)
        what = "timed out" if isinstance(reason, TimeoutError) else type(reason).__name__
        stage = "waiting for the answer" if sent else "connecting"
        return ProlificError(
            self._scrub(f"{method} {path}: {what} while {stage} ({reason})"),
            transient=not permanent,
            outcome_unknown=sent,
        )

    def _scrub(self, text: str) -> str:
        secret = self.token.reveal()
        cleaned = text.replace(secret, "***").replace(urllib.parse.quote(secret, safe=""), "***")
        return cleaned if len(cleaned) <= 600 else cleaned[:600] + "…"


def _read_within(response: Any, deadline: float, method: str, path: str, *, tolerate_errors: bool = False) -> bytes:
    """The body, read in pieces with the deadline checked between them. An error body that cannot be read
    (``tolerate_errors``) is empty: the status already says what happened."""
    chunks: list[bytes] = []
    try:
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError("the deadline passed while the answer was arriving")
            chunk = response.read1(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except (OSError, http.client.HTTPException) as exc:
        if tolerate_errors:
            return b"".join(chunks)
        what = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
        raise ProlificError(
            f"{method} {path}: {what} while reading the answer", transient=True, outcome_unknown=True
        ) from None


def _json(raw: bytes, method: str, path: str, status: int) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError:
        # The server answered 2xx but we cannot read what it did: treat it as a lost answer.
        raise ProlificError(
            f"{method} {path}: HTTP {status} with a body that is not JSON",
            transient=True,
            status=status,
            outcome_unknown=True,
        ) from None


def _error_text(raw: bytes) -> tuple[str, str]:
    """(title, detail) from Prolific's ``{"error": {"title", "detail"}}``, a bare ``{"detail"}`` or text."""
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return "", raw[:300].decode("utf-8", "replace")
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("title") or ""), _detail_text(error.get("detail"))
    if isinstance(data, dict) and "detail" in data:
        return "", _detail_text(data["detail"])
    return "", _detail_text(data)


def _detail_text(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_detail_text(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(_detail_text(item) for item in detail)
    return "" if detail is None else str(detail)


def _retry_after_seconds(value: str | None, now: float) -> float | None:
    """Retry-After as seconds from now: a number of seconds, or an HTTP date (RFC 9110 allows both)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


def _segment(identifier: str) -> str:
    # An id is one path segment: "../" in an id must not reach another endpoint.
    if not identifier or "/" in identifier or identifier in (".", ".."):
        raise ValueError(f"not a Prolific id: {identifier!r}")
    return urllib.parse.quote(identifier, safe="")


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000


def _malformed(what: str) -> ProlificError:
    # A 2xx whose body lacks what the documentation promises: retrying will not change the server.
    return ProlificError(f"unexpected answer from Prolific: {what}", transient=False)


def _rows(payload: Any) -> list[dict[str, Any]]:
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(results, list) or not all(isinstance(row, dict) for row in results):
        raise _malformed("no list of results")
    return results


def _text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value:
        raise _malformed(f"no {key}")
    return value


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _int(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise _malformed(f"{key} is not a whole number")
    return int(value)


def _decimal(data: Mapping[str, Any], key: str) -> Decimal:
    value = data.get(key, 0)
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise _malformed(f"{key} is not a number") from None


def _study(data: Any) -> Study:
    if not isinstance(data, dict):
        raise _malformed("no study object")
    return Study(
        id=_text(data, "id"),
        name=str(data.get("name") or ""),
        internal_name=str(data.get("internal_name") or ""),
        status=_text(data, "status"),
        total_available_places=_int(data, "total_available_places"),
        places_taken=_int(data, "places_taken", 0),
        reward=_int(data, "reward"),
        estimated_completion_time=_int(data, "estimated_completion_time"),
        external_study_url=str(data.get("external_study_url") or ""),
        project=_optional_text(data, "project"),
    )


def _submission(data: Any) -> Submission:
    if not isinstance(data, dict):
        raise _malformed("no submission object")
    # The listing says participant_id and study_code, the detail participant and entered_code.
    participant = _optional_text(data, "participant_id") or _optional_text(data, "participant")
    if participant is None:
        raise _malformed("a submission without its participant")
    payments = data.get("bonus_payments")
    if payments is not None and (
        not isinstance(payments, list)
        or not all(isinstance(p, int | float) and not isinstance(p, bool) for p in payments)
    ):
        raise _malformed("bonus_payments is not a list of amounts")
    return Submission(
        id=_text(data, "id"),
        participant_id=participant,
        status=_text(data, "status"),
        study_id=_optional_text(data, "study_id"),
        started_at=_optional_text(data, "started_at"),
        completed_at=_optional_text(data, "completed_at"),
        study_code=_optional_text(data, "study_code") or _optional_text(data, "entered_code"),
        bonus_payments=None if payments is None else tuple(int(round(p)) for p in payments),
    )
