"""``sms_api.Client``: the public REST routes of the Georgia transactional SMS
API (test keys, messages, health) and the verifications extension, with the
TypeScript client's semantics (packages/api-client): a fresh Idempotency-Key
(UUID v4) per logical send, kept across that send's retries; Retry-After
honoured within ``RetryPolicy.max_delay``; connect and read timeouts; typed
errors; and ``wait_for_final_status`` polling as spec 6 recommends.

    client = Client(base_url="https://sms.example.ge", api_key=os.environ["SMS_API_KEY"])
    sent = client.send_message(to="+995555123456", template="verification_code", variables={"code": "482913"})
    final = client.wait_for_final_status(sent.message.id)
"""

from __future__ import annotations

import random as _random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple
from urllib.parse import quote

from .errors import TIMEOUT, UNEXPECTED_RESPONSE, SmsApiError, SmsTimeoutError
from .resources import (
    CHECK_OUTCOMES,
    CheckOutcome,
    CheckVerificationResult,
    CreateTestKeyResult,
    Message,
    ResourceShapeError,
    SendMessageResult,
    StartVerificationResult,
    TestKey,
    Verification,
)
from .transport import (
    DEFAULT_RETRY,
    DEFAULT_TIMEOUT,
    IDEMPOTENT,
    UNSAFE,
    CallResult,
    CallSpec,
    Random,
    RetryPolicy,
    Sleep,
    TimeoutLike,
    Transport,
    as_timeout,
)

Clock = Callable[[], float]


@dataclass(frozen=True)
class Polling:
    """Spec 6: read first after about 2 s, double the wait after each read, cap it at 30 s."""

    initial_delay: float = 2.0
    factor: float = 2.0
    max_delay: float = 30.0


DEFAULT_POLLING = Polling()

WAIT_SECONDS = 25
"""The longest hold ``wait_for_final_status`` asks the server for (``Prefer: wait``), in seconds."""


def polling_delays(polling: Polling = DEFAULT_POLLING) -> Iterator[float]:
    """The waits between reads: 2, 4, 8, 16, 30, 30, ... s by default."""
    delay = min(polling.initial_delay, polling.max_delay)
    while True:
        yield delay
        delay = min(delay * polling.factor, polling.max_delay)


# A 200 check answer's verification status is the check's outcome; these three alone.
_CHECKED_STATUSES: Dict[str, CheckOutcome] = {
    status: status for status in CHECK_OUTCOMES if status != "verification_not_pending"
}


def _path_segment(value: str) -> str:
    return quote(value, safe="")


def _replayed(result: CallResult) -> bool:
    return result.status == 200 and result.headers.get("idempotent-replayed") == "true"


def _parse(result: CallResult, parse: Callable[[Any], Any]) -> Any:
    try:
        return parse(result.body)
    except ResourceShapeError as cause:
        raise SmsApiError(
            UNEXPECTED_RESPONSE,
            f"Unexpected HTTP {result.status} answer ({cause}).",
            status=result.status,
            request_id=result.request_id,
            rate_limit=result.rate_limit,
            attempts=result.attempts,
        ) from cause


class Client:
    """A client of one service.

    ``base_url``: the service's address, e.g. ``https://sms.example.ge``.
    ``api_key``: ``sk_test_...`` or ``sk_live_...``; only the message and
    verification routes need one. ``timeout``: seconds, a number for both or a
    ``Timeout(connect=10, read=30)`` (the default) or a ``(connect, read)`` pair.
    ``retry``: a ``RetryPolicy`` (3 attempts, 0.5 s doubling with jitter, at most
    30 s apart; ``RetryPolicy(attempts=1)`` turns retries off). ``polling``: the
    schedule of ``wait_for_final_status`` (spec 6's by default). ``sleep``,
    ``clock`` and ``random`` replace ``time.sleep``, ``time.monotonic`` and the
    jitter's ``random.random`` (tests); ``new_idempotency_key`` the UUID v4
    generator.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        timeout: TimeoutLike = DEFAULT_TIMEOUT,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        polling: Polling = DEFAULT_POLLING,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        random: Random = _random.random,
        new_idempotency_key: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.base_url = base_url
        self.polling = polling
        self._options: Dict[str, Any] = dict(
            timeout=timeout,
            retry=retry,
            polling=polling,
            sleep=sleep,
            clock=clock,
            random=random,
            new_idempotency_key=new_idempotency_key,
        )
        self._sleep = sleep
        self._clock = clock
        # wait_for_final_status's hold at the server (Prefer: wait), 5 s inside the read timeout, at most 25 s.
        self._hold_seconds = max(0, min(WAIT_SECONDS, int(as_timeout(timeout).read) - 5))
        self._new_key = new_idempotency_key
        self._transport = Transport(
            base_url=base_url,
            api_key=api_key,
            timeout=as_timeout(timeout),
            retry=retry,
            sleep=sleep,
            random=random,
        )

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r})"

    def with_api_key(self, api_key: str) -> Client:
        """The same client (options, hooks) with another API key, e.g. one from ``create_test_key()``."""
        return Client(self.base_url, api_key, **self._options)

    # Test keys ---------------------------------------------------------------

    def create_test_key(self) -> CreateTestKeyResult:
        """``POST /v1/test-keys``: a new test key for a new project; no API key needed.
        Retried only on answers that say nothing was done (429 rate_limited, 503),
        never after a timeout (a key may have been made)."""
        result = self._transport.call(CallSpec(method="POST", path="/v1/test-keys", ok=(201,), safety=UNSAFE))
        return CreateTestKeyResult(
            test_key=_parse(result, TestKey.from_json),
            status=result.status,
            request_id=result.request_id,
            rate_limit=result.rate_limit,
            attempts=result.attempts,
        )

    # Messages ----------------------------------------------------------------

    def send_message(
        self,
        *,
        to: str,
        template: str,
        variables: Mapping[str, str],
        locale: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> SendMessageResult:
        """``POST /v1/messages``: one templated SMS (``verification_code``,
        ``login_code``, ``password_reset_code``; ``locale`` ``ka`` or ``en``).

        ``idempotency_key``: 1-200 characters, new for each logical message and
        the same for every retry of it; a UUID v4 is generated when omitted and
        returned as ``result.idempotency_key``. Retried with that key where safe;
        a ``201`` is never retried, whatever its status (``unknown`` may have been
        sent).
        """
        key = idempotency_key if idempotency_key is not None else self._new_key()
        body: Dict[str, Any] = {"to": to, "template": template, "variables": dict(variables)}
        if locale is not None:
            body["locale"] = locale
        result = self._transport.call(
            CallSpec(
                method="POST",
                path="/v1/messages",
                auth=True,
                headers={"Idempotency-Key": key},
                body=body,
                ok=(200, 201),
                safety=IDEMPOTENT,
            )
        )
        return SendMessageResult(
            message=_parse(result, Message.from_json),
            replayed=_replayed(result),
            idempotency_key=key,
            status=result.status,
            request_id=result.request_id,
            rate_limit=result.rate_limit,
            attempts=result.attempts,
        )

    def get_message(self, message_id: str) -> Message:
        """``GET /v1/messages/{message_id}``: the message's current state."""
        result = self._transport.call(
            CallSpec(
                method="GET",
                path=f"/v1/messages/{_path_segment(message_id)}",
                auth=True,
                ok=(200,),
                safety=IDEMPOTENT,
            )
        )
        message: Message = _parse(result, Message.from_json)
        return message

    def wait_for_final_status(
        self,
        message_id: str,
        *,
        polling: Optional[Polling] = None,
        on_update: Optional[Callable[[Message], None]] = None,
        max_wait: Optional[float] = None,
    ) -> Message:
        """Returns the message once its status is final (``delivered``,
        ``undeliverable``, ``failed``, ``unknown``). The first read is after about
        2 s (spec 6); after it, where the server offers it (an extension: ``ETag``,
        ``If-None-Match`` with ``Prefer: wait``), each read waits at the server
        until the status changes and the next follows at once. Where the server
        does not say ``Preference-Applied`` it polls as spec 6 recommends (the
        wait doubling, capped at 30 s; ``polling`` or the client's ``polling``
        changes it).
        ``on_update`` hears every state read. ``max_wait`` (seconds, by the
        client's clock; None: no bound) raises ``SmsTimeoutError`` instead of
        sleeping past it. Errors of ``get_message`` (after its retries) are raised.
        """
        started = self._clock()
        delays = polling_delays(polling or self.polling)
        etag: Optional[str] = None
        asked_to_hold = False
        delay: Optional[float] = next(delays)
        while True:
            if delay is not None:
                if max_wait is not None and self._clock() + delay - started > max_wait:
                    raise SmsTimeoutError(
                        TIMEOUT, f"Message {message_id} was not final within {max_wait:g} s.", attempts=1
                    )
                self._sleep(delay)
            if etag is not None:
                asked_to_hold = True
            message, etag_read, held = self._read_message(message_id, etag)
            if message is not None:
                if on_update is not None:
                    on_update(message)
                if message.is_final:
                    return message
            etag = etag_read or etag
            # Held (or the server's first ETag, not yet asked to hold): ask again at once. Else spec 6's schedule.
            if etag is not None and (held or not asked_to_hold):
                if max_wait is not None and self._clock() - started > max_wait:
                    raise SmsTimeoutError(
                        TIMEOUT, f"Message {message_id} was not final within {max_wait:g} s.", attempts=1
                    )
                delay = None
            else:
                delay = next(delays)

    def _read_message(
        self, message_id: str, etag: Optional[str]
    ) -> Tuple[Optional[Message], Optional[str], bool]:
        """A read of the message; with ``etag``, a conditional one held at the server
        (an extension: ``If-None-Match`` and ``Prefer: wait``). The message (None:
        not changed), its ETag, and whether the server held the read."""
        headers: Dict[str, str] = {}
        if etag is not None:
            headers["If-None-Match"] = etag
            if self._hold_seconds > 0:
                headers["Prefer"] = f"wait={self._hold_seconds}"
        result = self._transport.call(
            CallSpec(
                method="GET",
                path=f"/v1/messages/{_path_segment(message_id)}",
                auth=True,
                headers=headers,
                ok=(200,) if etag is None else (200, 304),
                safety=IDEMPOTENT,
            )
        )
        message: Optional[Message] = None if result.status == 304 else _parse(result, Message.from_json)
        return message, result.headers.get("etag"), result.headers.get("preference-applied") is not None

    # Verifications (the extension) -------------------------------------------

    def start_verification(
        self,
        *,
        to: str,
        template: Optional[str] = None,
        locale: Optional[str] = None,
        code_length: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> StartVerificationResult:
        """``POST /v1/verifications``: the service draws a code and sends it
        (test keys: ``code_length`` zeros). The Idempotency-Key is handled as for
        ``send_message``; a retry with it replays the first answer (no second SMS)."""
        key = idempotency_key if idempotency_key is not None else self._new_key()
        body: Dict[str, Any] = {"to": to}
        if template is not None:
            body["template"] = template
        if locale is not None:
            body["locale"] = locale
        if code_length is not None:
            body["code_length"] = code_length
        result = self._transport.call(
            CallSpec(
                method="POST",
                path="/v1/verifications",
                auth=True,
                headers={"Idempotency-Key": key},
                body=body,
                ok=(200, 201),
                safety=IDEMPOTENT,
            )
        )
        return StartVerificationResult(
            verification=_parse(result, Verification.from_json),
            replayed=_replayed(result),
            idempotency_key=key,
            status=result.status,
            request_id=result.request_id,
            rate_limit=result.rate_limit,
            attempts=result.attempts,
        )

    def check_verification(self, verification_id: str, code: str) -> CheckVerificationResult:
        """``POST /v1/verifications/{id}/check``: what the user typed; never costs
        credits. Let the user in only on ``result.outcome == "approved"``; a
        raised error is not an approval. Not retried after a timeout or a network
        failure (a wrong code whose answer was lost would count twice)."""
        try:
            result = self._transport.call(
                CallSpec(
                    method="POST",
                    path=f"/v1/verifications/{_path_segment(verification_id)}/check",
                    auth=True,
                    body={"code": code},
                    ok=(200,),
                    safety=UNSAFE,
                )
            )
        except SmsApiError as error:
            if error.code != "verification_not_pending":
                raise
            return CheckVerificationResult(
                outcome="verification_not_pending", verification=None, message=error.message, request_id=error.request_id
            )
        verification: Verification = _parse(result, Verification.from_json)
        outcome = _CHECKED_STATUSES.get(verification.status)
        if outcome is None:
            raise SmsApiError(
                UNEXPECTED_RESPONSE,
                f"Unexpected verification status {verification.status} in a 200 check answer.",
                status=result.status,
                request_id=result.request_id,
                rate_limit=result.rate_limit,
                attempts=result.attempts,
            )
        return CheckVerificationResult(
            outcome=outcome,
            verification=verification,
            message=None,
            request_id=result.request_id,
        )

    def get_verification(self, verification_id: str) -> Verification:
        """``GET /v1/verifications/{id}``: the current state."""
        result = self._transport.call(
            CallSpec(
                method="GET",
                path=f"/v1/verifications/{_path_segment(verification_id)}",
                auth=True,
                ok=(200,),
                safety=IDEMPOTENT,
            )
        )
        verification: Verification = _parse(result, Verification.from_json)
        return verification

    # Health ------------------------------------------------------------------

    def liveness(self) -> Dict[str, Any]:
        """``GET /healthz``: ``{"status": "alive"}``."""
        body: Dict[str, Any] = self._transport.call(
            CallSpec(method="GET", path="/healthz", ok=(200,), safety=IDEMPOTENT)
        ).body
        return body

    def readiness(self) -> Dict[str, Any]:
        """``GET /readyz``: ``not_ready`` (503) is an answer, not an error."""
        body: Dict[str, Any] = self._transport.call(
            CallSpec(method="GET", path="/readyz", ok=(200, 503), safety=IDEMPOTENT)
        ).body
        return body
