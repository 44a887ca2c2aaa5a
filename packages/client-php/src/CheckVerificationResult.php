<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * A check's outcome. Let the user in only on `approved` (isApproved()); a
 * thrown exception, a timeout included, is not an approval.
 *
 * The outcomes are the REST words: the `status` of the check's `200`
 * (`approved`, `pending`, `max_attempts_reached`) or the code of its `409`
 * (`verification_not_pending`); the same words as the TypeScript and Python
 * clients and MCP's `check_verification` (docs/api-behaviour.md, "A check's outcome").
 */
final class CheckVerificationResult
{
    /** `200`, `approved`: the right code (a verification approves once; a later check is verification_not_pending). */
    public const APPROVED = 'approved';
    /** `200`, `pending`: a wrong code; `verification->attemptsRemaining` is one fewer. */
    public const PENDING = 'pending';
    /** `200`, `max_attempts_reached`: the last wrong code; start a new verification. */
    public const MAX_ATTEMPTS_REACHED = 'max_attempts_reached';
    /**
     * `409 verification_not_pending`: already approved, expired, canceled, out of attempts or its SMS failed, the
     * same answer whatever the code; `message` names the status. Start a new verification.
     */
    public const VERIFICATION_NOT_PENDING = 'verification_not_pending';
    /** Every outcome, in that order. */
    public const OUTCOMES = [self::APPROVED, self::PENDING, self::MAX_ATTEMPTS_REACHED, self::VERIFICATION_NOT_PENDING];

    public function __construct(
        /** One of the constants above. */
        public readonly string $outcome,
        /** The verification after the check; null for verification_not_pending. */
        public readonly ?Verification $verification,
        /** The API's sentence for verification_not_pending; null otherwise. */
        public readonly ?string $message,
        public readonly ?string $requestId,
    ) {
    }

    public function isApproved(): bool
    {
        return $this->outcome === self::APPROVED;
    }
}
