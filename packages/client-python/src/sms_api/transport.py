"""The machinery every call goes through: the connect and read timeouts,
retries with exponential backoff and jitter (honouring Retry-After) where the
API says a retry is safe, and the typed errors. A method of the client only
says what it sends, which answers are successes, and how safe a retry of it is.

The retry rules are the TypeScript client's (packages/api-client/src/transport.ts):

- "idempotent" calls (reads, and sends with an Idempotency-Key: a retry replays
  or sends once) are retried after a timeout or a network failure, on the answers
  that say nothing was done (429 rate_limited, 503 provider_unavailable, 503
  too_many_connections, 408 request_timeout), and on 500 internal_error (also
  what the service's proxy answers for a 502/503/504, with Retry-After: 1), and
  on a foreign gateway's 502, 503 or 504 that is not the API's envelope (an
  nginx or HAProxy page, ``unexpected_response``: the request may or may not
  have reached the service, and the same Idempotency-Key replays or sends once);
- "unsafe" calls (a new test key, a verification check) only on the answers
  that say nothing was done;
- never a 2xx (a 201 ``unknown`` included), 429 daily_limit_reached, 402, any
  409 (``idempotency_key_reused``: the key was used for another request;
  ``verification_not_pending``: the verification has ended), any other 4xx, nor
  another answer that is not the API's envelope;
- never when Retry-After asks for longer than ``max_delay``: that error is raised.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union, cast
from urllib.parse import urlsplit

from ._version import __version__
from .errors import (
    NETWORK_ERROR,
    TIMEOUT,
    UNEXPECTED_RESPONSE,
    SmsApiError,
    SmsError,
    SmsNetworkError,
    SmsTimeoutError,
)
from .resources import RateLimit

Sleep = Callable[[float], None]
Random = Callable[[], float]

# An answer larger than this is not the API's (its largest is a few kilobytes).
MAX_ANSWER_BYTES = 4 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Timeout:
    """How long one request may take, in seconds.

    ``connect``: to open the connection (TLS handshake included). ``read``: from
    the request sent to the whole answer read; each read from the socket waits at
    most what is left of it, so a server that trickles its answer is cut off too.
    """

    connect: float = 10.0
    read: float = 30.0


DEFAULT_TIMEOUT = Timeout()
TimeoutLike = Union[float, Tuple[float, float], Timeout]


def as_timeout(value: TimeoutLike) -> Timeout:
    """A number is both timeouts; a pair is ``(connect, read)``."""
    if isinstance(value, Timeout):
        return value
    if isinstance(value, tuple):
        return Timeout(connect=float(value[0]), read=float(value[1]))
    return Timeout(connect=float(value), read=float(value))


@dataclass(frozen=True)
class RetryEvent:
    """One retry about to happen, as ``on_retry`` hears it."""

    attempt: int
    """The attempt that failed (1 for the first request)."""
    delay: float
    """The wait before the next attempt, in seconds."""
    error: SmsError
    method: str
    path: str


@dataclass(frozen=True)
class RetryPolicy:
    """Retries where the API says they are safe.

    ``attempts``: requests per call at most, the first included (1 turns retries
    off). ``base_delay``: the first backoff in seconds, doubled after each
    attempt, with "equal jitter" (half to all of it). ``max_delay``: the longest
    wait between attempts; an answer whose Retry-After asks for longer is raised
    at once. ``on_retry``: called before each retry (logging, metrics).
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    on_retry: Optional[Callable[[RetryEvent], None]] = field(default=None, compare=False)


DEFAULT_RETRY = RetryPolicy()

# The API's answers that say a retry (with the same Idempotency-Key) is safe: nothing was done.
NOTHING_DONE = frozenset({"rate_limited", "provider_unavailable", "too_many_connections", "request_timeout"})

IDEMPOTENT = "idempotent"
UNSAFE = "unsafe"


# A gateway in front of the service (a load balancer, nginx, HAProxy) that could not get or pass on its answer.
GATEWAY_STATUSES = frozenset({502, 503, 504})


def retryable(error: SmsError, safety: str) -> bool:
    """Whether a failure may be retried: never a 402, a 409, a daily_limit_reached
    or any other 4xx (the request must change first); a 500 internal_error, a
    gateway's 502/503/504 page, a timeout or a network failure only when the call
    is idempotent (it may have done part of the work)."""
    if isinstance(error, (SmsTimeoutError, SmsNetworkError)):
        return safety == IDEMPOTENT
    if error.code in NOTHING_DONE:
        return True
    if error.code == UNEXPECTED_RESPONSE and error.status in GATEWAY_STATUSES:
        return safety == IDEMPOTENT
    return error.code == "internal_error" and safety == IDEMPOTENT


@dataclass(frozen=True)
class CallSpec:
    method: str
    path: str
    ok: Tuple[int, ...]
    """Statuses that are answers, not errors (a 304 has no body: ``body`` is None)."""
    safety: str
    headers: Mapping[str, str] = field(default_factory=lambda: {})
    body: Any = None
    auth: bool = False
    """Send the API key (the message and verification routes)."""


@dataclass(frozen=True)
class CallResult:
    status: int
    request_id: Optional[str]
    rate_limit: Optional[RateLimit]
    headers: Mapping[str, str]
    """Lower-cased header names."""
    body: Any
    attempts: int


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: Dict[str, str]
    raw: bytes


_INTEGER = re.compile(r"^\d+$")


def _integer_header(headers: Mapping[str, str], name: str) -> Optional[int]:
    value = headers.get(name)
    return int(value) if value is not None and _INTEGER.match(value) else None


def _rate_limit(headers: Mapping[str, str]) -> Optional[RateLimit]:
    limit = _integer_header(headers, "ratelimit-limit")
    remaining = _integer_header(headers, "ratelimit-remaining")
    reset = _integer_header(headers, "ratelimit-reset")
    if limit is None or remaining is None or reset is None:
        return None
    return RateLimit(limit=limit, remaining=remaining, reset_seconds=reset)


def _envelope(raw: bytes) -> Optional[Tuple[str, str, Optional[str]]]:
    """``(code, message, request_id)`` of the API's error envelope, or None when the body is not one."""
    try:
        body: Any = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error: Any = cast(Dict[str, Any], body).get("error")
    if not isinstance(error, dict):
        return None
    fields = cast(Dict[str, Any], error)
    code, message, request_id = fields.get("code"), fields.get("message"), fields.get("request_id")
    if not isinstance(code, str) or not isinstance(message, str):
        return None
    return code, message, request_id if isinstance(request_id, str) else None


def _api_error(answer: _Answer, attempts: int) -> SmsApiError:
    parsed = _envelope(answer.raw)
    code, message, request_id = parsed or (
        UNEXPECTED_RESPONSE,
        f"Unexpected HTTP {answer.status} answer (not the API's error envelope).",
        None,
    )
    return SmsApiError(
        code,
        message,
        status=answer.status,
        request_id=request_id or answer.headers.get("x-request-id"),
        retry_after=_integer_header(answer.headers, "retry-after"),
        rate_limit=_rate_limit(answer.headers),
        attempts=attempts,
    )


class Transport:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: Optional[str],
        timeout: Timeout,
        retry: RetryPolicy,
        sleep: Sleep,
        random: Random,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be an http:// or https:// URL, e.g. https://sms.example.ge")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self._attempts = max(1, int(retry.attempts))
        self._sleep = sleep
        self._random = random

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout.connect, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout.connect)

    def _exchange(self, spec: CallSpec, expired: threading.Event) -> _Answer:
        """One request and its whole answer. Raises OSError, http.client.HTTPException
        or socket.timeout; ``expired`` is set when the read timeout cut it off."""
        headers: Dict[str, str] = {
            "Accept": "application/json",
            "User-Agent": f"sms-api-ge-python/{__version__}",
            **spec.headers,
        }
        if spec.auth and self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        payload: Optional[bytes] = None
        if spec.body is not None:
            payload = json.dumps(spec.body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        connection = self._connection()
        watchdog: Optional[threading.Timer] = None
        try:
            connection.connect()
            sock = connection.sock
            assert sock is not None
            sock.settimeout(self.timeout.read)

            # The read timeout bounds the whole exchange, not each read from the
            # socket: once it passes, the socket is shut down, which ends a read
            # blocked on it (a server that never answers, or trickles its answer).
            def expire() -> None:
                expired.set()
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            watchdog = threading.Timer(self.timeout.read, expire)
            watchdog.daemon = True
            watchdog.start()
            connection.request(spec.method, self._prefix + spec.path, body=payload, headers=headers)
            response = connection.getresponse()
            chunks: List[bytes] = []
            size = 0
            # read1: at most one read from the socket per call. The response
            # closes its socket once the body is read in full.
            while not response.isclosed():
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise http.client.HTTPException("answer too large")
                chunks.append(chunk)
            if expired.is_set():
                raise socket.timeout("read timeout")
            if response.length:
                # read1 reports a body cut short (fewer bytes than Content-Length) as its end.
                raise http.client.IncompleteRead(b"".join(chunks), response.length)
            return _Answer(
                status=response.status,
                headers={name.lower(): value for name, value in response.getheaders()},
                raw=b"".join(chunks),
            )
        finally:
            if watchdog is not None:
                watchdog.cancel()
            connection.close()

    def _attempt(self, spec: CallSpec, number: int) -> Union[_Answer, SmsError]:
        expired = threading.Event()
        try:
            return self._exchange(spec, expired)
        except (OSError, http.client.HTTPException) as cause:
            # socket.timeout: the connect timeout, or one read waited the whole read timeout.
            if expired.is_set() or isinstance(cause, (socket.timeout, TimeoutError)):
                error: SmsError = SmsTimeoutError(
                    TIMEOUT,
                    f"No answer from {spec.method} {spec.path} within the timeout "
                    f"(connect {self.timeout.connect:g} s, read {self.timeout.read:g} s).",
                    attempts=number,
                )
            else:
                error = SmsNetworkError(
                    NETWORK_ERROR, f"{spec.method} {spec.path} failed: {type(cause).__name__}: {cause}", attempts=number
                )
            error.__cause__ = cause
            return error

    def _delay_after(self, error: SmsError, number: int) -> float:
        """The wait before retry ``number + 1``: Retry-After when the answer named one, else backoff with jitter."""
        if error.retry_after is not None:
            return float(error.retry_after)
        backoff = min(self.retry.max_delay, self.retry.base_delay * 2 ** (number - 1))
        # "Equal jitter": at least half the backoff, so retries never bunch at zero.
        return round(backoff / 2 + self._random() * (backoff / 2), 3)

    def call(self, spec: CallSpec) -> CallResult:
        number = 0
        while True:
            number += 1
            outcome = self._attempt(spec, number)
            if isinstance(outcome, SmsError):
                error = outcome
            elif outcome.status in spec.ok:
                try:
                    body = None if outcome.status == 304 else json.loads(outcome.raw.decode("utf-8"))
                except ValueError as cause:
                    raise SmsApiError(
                        UNEXPECTED_RESPONSE,
                        f"Unexpected HTTP {outcome.status} answer (not JSON).",
                        status=outcome.status,
                        request_id=outcome.headers.get("x-request-id"),
                        attempts=number,
                    ) from cause
                return CallResult(
                    status=outcome.status,
                    request_id=outcome.headers.get("x-request-id"),
                    rate_limit=_rate_limit(outcome.headers),
                    headers=outcome.headers,
                    body=body,
                    attempts=number,
                )
            else:
                error = _api_error(outcome, number)
            delay = self._delay_after(error, number)
            if number >= self._attempts or not retryable(error, spec.safety) or delay > self.retry.max_delay:
                raise error
            if self.retry.on_retry is not None:
                self.retry.on_retry(
                    RetryEvent(attempt=number, delay=delay, error=error, method=spec.method, path=spec.path)
                )
            self._sleep(delay)
