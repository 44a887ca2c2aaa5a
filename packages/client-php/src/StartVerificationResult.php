<?php

declare(strict_types=1);

namespace SmsApi;

/** What startVerification() returns. */
final class StartVerificationResult
{
    public function __construct(
        public readonly Verification $verification,
        /** true: `200`, the first answer to this Idempotency-Key again (no second SMS, no new code). */
        public readonly bool $replayed,
        /** The Idempotency-Key the verification was started with (generated when none was given). */
        public readonly string $idempotencyKey,
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        public readonly int $attempts,
    ) {
    }
}
