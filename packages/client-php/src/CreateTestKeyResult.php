<?php

declare(strict_types=1);

namespace SmsApi;

/** What createTestKey() returns. */
final class CreateTestKeyResult
{
    public function __construct(
        public readonly TestKey $testKey,
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        public readonly int $attempts,
    ) {
    }
}
