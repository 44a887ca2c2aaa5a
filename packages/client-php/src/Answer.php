<?php

declare(strict_types=1);

namespace SmsApi;

/** @internal A successful answer of one call: its decoded JSON object and what every answer carries. */
final class Answer
{
    /**
     * @param array<mixed> $body
     */
    public function __construct(
        public readonly int $status,
        public readonly array $body,
        public readonly HttpResponse $response,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        public readonly int $attempts,
    ) {
    }
}
