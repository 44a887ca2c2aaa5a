<?php

declare(strict_types=1);

namespace SmsApi;

/** A message and its state when it was read (spec 2.1). */
final class Message
{
    /** Statuses a message never leaves. */
    public const FINAL_STATUSES = ['delivered', 'undeliverable', 'failed', 'unknown'];

    public function __construct(
        /** `msg_…` */
        public readonly string $id,
        /** The recipient, masked: `+9955••••••` and its last two digits. */
        public readonly string $to,
        /** `queued`, `submitted`, `delivered`, `undeliverable`, `failed` or `unknown`. */
        public readonly string $status,
        public readonly ?int $segments,
        public readonly ?MessageError $error,
        /** `YYYY-MM-DDTHH:MM:SSZ`, UTC. */
        public readonly string $createdAt,
        public readonly string $updatedAt,
    ) {
    }

    public function isFinal(): bool
    {
        return in_array($this->status, self::FINAL_STATUSES, true);
    }

    /** @param array<mixed> $object the decoded JSON of a Message */
    public static function fromArray(array $object): self
    {
        if (($object['object'] ?? null) !== 'message') {
            throw new \UnexpectedValueException('not a message');
        }
        $error = Fields::nullableObject($object, 'error');
        return new self(
            id: Fields::string($object, 'id'),
            to: Fields::string($object, 'to'),
            status: Fields::string($object, 'status'),
            segments: Fields::nullableInt($object, 'segments'),
            error: $error === null ? null : MessageError::fromArray($error),
            createdAt: Fields::string($object, 'created_at'),
            updatedAt: Fields::string($object, 'updated_at'),
        );
    }
}
