<?php

declare(strict_types=1);

namespace SmsApi;

/** What sendMessage() returns. */
final class SendMessageResult
{
    public function __construct(
        public readonly Message $message,
        /**
         * true: `200` with `Idempotent-Replayed: true`, the stored answer to an
         * earlier request with the same Idempotency-Key (nothing was sent
         * again; also what a retry after a lost answer gets); false: `201`, a new message.
         */
        public readonly bool $replayed,
        /** The Idempotency-Key the message was sent with (generated when none was given): store it to retry later. */
        public readonly string $idempotencyKey,
        /** The HTTP status of the answer (201 or 200). */
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        /** Requests made for this call (1 unless it was retried). */
        public readonly int $attempts,
    ) {
    }
}
