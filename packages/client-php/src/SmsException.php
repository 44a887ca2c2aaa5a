<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * Any failure of a call: an error answer of the API (SmsApiException), a
 * timeout (SmsTimeoutException) or a network failure (SmsNetworkException).
 *
 * `$errorCode` is the API's stable code (`invalid_recipient`, `rate_limited`,
 * ...) or one of the client's own: `unexpected_response`, `timeout`,
 * `network_error`. Like PDOException, getCode() returns the same string.
 */
class SmsException extends \RuntimeException
{
    public function __construct(
        /** The API's stable code, or `unexpected_response`, `timeout`, `network_error`. */
        public readonly string $errorCode,
        string $message,
        /** The HTTP status of the last answer; null when none came (timeout, network). */
        public readonly ?int $status,
        /** The request id of the last answer (`X-Request-Id`): quote it when asking for help. */
        public readonly ?string $requestId,
        /** `Retry-After` of the last answer, in seconds. */
        public readonly ?int $retryAfter,
        /** The `RateLimit-*` headers of the last answer, when it had them. */
        public readonly ?RateLimit $rateLimit,
        /** How many requests the call made before it gave up (1 when it was not retried). */
        public readonly int $attempts,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
        // Exception::$code is untyped: the string code, as PDOException does with SQLSTATE.
        $this->code = $errorCode;
    }
}
