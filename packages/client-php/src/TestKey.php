<?php

declare(strict_types=1);

namespace SmsApi;

/** A new test key for a new project (`POST /v1/test-keys`): `apiKey` is shown only once. */
final class TestKey
{
    public function __construct(
        /** `sk_test_…` */
        public readonly string $apiKey,
        /** `prj_…` */
        public readonly string $projectId,
        /** Always `test`. */
        public readonly string $mode,
        /** Where a human claims the project (keep it secret like the key). */
        public readonly string $claimUrl,
        public readonly string $expiresAt,
        /** What a caller with no human attached does next. */
        public readonly string $nextSteps,
    ) {
    }

    /** @param array<mixed> $object */
    public static function fromArray(array $object): self
    {
        return new self(
            apiKey: Fields::string($object, 'api_key'),
            projectId: Fields::string($object, 'project_id'),
            mode: Fields::string($object, 'mode'),
            claimUrl: Fields::string($object, 'claim_url'),
            expiresAt: Fields::string($object, 'expires_at'),
            nextSteps: Fields::string($object, 'next_steps'),
        );
    }
}
