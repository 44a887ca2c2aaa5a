<?php

// The client against the real service (BASE_URL, e.g. http://127.0.0.1:3000;
// started by apps/api/test/clients/client-php.e2e.test.ts): a test key, a send to
// every simulator number and an ordinary one polled to its final status,
// replays and refusals with the API's codes, a verification started and
// checked (test keys: the code is zeros), each check outcome in the REST
// words; with PROXY_502_URL and PROXY_504_URL (fake gateways the wrapper puts
// in front of the service), a send answered first by nginx's 502 page or
// HAProxy's 504 page, retried with the same Idempotency-Key. The last line is
// `# result {json}` (the key, the messages and their Idempotency-Keys, the
// gateways' projects) for the wrapper to check against the service and its
// database.

declare(strict_types=1);

namespace SmsApi\Tests;

use SmsApi\CheckVerificationResult;
use SmsApi\Client;
use SmsApi\SmsApiException;

require __DIR__ . '/../autoload.php';
require __DIR__ . '/Runner.php';

$baseUrl = getenv('BASE_URL');
if (!is_string($baseUrl) || $baseUrl === '') {
    fwrite(STDERR, "BASE_URL is not set\n");
    exit(2);
}

const ORDINARY = '+995555123456';
/** The simulator's numbers (packages/provider-sim) and what each answers. */
const SIM = [
    'rejected' => '+995500000001',
    'unreachable' => '+995500000002',
    'indeterminate' => '+995500000003',
    'undeliverable' => '+995500000004',
];
const MASKED = '/^\+9955\x{2022}{6}\d{2}$/u';

function body(string $to): array
{
    return ['to' => $to, 'template' => 'password_reset_code', 'variables' => ['code' => '482913', 'minutes' => '15'], 'locale' => 'en'];
}

$result = ['messages' => [], 'keys' => []];
/** @var Client|null $sms */
$sms = null;
/** Polls quickly (the wrapper runs the status check every second), within a minute. */
$final = static fn (Client $client, string $id) => $client->waitForFinalStatus($id, initialDelayMs: 250, maxDelayMs: 1000, maxWaitMs: 60_000);

Runner::test('createTestKey: 201, a test key, the rate limit', function () use ($baseUrl, &$sms, &$result) {
    $created = (new Client(baseUrl: $baseUrl))->createTestKey();
    assertSame([201, 'test', 1], [$created->status, $created->testKey->mode, $created->attempts]);
    assertMatches('/^sk_test_/', $created->testKey->apiKey);
    assertMatches('/^prj_/', $created->testKey->projectId);
    assertMatches('/^req_/', $created->requestId);
    assertTrue(($created->rateLimit?->limit ?? 0) > 0, 'RateLimit-Limit');
    $sms = (new Client(baseUrl: $baseUrl))->withApiKey($created->testKey->apiKey);
    $result['apiKey'] = $created->testKey->apiKey;
    $result['projectId'] = $created->testKey->projectId;
});

Runner::test('an ordinary number: 201 submitted, then delivered', function () use (&$sms, &$result, $final) {
    $sent = $sms->sendMessage(body(ORDINARY));
    assertSame([201, false, 1, 'submitted', 1, null], [$sent->status, $sent->replayed, $sent->attempts, $sent->message->status, $sent->message->segments, $sent->message->error]);
    assertMatches('/^msg_[0-9a-z]{26}$/', $sent->message->id);
    assertMatches(MASKED, $sent->message->to);
    assertMatches('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $sent->idempotencyKey);
    $done = $final($sms, $sent->message->id);
    assertSame(['delivered', null], [$done->status, $done->error]);
    $result['messages']['ordinary'] = ['id' => $sent->message->id, 'status' => $done->status];
    $result['keys']['ordinary'] = $sent->idempotencyKey;

    // The same key and body: the stored answer, nothing sent again.
    $replay = $sms->sendMessage(body(ORDINARY), $sent->idempotencyKey);
    assertSame([200, true, $sent->message->id, $sent->idempotencyKey], [$replay->status, $replay->replayed, $replay->message->id, $replay->idempotencyKey]);
    // The same key, another body: 409, never retried.
    $reused = assertThrows(SmsApiException::class, fn () => $sms->sendMessage(body('+995555123400'), $sent->idempotencyKey));
    assertSame(['idempotency_key_reused', 409, 1], [$reused->errorCode, $reused->status, $reused->attempts]);
    assertMatches('/^req_/', $reused->requestId);
});

Runner::test('+995500000001: 201 failed, provider_rejected (final at once)', function () use (&$sms, &$result, $final) {
    $sent = $sms->sendMessage(body(SIM['rejected']));
    assertSame([201, 'failed', 'provider_rejected', 1], [$sent->status, $sent->message->status, $sent->message->error?->code, $sent->attempts]);
    assertSame('failed', $final($sms, $sent->message->id)->status);
    $result['messages']['rejected'] = ['id' => $sent->message->id, 'status' => 'failed'];
    $result['keys']['rejected'] = $sent->idempotencyKey;
});

Runner::test('+995500000002: 503 provider_unavailable retried with the same key after Retry-After, then thrown; nothing kept', function () use ($baseUrl, &$sms, &$result) {
    $waits = [];
    $recording = new Client(baseUrl: $baseUrl, apiKey: $result['apiKey'], sleeper: static function (int $ms) use (&$waits): void {
        $waits[] = $ms;
    });
    $error = assertThrows(SmsApiException::class, fn () => $recording->sendMessage(body(SIM['unreachable']), 'php-e2e-unreachable'));
    assertSame(['provider_unavailable', 503, 3], [$error->errorCode, $error->status, $error->attempts]);
    assertTrue($error->retryAfter !== null && $error->retryAfter > 0, 'Retry-After');
    assertSame([$error->retryAfter * 1000, $error->retryAfter * 1000], $waits);
    assertMatches('/^req_/', $error->requestId);
    $result['keys']['unreachable'] = 'php-e2e-unreachable';
});

Runner::test('+995500000003: 201 unknown, never retried, final as it is', function () use (&$sms, &$result, $final) {
    $sent = $sms->sendMessage(body(SIM['indeterminate']));
    assertSame([201, 'unknown', 'provider_unavailable', 1], [$sent->status, $sent->message->status, $sent->message->error?->code, $sent->attempts]);
    assertSame('unknown', $final($sms, $sent->message->id)->status);
    $result['messages']['indeterminate'] = ['id' => $sent->message->id, 'status' => 'unknown'];
    $result['keys']['indeterminate'] = $sent->idempotencyKey;
});

Runner::test('+995500000004: 201 submitted, then undeliverable', function () use (&$sms, &$result, $final) {
    $sent = $sms->sendMessage(body(SIM['undeliverable']));
    assertSame([201, 'submitted'], [$sent->status, $sent->message->status]);
    $done = $final($sms, $sent->message->id);
    assertSame(['undeliverable', 'invalid_recipient'], [$done->status, $done->error?->code]);
    $result['messages']['undeliverable'] = ['id' => $sent->message->id, 'status' => 'undeliverable'];
    $result['keys']['undeliverable'] = $sent->idempotencyKey;
});

Runner::test('the API\'s codes: 400 invalid_recipient, 404 message_not_found, 401 invalid_api_key, none retried', function () use ($baseUrl, &$sms) {
    $bad = assertThrows(SmsApiException::class, fn () => $sms->sendMessage(body('555123456')));
    assertSame(['invalid_recipient', 400, 1], [$bad->errorCode, $bad->status, $bad->attempts]);
    $missing = assertThrows(SmsApiException::class, fn () => $sms->getMessage('msg_00000000000000000000000000'));
    assertSame(['message_not_found', 404, 1], [$missing->errorCode, $missing->status, $missing->attempts]);
    $refused = assertThrows(SmsApiException::class, fn () => (new Client(baseUrl: $baseUrl, apiKey: 'sk_test_' . str_repeat('x', 40)))->getMessage('msg_1'));
    assertSame([401, 1], [$refused->status, $refused->attempts]);
    assertTrue(in_array($refused->errorCode, ['invalid_api_key', 'unauthorized'], true), "401 code {$refused->errorCode}");
});

Runner::test('a verification: started, a wrong code, the right one (zeros for test keys), read, then not pending', function () use (&$sms, &$result) {
    $started = $sms->startVerification(['to' => '+995555123457', 'code_length' => 6]);
    assertSame([201, false, 'pending', 5], [$started->status, $started->replayed, $started->verification->status, $started->verification->attemptsRemaining]);
    assertMatches('/^vrf_[0-9a-z]{26}$/', $started->verification->id);
    $replay = $sms->startVerification(['to' => '+995555123457', 'code_length' => 6], $started->idempotencyKey);
    assertSame([200, true, $started->verification->id], [$replay->status, $replay->replayed, $replay->verification->id]);
    $id = $started->verification->id;
    $wrong = $sms->checkVerification($id, '123456');
    assertSame([CheckVerificationResult::PENDING, 4, false], [$wrong->outcome, $wrong->verification?->attemptsRemaining, $wrong->isApproved()]);
    $right = $sms->checkVerification($id, '000000');
    assertSame([CheckVerificationResult::APPROVED, true], [$right->outcome, $right->isApproved()]);
    assertSame(['approved', 4], [$sms->getVerification($id)->status, $sms->getVerification($id)->attemptsRemaining]);
    $again = $sms->checkVerification($id, '000000');
    assertSame([CheckVerificationResult::VERIFICATION_NOT_PENDING, false], [$again->outcome, $again->isApproved()]);
    assertMatches('/approved/', $again->message);
    assertMatches('/^req_/', $again->requestId);
    $result['verification'] = ['id' => $id, 'messageId' => $started->verification->messageId, 'key' => $started->idempotencyKey];
});

Runner::test('each check outcome in the REST words: pending, max_attempts_reached, verification_not_pending, approved', function () use (&$sms, &$result) {
    assertSame(['approved', 'pending', 'max_attempts_reached', 'verification_not_pending'], CheckVerificationResult::OUTCOMES);
    $seen = [];
    $check = function (string $id, string $code) use (&$sms, &$seen): CheckVerificationResult {
        $checked = $sms->checkVerification($id, $code);
        $seen[] = $checked->outcome;
        return $checked;
    };
    $started = $sms->startVerification(['to' => '+995555123458', 'code_length' => 4])->verification;
    $exhausted = $started->id;
    $result['outcomeMessages'][] = $started->messageId;
    foreach ([4, 3, 2, 1] as $left) {
        $wrong = $check($exhausted, '1111');
        assertSame(['pending', 'pending', $left], [$wrong->outcome, $wrong->verification?->status, $wrong->verification?->attemptsRemaining]);
    }
    $last = $check($exhausted, '1111');
    assertSame(['max_attempts_reached', 'max_attempts_reached', 0, false], [$last->outcome, $last->verification?->status, $last->verification?->attemptsRemaining, $last->isApproved()]);
    $ended = $check($exhausted, '0000');
    assertSame(['verification_not_pending', null, false], [$ended->outcome, $ended->verification, $ended->isApproved()]);
    assertMatches('/max_attempts_reached/', $ended->message);
    $started = $sms->startVerification(['to' => '+995555123459', 'code_length' => 4])->verification;
    $fresh = $started->id;
    $result['outcomeMessages'][] = $started->messageId;
    $right = $check($fresh, '0000');
    assertSame(['approved', 'approved', true], [$right->outcome, $right->verification?->status, $right->isApproved()]);
    assertSame('verification_not_pending', $check($fresh, '0000')->outcome);
    sort($seen);
    $all = CheckVerificationResult::OUTCOMES;
    sort($all);
    assertSame($all, array_values(array_unique($seen)));
});

$proxies = array_filter([502 => getenv('PROXY_502_URL'), 504 => getenv('PROXY_504_URL')], static fn ($url) => is_string($url) && $url !== '');
if (count($proxies) === 2) {
    Runner::test("a gateway's 502 or 504 page on a send: retried with the same Idempotency-Key, one message", function () use ($baseUrl, $proxies, &$result) {
        foreach ($proxies as $status => $url) {
            // A project of its own, so that the wrapper can count its messages: exactly one.
            $key = (new Client(baseUrl: $baseUrl))->createTestKey()->testKey;
            $waits = [];
            $client = new Client(baseUrl: $url, apiKey: $key->apiKey, sleeper: function (int $ms) use (&$waits): void {
                $waits[] = $ms;
            });
            $sent = $client->sendMessage(body(ORDINARY), "php-proxy-{$status}");
            // 502: the service never saw the first request (201 now); 504: it sent it, this is the replay.
            assertSame([2, $status === 504 ? 200 : 201, $status === 504, 1], [$sent->attempts, $sent->status, $sent->replayed, count($waits)]);
            assertSame($sent->message->id, (new Client(baseUrl: $baseUrl, apiKey: $key->apiKey))->getMessage($sent->message->id)->id);
            $result['proxies'][(string) $status] = $key->projectId;
        }
    });
}

$code = Runner::run($argv[1] ?? null);
echo '# result ' . json_encode($result, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) . "\n";
exit($code);
