"""The client's errors: one base class with what every failure can tell
(code, HTTP status, request id, Retry-After, RateLimit-*, attempts made), and
one subclass per kind of failure, so that callers can branch on the class or
on ``code``. The same hierarchy as the TypeScript client's (``@sms/api-client``).
"""

from __future__ import annotations

from typing import Optional

from .resources import RateLimit

# The codes of failures that are not the API's answers.
UNEXPECTED_RESPONSE = "unexpected_response"
TIMEOUT = "timeout"
NETWORK_ERROR = "network_error"


class SmsError(Exception):
    """Any failure of a call: an error answer of the API, a timeout, or a network failure.

    ``code`` is the API's stable code (``invalid_recipient``, ...), or
    ``unexpected_response``, ``timeout`` or ``network_error``. ``status`` is the
    HTTP status of the last answer (None when none came). ``request_id`` is the
    ``X-Request-Id`` of the last answer: quote it when asking for help.
    ``retry_after`` is the last answer's ``Retry-After`` in seconds;
    ``rate_limit`` its ``RateLimit-*`` headers; ``attempts`` how many requests
    the call made before it gave up (1 when it was not retried).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[int] = None,
        rate_limit: Optional[RateLimit] = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.request_id = request_id
        self.retry_after = retry_after
        self.rate_limit = rate_limit
        self.attempts = attempts

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, "
            f"request_id={self.request_id!r}, attempts={self.attempts!r})"
        )


class SmsApiError(SmsError):
    """An error answer of the API (``{"error":{"code","message","request_id"}}``),
    or an answer that is not the API's (``code == "unexpected_response"``, e.g. a
    proxy's HTML page). ``status`` is always set."""

    status: int

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int,
        request_id: Optional[str] = None,
        retry_after: Optional[int] = None,
        rate_limit: Optional[RateLimit] = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(
            code,
            message,
            status=status,
            request_id=request_id,
            retry_after=retry_after,
            rate_limit=rate_limit,
            attempts=attempts,
        )


class SmsTimeoutError(SmsError):
    """No answer within the timeout on the last attempt (``code == "timeout"``,
    ``status is None``); also raised by ``wait_for_final_status`` when its
    ``max_wait`` passes."""


class SmsNetworkError(SmsError):
    """The request could not be made or its answer not read (DNS, refused,
    reset, cut off): ``code == "network_error"``, ``status is None``; the
    ``OSError`` / ``http.client`` error is the ``__cause__``."""
