<?php

// The client's unit tests against a scripted stub server on loopback
// (StubServer: `php -S` with tests/stub/router.php) and, for timeouts, a
// listener that accepts connections and never answers. Waits are recorded by
// an injected sleeper, never slept. Run: php tests/unit.php [name filter]

declare(strict_types=1);

namespace SmsApi\Tests;

use SmsApi\CheckVerificationResult;
use SmsApi\Client;
use SmsApi\Message;
use SmsApi\RetryEvent;
use SmsApi\SmsApiException;
use SmsApi\SmsNetworkException;
use SmsApi\SmsTimeoutException;

require __DIR__ . '/../autoload.php';
require __DIR__ . '/Runner.php';
require __DIR__ . '/StubServer.php';

const UUID_V4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';
const SEND = ['to' => '+995555123456', 'template' => 'verification_code', 'variables' => ['code' => '482913'], 'locale' => 'en'];

$stub = new StubServer();
register_shutdown_function(static fn () => $stub->stop());

/** @var list<int> $waits every wait the client asked for, in ms */
$waits = [];
/** @var list<RetryEvent> $retries */
$retries = [];

/** A client of the stub whose waits are recorded (and jitter fixed at its middle). */
$client = static function (array $options = []) use ($stub, &$waits, &$retries): Client {
    $waits = [];
    $retries = [];
    return new Client(...$options + [
        'baseUrl' => $stub->url,
        'apiKey' => 'sk_test_unit',
        'sleeper' => static function (int $ms) use (&$waits): void {
            $waits[] = $ms;
        },
        'onRetry' => static function (RetryEvent $event) use (&$retries): void {
            $retries[] = $event;
        },
        'random' => static fn (): float => 0.5,
    ]);
};

function answer(int $status, mixed $body, array $headers = []): array
{
    return ['status' => $status, 'headers' => ['Content-Type' => 'application/json'] + $headers, 'body' => $body];
}

function envelope(int $status, string $code, array $headers = [], string $requestId = 'req_stub'): array
{
    return answer($status, ['error' => ['code' => $code, 'message' => "The stub says {$code}.", 'request_id' => $requestId]], ['X-Request-Id' => $requestId] + $headers);
}

function message(string $status, ?array $error = null): array
{
    return [
        'id' => 'msg_01m81b5h80a4k2x9wq7zt3nd6e',
        'object' => 'message',
        'to' => "+9955\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}56",
        'status' => $status,
        'segments' => 1,
        'error' => $error,
        'created_at' => '2026-11-22T10:00:00Z',
        'updated_at' => '2026-11-22T10:00:01Z',
    ];
}

function verification(string $status, int $attemptsRemaining = 5): array
{
    return [
        'id' => 'vrf_01m81b5h80a4k2x9wq7zt3nd6e',
        'object' => 'verification',
        'to' => "+9955\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}56",
        'status' => $status,
        'template' => 'verification_code',
        'locale' => 'ka',
        'attempts_remaining' => $attemptsRemaining,
        'expires_at' => '2026-11-22T10:10:00Z',
        'message_id' => 'msg_01m81b5h80a4k2x9wq7zt3nd6e',
        'created_at' => '2026-11-22T10:00:00Z',
        'updated_at' => '2026-11-22T10:00:00Z',
    ];
}

/** The Idempotency-Key of each request the stub received. */
function keys(StubServer $stub): array
{
    return array_map(static fn (array $r): ?string => $r['headers']['idempotency-key'] ?? null, $stub->requests());
}

/**
 * A listener that accepts connections (the kernel completes them) and never
 * answers; drain() returns what each connection sent before the client gave up.
 */
final class SilentServer
{
    /** @var resource */
    private $server;
    public readonly string $url;

    public function __construct()
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($server === false) {
            throw new \RuntimeException($errstr);
        }
        $this->server = $server;
        $this->url = 'http://' . stream_socket_get_name($server, false);
    }

    /** @return list<string> the request each connection carried */
    public function drain(): array
    {
        $requests = [];
        while (($connection = @stream_socket_accept($this->server, 0.2)) !== false) {
            stream_set_timeout($connection, 1);
            $requests[] = (string) stream_get_contents($connection);
            fclose($connection);
        }
        fclose($this->server);
        return $requests;
    }
}

Runner::test('a send: the request, a fresh UUID v4 Idempotency-Key, the result and its headers', function () use ($stub, $client) {
    $stub->script([answer(201, message('submitted'), ['X-Request-Id' => 'req_1', 'RateLimit-Limit' => '100', 'RateLimit-Remaining' => '99', 'RateLimit-Reset' => '42'])]);
    $sent = $client()->sendMessage(SEND);
    assertSame('submitted', $sent->message->status);
    assertSame(false, $sent->replayed);
    assertSame(201, $sent->status);
    assertSame('req_1', $sent->requestId);
    assertSame([100, 99, 42], [$sent->rateLimit?->limit, $sent->rateLimit?->remaining, $sent->rateLimit?->resetSeconds]);
    assertSame(1, $sent->attempts);
    assertMatches(UUID_V4, $sent->idempotencyKey, 'generated key');
    [$request] = $stub->requests();
    assertSame(['POST', '/v1/messages'], [$request['method'], $request['path']]);
    assertSame('Bearer sk_test_unit', $request['headers']['authorization']);
    assertSame($sent->idempotencyKey, $request['headers']['idempotency-key']);
    assertSame('application/json', $request['headers']['content-type']);
    assertSame(SEND, json_decode($request['body'], true));
    assertSame("+9955\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}\u{2022}56", $sent->message->to);
    assertSame(null, $sent->message->error);
    // A second logical send gets a new key.
    $stub->script([answer(201, message('submitted'))]);
    $again = $client()->sendMessage(SEND);
    assertTrue($again->idempotencyKey !== $sent->idempotencyKey, 'one key per logical send');
});

Runner::test('a replay: 200 with Idempotent-Replayed, the caller\'s own key sent', function () use ($stub, $client) {
    $stub->script([answer(200, message('delivered'), ['Idempotent-Replayed' => 'true'])]);
    $sent = $client()->sendMessage(SEND, idempotencyKey: 'order-42');
    assertSame([true, 200, 'order-42'], [$sent->replayed, $sent->status, $sent->idempotencyKey]);
    assertSame(['order-42'], keys($stub));
});

Runner::test('429 rate_limited is retried after its Retry-After, with the same key', function () use ($stub, $client, &$waits, &$retries) {
    $stub->script([
        envelope(429, 'rate_limited', ['Retry-After' => '7', 'RateLimit-Limit' => '5', 'RateLimit-Remaining' => '0', 'RateLimit-Reset' => '7']),
        answer(201, message('submitted')),
    ]);
    $sent = $client()->sendMessage(SEND);
    assertSame(2, $sent->attempts);
    assertSame([7000], $waits);
    $keys = keys($stub);
    assertSame(2, count($keys));
    assertSame([$sent->idempotencyKey, $sent->idempotencyKey], $keys, 'the key kept across the retry');
    assertSame(1, count($retries));
    assertSame([1, 7000, 'rate_limited', 'POST', '/v1/messages'], [$retries[0]->attempt, $retries[0]->delayMs, $retries[0]->error->errorCode, $retries[0]->method, $retries[0]->path]);
});

Runner::test('503 provider_unavailable: retried with the same key until the attempts run out, then thrown with code, status, request id', function () use ($stub, $client, &$waits) {
    $stub->script([
        envelope(503, 'provider_unavailable', ['Retry-After' => '5'], 'req_a'),
        envelope(503, 'provider_unavailable', ['Retry-After' => '5'], 'req_b'),
        envelope(503, 'provider_unavailable', ['Retry-After' => '5'], 'req_c'),
        answer(201, message('submitted')),
    ]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->sendMessage(SEND, 'k-503'));
    assertSame(['provider_unavailable', 'provider_unavailable', 503, 'req_c', 5, 3], [$error->errorCode, $error->getCode(), $error->status, $error->requestId, $error->retryAfter, $error->attempts]);
    assertSame('The stub says provider_unavailable.', $error->getMessage());
    assertSame([5000, 5000], $waits);
    assertSame(['k-503', 'k-503', 'k-503'], keys($stub));
});

Runner::test('503 then 201: the send succeeds on its second attempt', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(503, 'provider_unavailable', ['Retry-After' => '5']), answer(201, message('submitted'))]);
    $sent = $client()->sendMessage(SEND);
    assertSame([2, 'submitted'], [$sent->attempts, $sent->message->status]);
    assertSame([$sent->idempotencyKey, $sent->idempotencyKey], keys($stub));
    assertSame([5000], $waits);
});

Runner::test('201 unknown is an answer, never retried', function () use ($stub, $client, &$waits) {
    $stub->script([
        answer(201, message('unknown', ['code' => 'provider_unavailable', 'message' => 'No definitive answer.'])),
        answer(201, message('submitted')),
    ]);
    $sent = $client()->sendMessage(SEND);
    assertSame(['unknown', 'provider_unavailable', 1, false], [$sent->message->status, $sent->message->error?->code, $sent->attempts, $sent->replayed]);
    assertTrue($sent->message->isFinal(), 'unknown is final');
    assertSame(1, count($stub->requests()));
    assertSame([], $waits);
});

Runner::test('429 daily_limit_reached is thrown at once, whatever its Retry-After', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(429, 'daily_limit_reached', ['Retry-After' => '3600']), answer(201, message('submitted'))]);
    $error = assertThrows(SmsApiException::class, fn () => $client(['maxDelayMs' => 10_000_000])->sendMessage(SEND));
    assertSame(['daily_limit_reached', 429, 1, 3600], [$error->errorCode, $error->status, $error->attempts, $error->retryAfter]);
    assertSame(1, count($stub->requests()));
    assertSame([], $waits);
    // The same for a new test key.
    $stub->script([envelope(429, 'daily_limit_reached', ['Retry-After' => '3600']), answer(201, [])]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->createTestKey());
    assertSame(['daily_limit_reached', 1], [$error->errorCode, count($stub->requests())]);
});

Runner::test('409, 402, 400 and 404 are never retried', function () use ($stub, $client, &$waits) {
    foreach ([[409, 'idempotency_key_reused'], [409, 'verification_not_pending'], [402, 'insufficient_credits'], [400, 'invalid_recipient'], [404, 'message_not_found']] as [$status, $code]) {
        $stub->script([envelope($status, $code), answer(201, message('submitted'))]);
        $error = assertThrows(SmsApiException::class, fn () => $client()->sendMessage(SEND));
        assertSame([$code, $status, 1], [$error->errorCode, $error->status, $error->attempts]);
        assertSame(1, count($stub->requests()), "{$status} {$code}: one request");
        assertSame([], $waits);
    }
});

Runner::test('500 internal_error is retried on a send (same key) and a read, not on a new test key', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(500, 'internal_error', ['Retry-After' => '1']), answer(201, message('submitted'))]);
    $sent = $client()->sendMessage(SEND);
    assertSame(2, $sent->attempts);
    assertSame([$sent->idempotencyKey, $sent->idempotencyKey], keys($stub));
    assertSame([1000], $waits);
    $stub->script([envelope(500, 'internal_error'), answer(200, message('delivered'))]);
    assertSame('delivered', $client()->getMessage('msg_1')->status);
    assertSame([375], $waits, 'no Retry-After: 500 ms backoff, equal jitter (250 + 0.5 * 250)');
    $stub->script([envelope(500, 'internal_error', ['Retry-After' => '1']), answer(201, [])]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->createTestKey());
    assertSame(['internal_error', 1], [$error->errorCode, count($stub->requests())]);
});

Runner::test('a proxy\'s 502 and 504 in the envelope (HAProxy: internal_error, Retry-After: 1) are retried with the same key', function () use ($stub, $client, &$waits) {
    $stub->script([
        envelope(502, 'internal_error', ['Retry-After' => '1'], 'req_proxy1'),
        envelope(504, 'internal_error', ['Retry-After' => '1'], 'req_proxy2'),
        answer(201, message('submitted')),
    ]);
    $sent = $client()->sendMessage(SEND);
    assertSame(3, $sent->attempts);
    assertSame(array_fill(0, 3, $sent->idempotencyKey), keys($stub));
    assertSame([1000, 1000], $waits);
});

Runner::test('an answer that is not the envelope (an HTML 404) is unexpected_response, not retried', function () use ($stub, $client) {
    $stub->script([['status' => 404, 'headers' => ['Content-Type' => 'text/html'], 'body' => '<html>Not Found</html>'], answer(201, message('submitted'))]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->sendMessage(SEND));
    assertSame(['unexpected_response', 404, null, 1], [$error->errorCode, $error->status, $error->requestId, $error->attempts]);
    assertSame(1, count($stub->requests()));
    // A 2xx whose body is not JSON is unexpected too.
    $stub->script([['status' => 200, 'headers' => ['Content-Type' => 'text/plain'], 'body' => 'ok']]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->getMessage('msg_1'));
    assertSame(['unexpected_response', 200], [$error->errorCode, $error->status]);
});

Runner::test("a gateway's 502/503/504 page is retried on a send (same key) and a read, not on a new test key or a check", function () use ($stub, $client, &$waits) {
    foreach ([502, 503, 504] as $status) {
        $page = ['status' => $status, 'headers' => ['Content-Type' => 'text/html'], 'body' => "<html><body><h1>{$status}</h1></body></html>"];
        $stub->script([$page, answer(201, message('submitted'))]);
        $sent = $client()->sendMessage(SEND);
        assertSame([201, 2], [$sent->status, $sent->attempts]);
        assertSame([$sent->idempotencyKey, $sent->idempotencyKey], keys($stub));
        assertSame(1, count($waits));
        $stub->script([$page, answer(200, message('delivered'))]);
        assertSame('delivered', $client()->getMessage('msg_1')->status);
        foreach (['createTestKey', 'checkVerification'] as $call) {
            $stub->script([$page, answer(201, message('submitted'))]);
            $error = assertThrows(SmsApiException::class, fn () => $call === 'createTestKey' ? $client()->createTestKey() : $client()->checkVerification('vrf_1', '000000'));
            assertSame(['unexpected_response', $status, 1], [$error->errorCode, $error->status, $error->attempts]);
            assertSame(1, count($stub->requests()), "{$call} after a {$status} page: one request");
        }
    }
});

Runner::test('a Retry-After longer than maxDelayMs is thrown at once', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(429, 'rate_limited', ['Retry-After' => '60']), answer(201, message('submitted'))]);
    $error = assertThrows(SmsApiException::class, fn () => $client(['maxDelayMs' => 30_000])->sendMessage(SEND));
    assertSame(['rate_limited', 60, 1], [$error->errorCode, $error->retryAfter, $error->attempts]);
    assertSame(1, count($stub->requests()));
    assertSame([], $waits);
});

Runner::test('backoff without Retry-After: 500 ms doubling, equal jitter, bounded by maxDelayMs; attempts: 1 turns retries off', function () use ($stub, $client, &$waits) {
    $stub->script(array_fill(0, 5, envelope(503, 'too_many_connections')));
    $error = assertThrows(SmsApiException::class, fn () => $client(['attempts' => 5, 'random' => static fn (): float => 0.0, 'maxDelayMs' => 1500])->getMessage('msg_1'));
    assertSame(5, $error->attempts);
    assertSame([250, 500, 750, 750], $waits);
    $stub->script([envelope(503, 'provider_unavailable', ['Retry-After' => '1']), answer(201, message('submitted'))]);
    $error = assertThrows(SmsApiException::class, fn () => $client(['attempts' => 1])->sendMessage(SEND));
    assertSame([1, 1], [$error->attempts, count($stub->requests())]);
});

Runner::test('a server that never answers: each attempt times out, the send is retried with the same key, then SmsTimeoutException', function () use ($client, &$waits) {
    $silent = new SilentServer();
    $error = assertThrows(SmsTimeoutException::class, fn () => $client(['baseUrl' => $silent->url, 'timeoutSeconds' => 0.3, 'attempts' => 2])->sendMessage(SEND));
    assertSame(['timeout', null, null, 2], [$error->errorCode, $error->status, $error->requestId, $error->attempts]);
    assertSame([375], $waits);
    $requests = $silent->drain();
    assertSame(2, count($requests), 'two connections');
    preg_match_all('/^Idempotency-Key: (.+)\r$/mi', implode('', $requests), $found);
    assertSame(2, count($found[1]));
    assertMatches(UUID_V4, $found[1][0]);
    assertSame($found[1][0], $found[1][1], 'the key kept across the timeout');
});

Runner::test('a new test key is not retried after a timeout (it could make two keys)', function () use ($client, &$waits) {
    $silent = new SilentServer();
    $error = assertThrows(SmsTimeoutException::class, fn () => $client(['baseUrl' => $silent->url, 'timeoutSeconds' => 0.3])->createTestKey());
    assertSame(1, $error->attempts);
    assertSame(1, count($silent->drain()));
    assertSame([], $waits);
});

Runner::test('a refused connection is a network error, retried on reads', function () use ($client, &$waits) {
    $url = 'http://127.0.0.1:' . freePort();
    $error = assertThrows(SmsNetworkException::class, fn () => $client(['baseUrl' => $url])->getMessage('msg_1'));
    assertSame(['network_error', null, 3], [$error->errorCode, $error->status, $error->attempts]);
    assertSame(2, count($waits));
});

Runner::test('createTestKey: no Authorization, 201 parsed; the client with its key', function () use ($stub, $client) {
    $stub->script([answer(201, [
        'api_key' => 'sk_test_new',
        'project_id' => 'prj_1',
        'mode' => 'test',
        'claim_url' => 'http://x/claim/abc',
        'expires_at' => '2026-12-22T10:00:00Z',
        'next_steps' => 'Send.',
    ], ['X-Request-Id' => 'req_k'])]);
    $created = $client(['apiKey' => null])->createTestKey();
    assertSame(['sk_test_new', 'prj_1', 'test', 201, 'req_k', 1], [$created->testKey->apiKey, $created->testKey->projectId, $created->testKey->mode, $created->status, $created->requestId, $created->attempts]);
    [$request] = $stub->requests();
    assertSame(['POST', '/v1/test-keys', false], [$request['method'], $request['path'], isset($request['headers']['authorization'])]);
    $stub->script([answer(200, message('queued'))]);
    $client(['apiKey' => null])->withApiKey('sk_test_new')->getMessage('msg_1');
    assertSame('Bearer sk_test_new', $stub->requests()[0]['headers']['authorization']);
});

Runner::test('getMessage escapes the id into the path; a wrong shape is unexpected_response', function () use ($stub, $client) {
    $stub->script([answer(200, message('delivered')), answer(200, ['object' => 'message', 'id' => 1])]);
    $client()->getMessage('a/b?c');
    assertSame('/v1/messages/a%2Fb%3Fc', $stub->requests()[0]['path']);
    $error = assertThrows(SmsApiException::class, fn () => $client()->getMessage('msg_1'));
    assertSame(['unexpected_response', 200], [$error->errorCode, $error->status]);
});

Runner::test('waitForFinalStatus polls with 2 s doubling to 30 s, and stops at the first final status', function () use ($stub, $client, &$waits) {
    $stub->script([...array_fill(0, 6, answer(200, message('submitted'))), answer(200, message('delivered')), answer(200, message('submitted'))]);
    $seen = [];
    $final = $client()->waitForFinalStatus('msg_1', onUpdate: function (Message $m) use (&$seen) {
        $seen[] = $m->status;
    });
    assertSame('delivered', $final->status);
    assertSame([2000, 4000, 8000, 16000, 30000, 30000, 30000], $waits);
    assertSame(7, count($stub->requests()));
    assertSame([...array_fill(0, 6, 'submitted'), 'delivered'], $seen);
    assertSame([2000, 4000, 8000, 16000, 30000, 30000], array_slice(iterator_to_array((function () {
        foreach (Client::pollingDelays() as $i => $delay) {
            if ($i >= 6) {
                return;
            }
            yield $delay;
        }
    })(), false), 0, 6));
});

Runner::test('waitForFinalStatus gives up after maxWaitMs with SmsTimeoutException', function () use ($stub, $client, &$waits) {
    $stub->script(array_fill(0, 10, answer(200, message('submitted'))));
    $error = assertThrows(SmsTimeoutException::class, fn () => $client()->waitForFinalStatus('msg_1', maxWaitMs: 20_000));
    assertSame([2000, 4000, 8000], $waits);
    assertSame([3, 3], [count($stub->requests()), $error->attempts]);
});

Runner::test('waitForFinalStatus where the server holds reads: the first read at 2 s, then each held read at once', function () use ($stub, $client, &$waits) {
    $held = ['Preference-Applied' => 'wait=25'];
    $stub->script([
        answer(200, message('submitted'), ['ETag' => '"a"']),
        ['status' => 304, 'headers' => ['ETag' => '"a"'] + $held, 'body' => ''],
        answer(200, message('delivered'), ['ETag' => '"b"'] + $held),
    ]);
    $seen = [];
    $final = $client()->waitForFinalStatus('msg_1', onUpdate: function (Message $m) use (&$seen) {
        $seen[] = $m->status;
    });
    assertSame('delivered', $final->status);
    assertSame([2000], $waits);
    assertSame(['submitted', 'delivered'], $seen);
    assertSame(
        [[null, null], ['"a"', 'wait=25'], ['"a"', 'wait=25']],
        array_map(static fn (array $r): array => [$r['headers']['if-none-match'] ?? null, $r['headers']['prefer'] ?? null], $stub->requests()),
    );
});

Runner::test('waitForFinalStatus against a server that does not hold: the schedule, with If-None-Match; the hold fits the timeout', function () use ($stub, $client, &$waits) {
    $stub->script([
        answer(200, message('submitted'), ['ETag' => '"a"']),
        ['status' => 304, 'headers' => ['ETag' => '"a"'], 'body' => ''],
        ['status' => 304, 'headers' => ['ETag' => '"a"'], 'body' => ''],
        answer(200, message('delivered'), ['ETag' => '"b"']),
    ]);
    assertSame('delivered', $client(['timeoutSeconds' => 12.0])->waitForFinalStatus('msg_1')->status);
    // 2 s; at once (the first ETag); then 4 s and 8 s, as spec 6 says.
    assertSame([2000, 4000, 8000], $waits);
    assertSame(
        [[null, null], ['"a"', 'wait=7'], ['"a"', 'wait=7'], ['"a"', 'wait=7']],
        array_map(static fn (array $r): array => [$r['headers']['if-none-match'] ?? null, $r['headers']['prefer'] ?? null], $stub->requests()),
    );
});

Runner::test('verifications: start (key kept across a 503), check outcomes, get', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(503, 'provider_unavailable', ['Retry-After' => '5']), answer(201, verification('pending'))]);
    $started = $client()->startVerification(['to' => '+995555123456', 'code_length' => 6]);
    assertSame(['pending', false, 201, 2], [$started->verification->status, $started->replayed, $started->status, $started->attempts]);
    assertMatches(UUID_V4, $started->idempotencyKey);
    assertSame([$started->idempotencyKey, $started->idempotencyKey], keys($stub));
    assertSame(['to' => '+995555123456', 'code_length' => 6], json_decode($stub->requests()[0]['body'], true));

    $stub->script([
        answer(200, verification('pending', 4)),
        answer(200, verification('approved', 4)),
        answer(200, verification('max_attempts_reached', 0)),
        envelope(409, 'verification_not_pending', [], 'req_409'),
    ]);
    $sms = $client();
    $wrong = $sms->checkVerification('vrf_1', '111111');
    assertSame([CheckVerificationResult::PENDING, 4, false], [$wrong->outcome, $wrong->verification?->attemptsRemaining, $wrong->isApproved()]);
    $approved = $sms->checkVerification('vrf_1', '000000');
    assertSame([CheckVerificationResult::APPROVED, true], [$approved->outcome, $approved->isApproved()]);
    assertSame(CheckVerificationResult::MAX_ATTEMPTS_REACHED, $sms->checkVerification('vrf_1', '2')->outcome);
    $refused = $sms->checkVerification('vrf_1', '000000');
    assertSame([CheckVerificationResult::VERIFICATION_NOT_PENDING, null, 'req_409', false], [$refused->outcome, $refused->verification, $refused->requestId, $refused->isApproved()]);
    assertSame('The stub says verification_not_pending.', $refused->message);
    $requests = $stub->requests();
    assertSame(['POST', '/v1/verifications/vrf_1/check', ['code' => '111111'], false], [$requests[0]['method'], $requests[0]['path'], json_decode($requests[0]['body'], true), isset($requests[0]['headers']['idempotency-key'])]);

    $stub->script([answer(200, verification('approved'))]);
    assertSame('approved', $client()->getVerification('vrf_1')->status);
    assertSame(['GET', '/v1/verifications/vrf_1'], [$stub->requests()[0]['method'], $stub->requests()[0]['path']]);
});

Runner::test('a check is retried on 429 rate_limited, never on a 500 or a timeout (a wrong code would count twice)', function () use ($stub, $client, &$waits) {
    $stub->script([envelope(429, 'rate_limited', ['Retry-After' => '2']), answer(200, verification('approved'))]);
    assertTrue($client()->checkVerification('vrf_1', '000000')->isApproved(), 'approved after the retry');
    assertSame([2000], $waits);
    $stub->script([envelope(500, 'internal_error', ['Retry-After' => '1']), answer(200, verification('approved'))]);
    $error = assertThrows(SmsApiException::class, fn () => $client()->checkVerification('vrf_1', '000000'));
    assertSame(['internal_error', 1], [$error->errorCode, count($stub->requests())]);
    $silent = new SilentServer();
    assertThrows(SmsTimeoutException::class, fn () => $client(['baseUrl' => $silent->url, 'timeoutSeconds' => 0.3])->checkVerification('vrf_1', '000000'));
    assertSame(1, count($silent->drain()));
});

Runner::test('an empty variables object is sent as {}', function () use ($stub, $client) {
    $stub->script([answer(201, message('submitted'))]);
    $client()->sendMessage(['to' => '+995555123456', 'template' => 'verification_code', 'variables' => []]);
    assertSame('{"to":"+995555123456","template":"verification_code","variables":{}}', $stub->requests()[0]['body']);
});

Runner::test('answers read to the end: chunked, Content-Length, until close; one cut off is a network error, retried on a read', function () use ($stub, $client) {
    $stub->script([
        answer(200, message('delivered')) + ['chunked' => true],
        answer(200, message('failed', ['code' => 'provider_rejected', 'message' => 'Rejected.'])) + ['declared_length' => strlen((string) json_encode(message('failed', ['code' => 'provider_rejected', 'message' => 'Rejected.']), JSON_UNESCAPED_SLASHES))],
        answer(200, message('queued')),
    ]);
    $sms = $client();
    assertSame('delivered', $sms->getMessage('msg_1')->status);
    $failed = $sms->getMessage('msg_1');
    assertSame(['failed', 'provider_rejected', 'Rejected.'], [$failed->status, $failed->error?->code, $failed->error?->message]);
    assertSame('queued', $sms->getMessage('msg_1')->status);
    $stub->script([
        answer(200, message('delivered')) + ['declared_length' => 5000],
        answer(200, message('delivered')) + ['declared_length' => 5000],
    ]);
    $error = assertThrows(SmsNetworkException::class, fn () => $client(['attempts' => 2])->getMessage('msg_1'));
    assertSame(['network_error', 2], [$error->errorCode, $error->attempts]);
    assertMatches('/cut off/', $error->getMessage());
});

Runner::test('the timeout bounds the whole answer: a server trickling bytes is a timeout, not a wait per byte', function () use ($stub, $client) {
    // 40 bytes, 50 ms apart (about 2 s in all); each read alone is quick; the client allows 0.5 s.
    $stub->script([['status' => 200, 'headers' => ['Content-Type' => 'application/json'], 'body' => str_repeat(' ', 39) . '{', 'pause_ms' => 50]]);
    $error = assertThrows(SmsTimeoutException::class, fn () => $client(['timeoutSeconds' => 0.5, 'attempts' => 1])->getMessage('msg_1'));
    assertSame(['timeout', 1], [$error->errorCode, $error->attempts]);
});

exit(Runner::run($argv[1] ?? null));
