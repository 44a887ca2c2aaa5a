<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * A client for the Georgia transactional SMS API's public REST routes, with
 * the same semantics as the TypeScript client (packages/api-client):
 *
 *   $sms = new SmsApi\Client(baseUrl: 'https://sms.example.ge', apiKey: getenv('SMS_API_KEY'));
 *   $sent = $sms->sendMessage(['to' => '+995555123456', 'template' => 'verification_code',
 *                              'variables' => ['code' => '482913']]);
 *   $final = $sms->waitForFinalStatus($sent->message->id);
 *
 * Every call has a timeout and is retried where the API says a retry is safe
 * (Transport); a send keeps one Idempotency-Key across its retries.
 */
final class Client
{
    public const DEFAULT_TIMEOUT_SECONDS = 30.0;
    public const DEFAULT_ATTEMPTS = 3;
    public const DEFAULT_BASE_DELAY_MS = 500;
    public const DEFAULT_MAX_DELAY_MS = 30_000;
    /** Spec 6: read first after about 2 s, double the wait, cap it at 30 s. */
    public const POLL_INITIAL_DELAY_MS = 2_000;
    public const POLL_MAX_DELAY_MS = 30_000;
    /** The longest hold waitForFinalStatus() asks the server for (`Prefer: wait`, an extension), in seconds. */
    public const WAIT_SECONDS = 25;

    private readonly Transport $transport;
    /** Seconds of `Prefer: wait`: 5 s inside the request timeout, at most WAIT_SECONDS (0: none). */
    private readonly int $holdSeconds;
    /** @var \Closure(int): void */
    private readonly \Closure $sleep;
    /** @var array<string, mixed> */
    private readonly array $options;

    /**
     * @param string $baseUrl e.g. `https://sms.example.ge` (no trailing path needed)
     * @param string|null $apiKey `sk_test_…` or `sk_live_…`; null for createTestKey() alone
     * @param float $timeoutSeconds per request (each attempt), connecting and the whole answer included
     * @param int $attempts requests per call at most, the first included (1 turns retries off)
     * @param int $baseDelayMs the first backoff, doubled after each attempt (when the answer names no Retry-After)
     * @param int $maxDelayMs the longest wait between attempts; an answer whose Retry-After asks for longer is thrown at once
     * @param (callable(int): void)|null $sleeper how the client waits, in ms (retries and polling); usleep by default
     * @param (callable(RetryEvent): void)|null $onRetry hears each retry before its wait
     * @param (callable(): float)|null $random a number in [0, 1) for the jitter
     */
    public function __construct(
        string $baseUrl,
        ?string $apiKey = null,
        float $timeoutSeconds = self::DEFAULT_TIMEOUT_SECONDS,
        int $attempts = self::DEFAULT_ATTEMPTS,
        int $baseDelayMs = self::DEFAULT_BASE_DELAY_MS,
        int $maxDelayMs = self::DEFAULT_MAX_DELAY_MS,
        ?callable $sleeper = null,
        ?callable $onRetry = null,
        ?callable $random = null,
    ) {
        if ($timeoutSeconds <= 0) {
            throw new \InvalidArgumentException('timeoutSeconds must be positive');
        }
        $this->options = get_defined_vars();
        $this->holdSeconds = max(0, min(self::WAIT_SECONDS, (int) floor($timeoutSeconds) - 5));
        $this->sleep = $sleeper !== null
            ? \Closure::fromCallable($sleeper)
            : static function (int $ms): void {
                if ($ms > 0) {
                    usleep($ms * 1000);
                }
            };
        $this->transport = new Transport(
            baseUrl: rtrim($baseUrl, '/'),
            apiKey: $apiKey,
            timeoutSeconds: $timeoutSeconds,
            attempts: max(1, $attempts),
            baseDelayMs: max(0, $baseDelayMs),
            maxDelayMs: max(0, $maxDelayMs),
            sleep: $this->sleep,
            random: $random !== null
                ? \Closure::fromCallable($random)
                : static fn (): float => mt_rand() / (mt_getrandmax() + 1),
            onRetry: $onRetry !== null ? \Closure::fromCallable($onRetry) : null,
        );
    }

    /** The same client with another API key (e.g. the one createTestKey() returned). */
    public function withApiKey(string $apiKey): self
    {
        return new self(...['apiKey' => $apiKey] + $this->options);
    }

    /**
     * `POST /v1/test-keys`: a new test key for a new project; no API key
     * needed. Retried only on answers that say nothing was done (429
     * rate_limited, 503), never after a timeout (it could make two keys);
     * `429 daily_limit_reached` is thrown at once.
     */
    public function createTestKey(): CreateTestKeyResult
    {
        $answer = $this->transport->call('POST', '/v1/test-keys', [], null, false, [201], false);
        return new CreateTestKeyResult(
            self::value($answer, TestKey::fromArray(...)),
            $answer->status,
            $answer->requestId,
            $answer->rateLimit,
            $answer->attempts,
        );
    }

    /**
     * `POST /v1/messages`: one templated SMS.
     *
     * @param array{to: string, template: string, variables: array<string, string>, locale?: string} $request
     * @param string|null $idempotencyKey 1–200 characters, new for each logical message; a UUID v4 when null.
     *        Every retry of this call reuses it. A `201` is never retried, whatever its status
     *        (`unknown` may have been sent: read it later instead).
     */
    public function sendMessage(array $request, ?string $idempotencyKey = null): SendMessageResult
    {
        $idempotencyKey ??= self::uuidV4();
        if (array_key_exists('variables', $request) && is_array($request['variables'])) {
            // An empty PHP array would be encoded as [], not {}.
            $request['variables'] = (object) $request['variables'];
        }
        $answer = $this->transport->call(
            'POST',
            '/v1/messages',
            ['Idempotency-Key' => $idempotencyKey],
            $request,
            true,
            [200, 201],
            true,
        );
        return new SendMessageResult(
            self::value($answer, Message::fromArray(...)),
            self::replayed($answer),
            $idempotencyKey,
            $answer->status,
            $answer->requestId,
            $answer->rateLimit,
            $answer->attempts,
        );
    }

    /** `GET /v1/messages/{id}`: the message's current state. */
    public function getMessage(string $messageId): Message
    {
        $answer = $this->transport->call('GET', '/v1/messages/' . rawurlencode($messageId), [], null, true, [200], true);
        return self::value($answer, Message::fromArray(...));
    }

    /**
     * Returns the message once its status is final (delivered, undeliverable,
     * failed or unknown). The first read is after about 2 s (spec 6); after it,
     * where the server offers it (an extension: ETag, If-None-Match with
     * `Prefer: wait`), each read waits at the server until the status changes
     * and the next follows at once. Where the server does not say
     * Preference-Applied it polls as spec 6 recommends (the wait doubling,
     * capped at 30 s).
     *
     * @param (callable(Message): void)|null $onUpdate hears every state read, final or not
     * @param int|null $maxWaitMs give up (SmsTimeoutException) rather than wait longer than this in all; null: no bound
     */
    public function waitForFinalStatus(
        string $messageId,
        int $initialDelayMs = self::POLL_INITIAL_DELAY_MS,
        int $maxDelayMs = self::POLL_MAX_DELAY_MS,
        ?callable $onUpdate = null,
        ?int $maxWaitMs = null,
    ): Message {
        $waited = 0;
        $reads = 0;
        $etag = null;
        $askedToHold = false;
        $delays = self::pollingDelays($initialDelayMs, $maxDelayMs);
        $delay = $delays->current();
        for (;;) {
            if ($delay !== null) {
                if ($maxWaitMs !== null && $waited + $delay > $maxWaitMs) {
                    throw self::notFinal($messageId, $reads, $waited);
                }
                ($this->sleep)($delay);
                $waited += $delay;
            }
            if ($etag !== null) {
                $askedToHold = true;
            }
            $startedAt = hrtime(true);
            [$message, $etagRead, $held] = $this->readMessage($messageId, $etag);
            $reads++;
            if ($message !== null) {
                if ($onUpdate !== null) {
                    $onUpdate($message);
                }
                if ($message->isFinal()) {
                    return $message;
                }
            }
            $etag = $etagRead ?? $etag;
            // Held (or the server's first ETag, not yet asked to hold): ask again at once. Else spec 6's schedule.
            if ($etag !== null && ($held || !$askedToHold)) {
                $waited += intdiv(hrtime(true) - $startedAt, 1_000_000);
                if ($maxWaitMs !== null && $waited >= $maxWaitMs) {
                    throw self::notFinal($messageId, $reads, $waited);
                }
                $delay = null;
            } else {
                $delays->next();
                $delay = $delays->current();
            }
        }
    }

    /**
     * A read of the message; with `$etag`, a conditional one held at the server.
     *
     * @return array{0: Message|null, 1: string|null, 2: bool} the message (null: not changed), its ETag, whether it was held
     */
    private function readMessage(string $messageId, ?string $etag): array
    {
        $headers = [];
        if ($etag !== null) {
            $headers['If-None-Match'] = $etag;
            if ($this->holdSeconds > 0) {
                $headers['Prefer'] = 'wait=' . $this->holdSeconds;
            }
        }
        $answer = $this->transport->call(
            'GET',
            '/v1/messages/' . rawurlencode($messageId),
            $headers,
            null,
            true,
            $etag === null ? [200] : [200, 304],
            true,
        );
        $message = $answer->status === 304 ? null : self::value($answer, Message::fromArray(...));
        return [$message, $answer->response->header('ETag'), $answer->response->header('Preference-Applied') !== null];
    }

    private static function notFinal(string $messageId, int $reads, int $waited): SmsTimeoutException
    {
        return new SmsTimeoutException(
            'timeout',
            "Message {$messageId} not final after {$reads} reads over {$waited} ms.",
            null,
            null,
            null,
            null,
            $reads,
        );
    }

    /**
     * The waits between reads waitForFinalStatus() makes: 2, 4, 8, 16, 30, 30, … s by default.
     *
     * @return \Generator<int, int>
     */
    public static function pollingDelays(
        int $initialDelayMs = self::POLL_INITIAL_DELAY_MS,
        int $maxDelayMs = self::POLL_MAX_DELAY_MS,
    ): \Generator {
        $delay = max(0, min($initialDelayMs, $maxDelayMs));
        for (;;) {
            yield $delay;
            $delay = min(max(1, $delay) * 2, $maxDelayMs);
        }
    }

    /**
     * `POST /v1/verifications`: the service draws a code and sends it. A
     * retry with the same Idempotency-Key replays the first answer (no second
     * SMS, no new code).
     *
     * @param array{to: string, template?: string, locale?: string, code_length?: int} $request
     */
    public function startVerification(array $request, ?string $idempotencyKey = null): StartVerificationResult
    {
        $idempotencyKey ??= self::uuidV4();
        $answer = $this->transport->call(
            'POST',
            '/v1/verifications',
            ['Idempotency-Key' => $idempotencyKey],
            $request,
            true,
            [200, 201],
            true,
        );
        return new StartVerificationResult(
            self::value($answer, Verification::fromArray(...)),
            self::replayed($answer),
            $idempotencyKey,
            $answer->status,
            $answer->requestId,
            $answer->rateLimit,
            $answer->attempts,
        );
    }

    /**
     * `POST /v1/verifications/{id}/check`: what the user typed. Let the user
     * in only when the result isApproved(). Retried only on answers that say
     * nothing was done (a wrong code whose answer was lost would count twice).
     */
    public function checkVerification(string $verificationId, string $code): CheckVerificationResult
    {
        try {
            $answer = $this->transport->call(
                'POST',
                '/v1/verifications/' . rawurlencode($verificationId) . '/check',
                [],
                ['code' => $code],
                true,
                [200],
                false,
            );
        } catch (SmsApiException $error) {
            if ($error->errorCode === 'verification_not_pending') {
                return new CheckVerificationResult(CheckVerificationResult::VERIFICATION_NOT_PENDING, null, $error->getMessage(), $error->requestId);
            }
            throw $error;
        }
        $verification = self::value($answer, Verification::fromArray(...));
        $outcome = match ($verification->status) {
            'approved' => CheckVerificationResult::APPROVED,
            'max_attempts_reached' => CheckVerificationResult::MAX_ATTEMPTS_REACHED,
            'pending' => CheckVerificationResult::PENDING,
            default => throw new SmsApiException(
                'unexpected_response',
                "Unexpected verification status {$verification->status} in a 200 check answer.",
                $answer->status,
                $answer->requestId,
                null,
                $answer->rateLimit,
                $answer->attempts,
            ),
        };
        return new CheckVerificationResult($outcome, $verification, null, $answer->requestId);
    }

    /** `GET /v1/verifications/{id}`: the current state. */
    public function getVerification(string $verificationId): Verification
    {
        $answer = $this->transport->call('GET', '/v1/verifications/' . rawurlencode($verificationId), [], null, true, [200], true);
        return self::value($answer, Verification::fromArray(...));
    }

    /**
     * `GET /healthz`.
     *
     * @return array<mixed>
     */
    public function liveness(): array
    {
        return $this->transport->call('GET', '/healthz', [], null, false, [200], true)->body;
    }

    /**
     * `GET /readyz`: `not_ready` (503) is an answer, not an error.
     *
     * @return array<mixed>
     */
    public function readiness(): array
    {
        return $this->transport->call('GET', '/readyz', [], null, false, [200, 503], true)->body;
    }

    /** A random UUID v4 (RFC 9562), the Idempotency-Key a send gets when none is given. */
    public static function uuidV4(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
        $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
    }

    private static function replayed(Answer $answer): bool
    {
        return $answer->status === 200 && $answer->response->header('Idempotent-Replayed') === 'true';
    }

    /**
     * @template T
     * @param callable(array<mixed>): T $make
     * @return T
     */
    private static function value(Answer $answer, callable $make): mixed
    {
        try {
            return $make($answer->body);
        } catch (\UnexpectedValueException $cause) {
            throw new SmsApiException(
                'unexpected_response',
                "Unexpected HTTP {$answer->status} answer ({$cause->getMessage()}).",
                $answer->status,
                $answer->requestId,
                null,
                $answer->rateLimit,
                $answer->attempts,
                $cause,
            );
        }
    }
}
