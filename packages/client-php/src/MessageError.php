<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * Why a message failed, was undeliverable, or has an unknown outcome:
 * `provider_rejected`, `sender_not_allowed`, `invalid_message` (failed),
 * `invalid_recipient` (undeliverable), `provider_unavailable` (unknown: it may
 * or may not have gone out; do not send it again automatically), `internal_error`.
 */
final class MessageError
{
    public function __construct(
        public readonly string $code,
        /** Human-readable; wording may change, the code does not. */
        public readonly string $message,
    ) {
    }

    /** @param array<mixed> $object */
    public static function fromArray(array $object): self
    {
        return new self(Fields::string($object, 'code'), Fields::string($object, 'message'));
    }
}
