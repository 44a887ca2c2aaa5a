<?php

declare(strict_types=1);

namespace SmsApi;

/** The `RateLimit-*` headers of an answer: the limit nearest to exhaustion. */
final class RateLimit
{
    public function __construct(
        public readonly int $limit,
        public readonly int $remaining,
        /** Seconds until the window resets. */
        public readonly int $resetSeconds,
    ) {
    }
}
