<?php

declare(strict_types=1);

namespace SmsApi;

/** One retry about to happen, as the client's `onRetry` hears it. */
final class RetryEvent
{
    public function __construct(
        /** The attempt that failed (1 for the first request). */
        public readonly int $attempt,
        /** The wait before the next attempt, in ms. */
        public readonly int $delayMs,
        /** Why: the API's error, a timeout, or a network failure. */
        public readonly SmsException $error,
        public readonly string $method,
        public readonly string $path,
    ) {
    }
}
