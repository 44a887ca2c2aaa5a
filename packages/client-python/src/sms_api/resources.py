"""The API's resources (the OpenAPI document's schemas) and the results of the
client's calls, as frozen dataclasses. Unknown fields of an answer are ignored
(within ``/v1`` changes are additive); a missing or mistyped field makes the
answer ``unexpected_response``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Literal, Mapping, Optional, Tuple, cast

# Statuses a message never leaves (spec 3).
FINAL_STATUSES: Tuple[str, ...] = ("delivered", "undeliverable", "failed", "unknown")

# Message statuses: queued, submitted, delivered, undeliverable, failed, unknown.
# Verification statuses: pending, approved, expired, canceled, max_attempts_reached, send_failed.


def is_final_status(status: str) -> bool:
    """Whether a message status is final (``delivered``, ``undeliverable``, ``failed``, ``unknown``)."""
    return status in FINAL_STATUSES


class ResourceShapeError(ValueError):
    """An answer's JSON does not have the resource's shape (turned into ``unexpected_response``)."""


def _field(data: Mapping[str, Any], name: str, kind: Any, nullable: bool = False) -> Any:
    if name not in data:
        raise ResourceShapeError(f"missing field {name!r}")
    value = data[name]
    if value is None and nullable:
        return None
    # bool is an int in Python: a count must not be a boolean.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ResourceShapeError(f"field {name!r} has the wrong type")
    return value


def _object(data: Any) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise ResourceShapeError("not a JSON object")
    return cast(Mapping[str, Any], data)


@dataclass(frozen=True)
class RateLimit:
    """The ``RateLimit-*`` headers of an answer: the limit nearest to exhaustion."""

    limit: int
    remaining: int
    reset_seconds: int
    """Seconds until the window resets."""


@dataclass(frozen=True)
class MessageError:
    """Why a message failed, was undeliverable, or has an unknown outcome."""

    code: str
    message: str

    @classmethod
    def from_json(cls, data: Any) -> MessageError:
        body = _object(data)
        return cls(code=_field(body, "code", str), message=_field(body, "message", str))


@dataclass(frozen=True)
class Message:
    """A message and its current state (spec 2.1); ``to`` is masked (``+9955••••••56``)."""

    id: str
    object: str
    to: str
    status: str
    segments: Optional[int]
    error: Optional[MessageError]
    created_at: str
    updated_at: str

    @property
    def is_final(self) -> bool:
        return is_final_status(self.status)

    @classmethod
    def from_json(cls, data: Any) -> Message:
        body = _object(data)
        error = _field(body, "error", dict, nullable=True)
        return cls(
            id=_field(body, "id", str),
            object=_field(body, "object", str),
            to=_field(body, "to", str),
            status=_field(body, "status", str),
            segments=_field(body, "segments", int, nullable=True),
            error=None if error is None else MessageError.from_json(error),
            created_at=_field(body, "created_at", str),
            updated_at=_field(body, "updated_at", str),
        )


@dataclass(frozen=True)
class TestKey:
    """A new test key (spec 2.3): ``api_key`` is shown only once; treat it as a password."""

    __test__ = False  # not a unittest/pytest test class

    api_key: str
    project_id: str
    mode: str
    claim_url: str
    expires_at: str
    next_steps: str

    def __repr__(self) -> str:
        # Keeps the key out of logs and tracebacks that print the object.
        return f"TestKey(api_key='sk_test_…', project_id={self.project_id!r}, expires_at={self.expires_at!r})"

    @classmethod
    def from_json(cls, data: Any) -> TestKey:
        body = _object(data)
        return cls(
            api_key=_field(body, "api_key", str),
            project_id=_field(body, "project_id", str),
            mode=_field(body, "mode", str),
            claim_url=_field(body, "claim_url", str),
            expires_at=_field(body, "expires_at", str),
            next_steps=_field(body, "next_steps", str),
        )


@dataclass(frozen=True)
class Verification:
    """A verification (the extension): the service's one-time code, sent and checked; never the code."""

    id: str
    object: str
    to: str
    status: str
    template: str
    locale: str
    attempts_remaining: int
    expires_at: str
    message_id: str
    created_at: str
    updated_at: str

    @classmethod
    def from_json(cls, data: Any) -> Verification:
        body = _object(data)
        return cls(
            id=_field(body, "id", str),
            object=_field(body, "object", str),
            to=_field(body, "to", str),
            status=_field(body, "status", str),
            template=_field(body, "template", str),
            locale=_field(body, "locale", str),
            attempts_remaining=_field(body, "attempts_remaining", int),
            expires_at=_field(body, "expires_at", str),
            message_id=_field(body, "message_id", str),
            created_at=_field(body, "created_at", str),
            updated_at=_field(body, "updated_at", str),
        )


@dataclass(frozen=True)
class CreateTestKeyResult:
    """A new test key, and the answer's ``status``, ``request_id``, ``rate_limit``
    and the ``attempts`` made (every result has these four)."""

    test_key: TestKey
    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    attempts: int


@dataclass(frozen=True)
class SendMessageResult:
    """The message, and:

    - ``replayed``: True for a ``200`` with ``Idempotent-Replayed: true``, the
      stored answer to an earlier request with the same key (nothing was sent
      again; also what a retry after a lost answer gets); False for a ``201``, a
      new message;
    - ``idempotency_key``: the key the message was sent with (generated when
      none was given): store it to retry later yourself;
    - ``status``, ``request_id``, ``rate_limit``, ``attempts`` of the last answer.
    """

    message: Message
    replayed: bool
    idempotency_key: str
    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    attempts: int


@dataclass(frozen=True)
class StartVerificationResult:
    """The verification, ``replayed`` and ``idempotency_key`` as for a send, and
    the last answer's ``status``, ``request_id``, ``rate_limit``, ``attempts``."""

    verification: Verification
    replayed: bool
    idempotency_key: str
    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    attempts: int


CheckOutcome = Literal["approved", "pending", "max_attempts_reached", "verification_not_pending"]

CHECK_OUTCOMES: Tuple[CheckOutcome, ...] = ("approved", "pending", "max_attempts_reached", "verification_not_pending")
"""A check's outcomes, in the REST words: the ``status`` of the check's ``200``
(``approved``, ``pending``, ``max_attempts_reached``) or the code of its ``409``
(``verification_not_pending``). The same words as the TypeScript and PHP clients
and MCP's ``check_verification`` (docs/api-behaviour.md, "A check's outcome")."""


@dataclass(frozen=True)
class CheckVerificationResult:
    """A check's outcome. Let the user in only on ``approved``.

    - ``approved``: ``200``, the right code (a verification approves once);
    - ``pending``: ``200``, a wrong code; ``verification.attempts_remaining`` is one fewer;
    - ``max_attempts_reached``: ``200``, the last wrong code; start a new verification;
    - ``verification_not_pending``: ``409 verification_not_pending`` (already
      approved, expired, canceled, out of attempts, or its SMS failed; the same
      answer whatever the code); ``verification`` is None and ``message`` names
      the status. Start a new verification.
    """

    outcome: CheckOutcome
    verification: Optional[Verification]
    message: Optional[str]
    request_id: Optional[str]

    @property
    def approved(self) -> bool:
        return self.outcome == "approved"


JsonObject = Dict[str, Any]
