<?php

declare(strict_types=1);

namespace SmsApi;

/** A verification (the service's one-time code, sent and checked); never the code itself. */
final class Verification
{
    public function __construct(
        /** `vrf_…` */
        public readonly string $id,
        /** The recipient, masked like a message's. */
        public readonly string $to,
        /** `pending`, `approved`, `expired`, `canceled`, `max_attempts_reached` or `send_failed`. */
        public readonly string $status,
        public readonly string $template,
        public readonly string $locale,
        public readonly int $attemptsRemaining,
        public readonly string $expiresAt,
        /** The `msg_…` that carried the code. */
        public readonly string $messageId,
        public readonly string $createdAt,
        public readonly string $updatedAt,
    ) {
    }

    /** @param array<mixed> $object the decoded JSON of a Verification */
    public static function fromArray(array $object): self
    {
        if (($object['object'] ?? null) !== 'verification') {
            throw new \UnexpectedValueException('not a verification');
        }
        return new self(
            id: Fields::string($object, 'id'),
            to: Fields::string($object, 'to'),
            status: Fields::string($object, 'status'),
            template: Fields::string($object, 'template'),
            locale: Fields::string($object, 'locale'),
            attemptsRemaining: Fields::int($object, 'attempts_remaining'),
            expiresAt: Fields::string($object, 'expires_at'),
            messageId: Fields::string($object, 'message_id'),
            createdAt: Fields::string($object, 'created_at'),
            updatedAt: Fields::string($object, 'updated_at'),
        );
    }
}
