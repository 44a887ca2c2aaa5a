"""A Python client for the Georgia transactional SMS API (``sms-api-ge``).

Standard library only. See the package README for usage, and
``sms_api.Client`` for the calls.
"""

from ._version import __version__
from .client import DEFAULT_POLLING, Client, Polling, polling_delays
from .errors import SmsApiError, SmsError, SmsNetworkError, SmsTimeoutError
from .resources import (
    CHECK_OUTCOMES,
    FINAL_STATUSES,
    CheckOutcome,
    CheckVerificationResult,
    CreateTestKeyResult,
    Message,
    MessageError,
    RateLimit,
    SendMessageResult,
    StartVerificationResult,
    TestKey,
    Verification,
    is_final_status,
)
from .transport import DEFAULT_RETRY, DEFAULT_TIMEOUT, RetryEvent, RetryPolicy, Timeout

__all__ = [
    "__version__",
    "Client",
    "Polling",
    "DEFAULT_POLLING",
    "polling_delays",
    "Timeout",
    "DEFAULT_TIMEOUT",
    "RetryPolicy",
    "RetryEvent",
    "DEFAULT_RETRY",
    "SmsError",
    "SmsApiError",
    "SmsTimeoutError",
    "SmsNetworkError",
    "Message",
    "MessageError",
    "TestKey",
    "Verification",
    "RateLimit",
    "CreateTestKeyResult",
    "SendMessageResult",
    "StartVerificationResult",
    "CheckVerificationResult",
    "CheckOutcome",
    "CHECK_OUTCOMES",
    "FINAL_STATUSES",
    "is_final_status",
]
