"""Prolific's records as EvalHub reads and writes them: statuses, the errors of a call, what goes in (a
study draft, completion codes, bonus lines) and what comes out (studies, submissions, bonus records), and the
readers that turn the API's JSON into them. Field names follow docs.prolific.com (docs/prolific-api-notes.md)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final, TypedDict

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

    def __reduce__(self) -> tuple[Callable[[str, _ErrorFields], ProlificError], tuple[str, _ErrorFields]]:
        # Exception's default pickling replays only the message, and the keyword-only fields would be lost
        # (or the rebuild would fail) wherever Celery or multiprocessing carries the error.
        fields: _ErrorFields = {
            "transient": self.transient,
            "status": self.status,
            "retry_after": self.retry_after,
            "outcome_unknown": self.outcome_unknown,
        }
        return (_rebuild_error, (self.message, fields))


class _ErrorFields(TypedDict):
    transient: bool
    status: int | None
    retry_after: float | None
    outcome_unknown: bool


def _rebuild_error(message: str, fields: _ErrorFields) -> ProlificError:
    return ProlificError(message, **fields)


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


def malformed(what: str) -> ProlificError:
    # A 2xx whose body lacks what the documentation promises: retrying will not change the server.
    return ProlificError(f"unexpected answer from Prolific: {what}", transient=False)


def result_rows(payload: Any) -> list[dict[str, Any]]:
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(results, list) or not all(isinstance(row, dict) for row in results):
        raise malformed("no list of results")
    return results


def required_text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value:
        raise malformed(f"no {key}")
    return value


def optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def whole_number(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise malformed(f"{key} is not a whole number")
    return int(value)


def decimal_value(data: Mapping[str, Any], key: str) -> Decimal:
    value = data.get(key, 0)
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise malformed(f"{key} is not a number") from None


def study_from_json(data: Any) -> Study:
    if not isinstance(data, dict):
        raise malformed("no study object")
    return Study(
        id=required_text(data, "id"),
        name=str(data.get("name") or ""),
        internal_name=str(data.get("internal_name") or ""),
        status=required_text(data, "status"),
        total_available_places=whole_number(data, "total_available_places"),
        places_taken=whole_number(data, "places_taken", 0),
        reward=whole_number(data, "reward"),
        estimated_completion_time=whole_number(data, "estimated_completion_time"),
        external_study_url=str(data.get("external_study_url") or ""),
        project=optional_text(data, "project"),
    )


def submission_from_json(data: Any) -> Submission:
    if not isinstance(data, dict):
        raise malformed("no submission object")
    # The listing says participant_id and study_code, the detail participant and entered_code.
    participant = optional_text(data, "participant_id") or optional_text(data, "participant")
    if participant is None:
        raise malformed("a submission without its participant")
    payments = data.get("bonus_payments")
    if payments is not None and (
        not isinstance(payments, list)
        or not all(isinstance(p, int | float) and not isinstance(p, bool) for p in payments)
    ):
        raise malformed("bonus_payments is not a list of amounts")
    return Submission(
        id=required_text(data, "id"),
        participant_id=participant,
        status=required_text(data, "status"),
        study_id=optional_text(data, "study_id"),
        started_at=optional_text(data, "started_at"),
        completed_at=optional_text(data, "completed_at"),
        study_code=optional_text(data, "study_code") or optional_text(data, "entered_code"),
        bonus_payments=None if payments is None else tuple(int(round(p)) for p in payments),
    )
