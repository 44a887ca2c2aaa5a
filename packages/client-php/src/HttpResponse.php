<?php

declare(strict_types=1);

namespace SmsApi;

/** @internal One whole HTTP answer. */
final class HttpResponse
{
    /** @param array<string, list<string>> $headers lower-case names */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    /** The first value of a header, or null. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }
}
