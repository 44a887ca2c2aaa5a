<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * A check's outcome. Let the user in only on `approved` (isApproved()); a
 * thrown exception, a timeout included, is not an approval.
 */
final class CheckVerificationResult
{
    /** `200 approved`: the right code (a verification approves once; a later check is not_pending). */
    public const APPROVED = 'approved';
    /** `200 pending`: a wrong code; `verification->attemptsRemaining` is one fewer. */
    public const WRONG_CODE = 'wrong_code';
    /** `200 max_attempts_reached`: the last wrong code; start a new verification. */
    public const MAX_ATTEMPTS_REACHED = 'max_attempts_reached';
    /** `409 verification_not_pending`: expired, canceled, out of attempts or its SMS failed; `message` names the status. */
    public const NOT_PENDING = 'not_pending';

    public function __construct(
        /** One of the constants above. */
        public readonly string $outcome,
        /** The verification after the check; null for not_pending. */
        public readonly ?Verification $verification,
        /** The API's sentence for not_pending; null otherwise. */
        public readonly ?string $message,
        public readonly ?string $requestId,
    ) {
    }

    public function isApproved(): bool
    {
        return $this->outcome === self::APPROVED;
    }
}
