<?php

// The scripted stub server's router (`php -S 127.0.0.1:PORT tests/stub/router.php`,
// started by tests/StubServer.php): each request gets the next answer of
// $SMS_STUB_DIR/script.json and is recorded, one JSON line, in
// $SMS_STUB_DIR/requests.jsonl (method, path, headers, body). An answer is
// ['status', 'headers', 'body'], and optionally 'chunked' (Transfer-Encoding),
// 'declared_length' (a Content-Length the body does not reach) or 'pause_ms'
// (the body trickled a byte at a time).

declare(strict_types=1);

$dir = (string) getenv('SMS_STUB_DIR');
$lock = fopen("{$dir}/lock", 'c');
flock($lock, LOCK_EX);
$index = (int) @file_get_contents("{$dir}/index");
file_put_contents("{$dir}/index", (string) ($index + 1));
$script = json_decode((string) @file_get_contents("{$dir}/script.json"), true) ?: [];
file_put_contents("{$dir}/requests.jsonl", json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'path' => $_SERVER['REQUEST_URI'],
    'headers' => array_change_key_case(getallheaders(), CASE_LOWER),
    'body' => file_get_contents('php://input'),
], JSON_UNESCAPED_SLASHES) . "\n", FILE_APPEND);
flock($lock, LOCK_UN);

$answer = $script[$index] ?? ['status' => 500, 'headers' => ['Content-Type' => 'text/plain'], 'body' => 'unscripted request'];
http_response_code($answer['status']);
foreach ($answer['headers'] ?? [] as $name => $value) {
    header("{$name}: {$value}");
}
$body = is_string($answer['body'] ?? null) ? $answer['body'] : json_encode($answer['body'] ?? null, JSON_UNESCAPED_SLASHES);
// php -S neither chunks nor counts: it sends what the router writes and closes.
if (isset($answer['declared_length'])) {
    // A Content-Length the body does not reach: an answer cut off.
    header('Content-Length: ' . $answer['declared_length']);
}
if ($answer['chunked'] ?? false) {
    header('Transfer-Encoding: chunked');
    $body = implode('', array_map(static fn (string $piece): string => dechex(strlen($piece)) . "\r\n{$piece}\r\n", str_split($body, 7))) . "0\r\n\r\n";
}
if (isset($answer['pause_ms'])) {
    // A trickle: one byte at a time, a pause before each.
    foreach (str_split($body) as $byte) {
        usleep($answer['pause_ms'] * 1000);
        echo $byte;
        flush();
    }
    return true;
}
echo $body;
return true;
