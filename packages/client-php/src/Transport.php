<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * @internal The machinery every call goes through, as in the TypeScript
 * client's transport.ts: the request timeout, retries with exponential
 * backoff and jitter (honouring Retry-After) where the API says a retry is
 * safe, and the typed exceptions. A method of the Client only says what it
 * sends, which statuses are answers, and how safe a retry of it is.
 */
final class Transport
{
    /**
     * The API's answers that say nothing was done, so a retry (with the same
     * Idempotency-Key) is safe for any call.
     */
    public const NOTHING_DONE = ['rate_limited', 'provider_unavailable', 'too_many_connections', 'request_timeout'];

    /**
     * @param \Closure(int): void $sleep waits that many ms
     * @param \Closure(): float $random a number in [0, 1) for the jitter
     * @param (\Closure(RetryEvent): void)|null $onRetry
     */
    public function __construct(
        private readonly string $baseUrl,
        private readonly ?string $apiKey,
        private readonly float $timeoutSeconds,
        private readonly int $attempts,
        private readonly int $baseDelayMs,
        private readonly int $maxDelayMs,
        private readonly \Closure $sleep,
        private readonly \Closure $random,
        private readonly ?\Closure $onRetry,
    ) {
    }

    /**
     * One call, retried where safe.
     *
     * `$idempotent`: reads, and sends with an Idempotency-Key (a retry
     * replays or sends once), so timeouts, network failures and 500
     * internal_error are retried too; otherwise (a new test key, a code
     * check) only the answers that say nothing was done.
     *
     * @param array<string, string> $headers
     * @param list<int> $ok statuses that are answers, not errors
     * @throws SmsException
     */
    public function call(
        string $method,
        string $path,
        array $headers,
        mixed $body,
        bool $auth,
        array $ok,
        bool $idempotent,
    ): Answer {
        $headers = ['Accept' => 'application/json', 'User-Agent' => 'sms-api-php/0.1.0 PHP/' . PHP_VERSION] + $headers;
        if ($auth && $this->apiKey !== null && $this->apiKey !== '') {
            $headers['Authorization'] = 'Bearer ' . $this->apiKey;
        }
        $payload = null;
        if ($body !== null) {
            $headers['Content-Type'] = 'application/json';
            $payload = json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        }
        for ($number = 1; ; $number++) {
            try {
                $response = Http::request($method, $this->baseUrl . $path, $headers, $payload, $this->timeoutSeconds);
                if (in_array($response->status, $ok, true)) {
                    return $this->answer($response, $number);
                }
                $error = self::apiError($response, $number);
            } catch (HttpFailure $failure) {
                $error = $failure->timedOut
                    ? new SmsTimeoutException('timeout', sprintf('No whole answer from %s %s within %s s.', $method, $path, $this->timeoutSeconds), null, null, null, null, $number, $failure)
                    : new SmsNetworkException('network_error', "{$method} {$path} failed: {$failure->getMessage()}", null, null, null, null, $number, $failure);
            }
            $delayMs = $this->delayAfter($error, $number);
            if ($number >= $this->attempts || !self::retryable($error, $idempotent) || $delayMs > $this->maxDelayMs) {
                throw $error;
            }
            if ($this->onRetry !== null) {
                ($this->onRetry)(new RetryEvent($number, $delayMs, $error, $method, $path));
            }
            ($this->sleep)($delayMs);
        }
    }

    /**
     * The statuses of a gateway in front of the service (a load balancer, nginx, HAProxy) that could not get or
     * pass on its answer: its own page, not the API's envelope (`unexpected_response`). The request may or may
     * not have reached the service, so only an idempotent call is retried (a send keeps its Idempotency-Key).
     */
    public const GATEWAY_STATUSES = [502, 503, 504];

    /**
     * Whether a failure may be retried: never a 402, a daily_limit_reached, a 409 (`idempotency_key_reused`: the
     * key was used for another request; `verification_not_pending`: the verification has ended) or any other 4xx;
     * a 500 internal_error, a gateway's 502/503/504 page, a timeout or a network failure only when idempotent.
     */
    public static function retryable(SmsException $error, bool $idempotent): bool
    {
        if ($error instanceof SmsTimeoutException || $error instanceof SmsNetworkException) {
            return $idempotent;
        }
        if (in_array($error->errorCode, self::NOTHING_DONE, true)) {
            return true;
        }
        if ($error->errorCode === 'unexpected_response' && in_array($error->status, self::GATEWAY_STATUSES, true)) {
            return $idempotent;
        }
        return $error->errorCode === 'internal_error' && $idempotent;
    }

    /** The wait before retry `$number + 1`: Retry-After when the answer named one, else backoff with jitter. */
    private function delayAfter(SmsException $error, int $number): int
    {
        if ($error->retryAfter !== null) {
            return $error->retryAfter * 1000;
        }
        $backoff = min($this->maxDelayMs, $this->baseDelayMs * 2 ** ($number - 1));
        // "Equal jitter": at least half the backoff, so retries never bunch at zero.
        return (int) round($backoff / 2 + ($this->random)() * ($backoff / 2));
    }

    private function answer(HttpResponse $response, int $number): Answer
    {
        // 304 Not Modified has no body.
        $body = $response->status === 304 ? [] : self::decode($response->body);
        if ($body === null) {
            throw new SmsApiException(
                'unexpected_response',
                "Unexpected HTTP {$response->status} answer (not a JSON object).",
                $response->status,
                $response->header('X-Request-Id'),
                null,
                null,
                $number,
            );
        }
        return new Answer($response->status, $body, $response, $response->header('X-Request-Id'), self::rateLimit($response), $number);
    }

    /** @return array<mixed>|null */
    private static function decode(string $text): ?array
    {
        try {
            $value = json_decode($text, true, 64, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            return null;
        }
        return is_array($value) && !array_is_list($value) ? $value : null;
    }

    private static function integerHeader(HttpResponse $response, string $name): ?int
    {
        $value = $response->header($name);
        return $value !== null && preg_match('/^\d+$/', $value) === 1 ? (int) $value : null;
    }

    private static function rateLimit(HttpResponse $response): ?RateLimit
    {
        $limit = self::integerHeader($response, 'RateLimit-Limit');
        $remaining = self::integerHeader($response, 'RateLimit-Remaining');
        $reset = self::integerHeader($response, 'RateLimit-Reset');
        return $limit !== null && $remaining !== null && $reset !== null ? new RateLimit($limit, $remaining, $reset) : null;
    }

    /** The API's error envelope as an exception; `unexpected_response` when the answer is not the envelope. */
    private static function apiError(HttpResponse $response, int $number): SmsApiException
    {
        $error = self::decode($response->body)['error'] ?? null;
        $known = is_array($error) && is_string($error['code'] ?? null) && is_string($error['message'] ?? null);
        $requestId = is_array($error) && is_string($error['request_id'] ?? null)
            ? $error['request_id']
            : $response->header('X-Request-Id');
        return new SmsApiException(
            $known ? $error['code'] : 'unexpected_response',
            $known ? $error['message'] : "Unexpected HTTP {$response->status} answer (not the API's error envelope).",
            $response->status,
            $requestId,
            self::integerHeader($response, 'Retry-After'),
            self::rateLimit($response),
            $number,
        );
    }
}
