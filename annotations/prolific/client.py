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
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, cast

from annotations.prolific.records import (
    REJECTION_CATEGORIES,
    REJECTION_MESSAGE_MIN_LENGTH,
    STUDY_ACTIONS,
    BonusLine,
    BulkBonus,
    Project,
    ProlificError,
    Study,
    StudyDraft,
    Submission,
    Workspace,
    decimal_value,
    optional_text,
    required_text,
    result_rows,
    study_from_json,
    submission_from_json,
)

if TYPE_CHECKING:
    from email.message import Message

logger = logging.getLogger(__name__)

DEFAULT_API_URL: Final = "https://api.prolific.com/api/v1/"
DEFAULT_TIMEOUT: Final = 20.0
DEFAULT_PAGE_SIZE: Final = 100
# A study of 100 000 submissions at 100 a page; past this the listing is looping, not long.
MAX_PAGES: Final = 1000
USER_AGENT: Final = "EvalHub-Prolific-client"

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
    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: http.client.HTTPMessage, newurl: str) -> None:
        return None


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
        return required_text(self._call("GET", "users/me/"), "id")

    def list_workspaces(self) -> list[Workspace]:
        rows = self._results("GET", "workspaces/")
        return [Workspace(required_text(w, "id"), str(w.get("title") or "")) for w in rows]

    def list_projects(self, workspace_id: str) -> list[Project]:
        rows = self._results("GET", f"workspaces/{_segment(workspace_id)}/projects/")
        return [Project(required_text(p, "id"), str(p.get("title") or ""), optional_text(p, "workspace")) for p in rows]

    # -- studies ---------------------------------------------------------------------------------------

    def create_study(self, draft: StudyDraft) -> Study:
        """A draft study (UNPUBLISHED). Not idempotent: after an error with ``outcome_unknown``, look for
        the draft by its internal_name (``find_studies``) before creating another."""
        return study_from_json(self._call("POST", "studies/", body=draft.to_json()))

    def find_studies(self, *, internal_name: str) -> list[Study]:
        return [study_from_json(s) for s in self._results("GET", "studies/") if s.get("internal_name") == internal_name]

    def get_study(self, study_id: str) -> Study:
        return study_from_json(self._call("GET", f"studies/{_segment(study_id)}/"))

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
        return study_from_json(self._call("PATCH", f"studies/{_segment(study_id)}/", body=body))

    def transition_study(self, study_id: str, action: str) -> Study:
        if action not in STUDY_ACTIONS:
            raise ValueError(f"action must be one of {STUDY_ACTIONS}")
        return study_from_json(self._call("POST", f"studies/{_segment(study_id)}/transition/", body={"action": action}))

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
            rows = result_rows(payload)
            for row in rows:
                submission = submission_from_json(row)
                seen[submission.id] = submission
            links = payload.get("_links") if isinstance(payload, dict) else None
            following = links.get("next") if isinstance(links, dict) else None
            if not rows or not (isinstance(following, dict) and following.get("href")):
                return list(seen.values())
        raise ProlificError(f"GET submissions/: still more pages after {MAX_PAGES}", transient=False)

    def get_submission(self, submission_id: str) -> Submission:
        return submission_from_json(self._call("GET", f"submissions/{_segment(submission_id)}/"))

    def approve_submission(self, submission_id: str) -> Submission:
        """Idempotent on Prolific's side: approving an approved submission changes nothing."""
        body = {"action": "APPROVE"}
        return submission_from_json(self._call("POST", f"submissions/{_segment(submission_id)}/transition/", body=body))

    def reject_submission(self, submission_id: str, *, message: str, category: str) -> Submission:
        """``message`` goes to the participant and must be at least 100 characters; ``category`` is one of
        ``REJECTION_CATEGORIES``. Checked here first (ValueError), as Prolific would refuse them anyway."""
        if len(message.strip()) < REJECTION_MESSAGE_MIN_LENGTH:
            raise ValueError(f"a rejection message needs at least {REJECTION_MESSAGE_MIN_LENGTH} characters")
        if category not in REJECTION_CATEGORIES:
            raise ValueError(f"rejection category must be one of {REJECTION_CATEGORIES}")
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        return submission_from_json(self._call("POST", f"submissions/{_segment(submission_id)}/transition/", body=body))

    # -- bonuses ---------------------------------------------------------------------------------------

    def create_bonus(self, study_id: str, lines: Sequence[BonusLine]) -> BulkBonus:
        """A bonus record; it pays nothing until ``pay_bonus``. Creating twice only makes a spare record."""
        if not lines:
            raise ValueError("a bonus record needs at least one line")
        body = {"study_id": study_id, "csv_bonuses": "\n".join(line.csv() for line in lines)}
        data = self._call("POST", "submissions/bonus-payments/", body=body)
        return BulkBonus(
            id=required_text(data, "id"),
            study_id=optional_text(data, "study"),
            amount=decimal_value(data, "amount"),
            fees=decimal_value(data, "fees"),
            vat=decimal_value(data, "vat"),
            total_amount=decimal_value(data, "total_amount"),
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
        return result_rows(self._call(method, path))

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
            # urllib keeps the answer (an http.client.HTTPResponse) as the error's fp; typeshed says IO[bytes].
            raw = b"" if exc.fp is None else _read_within(cast("_Body", exc.fp), deadline, method, path,
                                                          tolerate_errors=True)
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

    def _unexpected(self, method: str, path: str, status: int, raw: bytes, headers: Message | None) -> ProlificError:
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


class _Body(Protocol):
    """An answer's body as urllib hands it over (an http.client.HTTPResponse)."""

    def read1(self, n: int = -1, /) -> bytes: ...


def _read_within(response: _Body, deadline: float, method: str, path: str, *, tolerate_errors: bool = False) -> bytes:
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

