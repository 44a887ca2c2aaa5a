<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * @internal HTTP/1.1 over PHP's own sockets (stream_socket_client; `tls://`
 * for https, which needs the openssl extension): no curl, no allow_url_fopen.
 *
 * One request per connection (`Connection: close`), and one deadline for the
 * whole exchange: connecting, writing the request and reading the entire
 * answer must finish within `$timeoutSeconds`, however slowly the server
 * trickles bytes (the http:// stream wrapper's `timeout` bounds each read,
 * not the answer). Name resolution is the system resolver's and is bounded
 * by its own settings (resolv.conf), not by this deadline.
 */
final class Http
{
    /** An answer larger than this is refused (the API's answers are a few kB). */
    public const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

    /**
     * @param array<string, string> $headers
     * @throws HttpFailure
     */
    public static function request(
        string $method,
        string $url,
        array $headers,
        ?string $body,
        float $timeoutSeconds,
    ): HttpResponse {
        $deadline = hrtime(true) + (int) ($timeoutSeconds * 1e9);
        $parts = parse_url($url);
        $scheme = strtolower($parts['scheme'] ?? '');
        $host = $parts['host'] ?? '';
        if (($scheme !== 'http' && $scheme !== 'https') || $host === '') {
            throw new HttpFailure("not an http(s) URL: {$scheme}://{$host}", false);
        }
        $secure = $scheme === 'https';
        $port = $parts['port'] ?? ($secure ? 443 : 80);
        $target = ($parts['path'] ?? '/') . (isset($parts['query']) ? '?' . $parts['query'] : '');
        $default = $port === ($secure ? 443 : 80);

        $context = stream_context_create($secure ? ['ssl' => [
            'verify_peer' => true,
            'verify_peer_name' => true,
            'peer_name' => trim($host, '[]'),
            'SNI_enabled' => true,
        ]] : []);
        $errno = 0;
        $errstr = '';
        $socket = @stream_socket_client(
            ($secure ? 'tls://' : 'tcp://') . "{$host}:{$port}",
            $errno,
            $errstr,
            max(0.001, self::remaining($deadline)),
            STREAM_CLIENT_CONNECT,
            $context,
        );
        if ($socket === false) {
            $timedOut = self::remaining($deadline) <= 0 || $errno === 110 || stripos($errstr, 'timed out') !== false;
            throw new HttpFailure("connect to {$host}:{$port} failed: " . ($errstr !== '' ? $errstr : "errno {$errno}"), $timedOut);
        }
        try {
            $lines = ["{$method} {$target} HTTP/1.1", 'Host: ' . $host . ($default ? '' : ":{$port}")];
            foreach ($headers as $name => $value) {
                $lines[] = "{$name}: {$value}";
            }
            $lines[] = 'Connection: close';
            if ($body !== null) {
                $lines[] = 'Content-Length: ' . strlen($body);
            }
            self::write($socket, implode("\r\n", $lines) . "\r\n\r\n" . ($body ?? ''), $deadline);
            return self::read($socket, $deadline, $method === 'HEAD');
        } finally {
            fclose($socket);
        }
    }

    private static function remaining(int $deadline): float
    {
        return ($deadline - hrtime(true)) / 1e9;
    }

    /** @param resource $socket */
    private static function wait($socket, int $deadline, bool $forWriting): void
    {
        for (;;) {
            $left = self::remaining($deadline);
            if ($left <= 0) {
                throw new HttpFailure('no whole answer before the deadline', true);
            }
            $read = $forWriting ? null : [$socket];
            $write = $forWriting ? [$socket] : null;
            $except = null;
            $seconds = (int) floor($left);
            $ready = @stream_select($read, $write, $except, $seconds, (int) (($left - $seconds) * 1e6));
            if ($ready === false) {
                throw new HttpFailure('waiting on the connection failed', false);
            }
            if ($ready > 0) {
                return;
            }
        }
    }

    /** @param resource $socket */
    private static function write($socket, string $data, int $deadline): void
    {
        stream_set_blocking($socket, false);
        while ($data !== '') {
            self::wait($socket, $deadline, true);
            $written = @fwrite($socket, $data);
            if ($written === false) {
                throw new HttpFailure('the connection closed while the request was written', false);
            }
            $data = (string) substr($data, $written);
        }
    }

    /** @param resource $socket */
    private static function read($socket, int $deadline, bool $head): HttpResponse
    {
        $buffer = '';
        $headEnd = false;
        $parsed = null;
        for (;;) {
            // A TLS stream may hold decrypted bytes select() cannot see: drain before waiting.
            $chunk = @fread($socket, 65536);
            if ($chunk === false) {
                throw new HttpFailure('reading the answer failed', false);
            }
            if ($chunk === '') {
                if (feof($socket)) {
                    break;
                }
                self::wait($socket, $deadline, false);
                continue;
            }
            $buffer .= $chunk;
            if (strlen($buffer) > self::MAX_ANSWER_BYTES) {
                throw new HttpFailure('the answer is larger than ' . self::MAX_ANSWER_BYTES . ' bytes', false);
            }
            if ($headEnd === false) {
                $headEnd = strpos($buffer, "\r\n\r\n");
                if ($headEnd !== false) {
                    $parsed = self::head(substr($buffer, 0, $headEnd));
                }
            }
            if ($parsed !== null && $headEnd !== false) {
                $body = self::body($parsed, substr($buffer, $headEnd + 4), $head, false);
                if ($body !== null) {
                    return new HttpResponse($parsed[0], $parsed[1], $body);
                }
            }
            if (self::remaining($deadline) <= 0) {
                throw new HttpFailure('no whole answer before the deadline', true);
            }
        }
        // The server closed the connection.
        if ($parsed === null || $headEnd === false) {
            throw new HttpFailure($buffer === '' ? 'the connection closed without an answer' : 'the answer was cut off', false);
        }
        $body = self::body($parsed, substr($buffer, $headEnd + 4), $head, true);
        if ($body === null) {
            throw new HttpFailure('the answer was cut off', false);
        }
        return new HttpResponse($parsed[0], $parsed[1], $body);
    }

    /** @return array{0: int, 1: array<string, list<string>>} */
    private static function head(string $text): array
    {
        $lines = explode("\r\n", $text);
        if (preg_match('#^HTTP/\d(?:\.\d)? (\d{3})#', (string) array_shift($lines), $match) !== 1) {
            throw new HttpFailure('not an HTTP answer', false);
        }
        $headers = [];
        foreach ($lines as $line) {
            $colon = strpos($line, ':');
            if ($colon === false) {
                continue;
            }
            $headers[strtolower(trim(substr($line, 0, $colon)))][] = trim(substr($line, $colon + 1));
        }
        return [(int) $match[1], $headers];
    }

    /**
     * The whole body, or null while more is to come.
     *
     * @param array{0: int, 1: array<string, list<string>>} $parsed
     */
    private static function body(array $parsed, string $rest, bool $head, bool $closed): ?string
    {
        [$status, $headers] = $parsed;
        if ($head || $status === 204 || $status === 304 || ($status >= 100 && $status < 200)) {
            return '';
        }
        $encoding = strtolower(implode(',', $headers['transfer-encoding'] ?? []));
        if (str_contains($encoding, 'chunked')) {
            return self::dechunk($rest);
        }
        $length = $headers['content-length'][0] ?? null;
        if ($length !== null && preg_match('/^\d+$/', $length) === 1) {
            return strlen($rest) >= (int) $length ? substr($rest, 0, (int) $length) : null;
        }
        return $closed ? $rest : null;
    }

    /** A chunked body decoded, or null while its last chunk has not arrived. */
    private static function dechunk(string $data): ?string
    {
        $out = '';
        $offset = 0;
        for (;;) {
            $eol = strpos($data, "\r\n", $offset);
            if ($eol === false) {
                return null;
            }
            $hex = trim(explode(';', substr($data, $offset, $eol - $offset))[0]);
            $size = preg_match('/^[0-9a-fA-F]{1,8}$/', $hex) === 1 ? hexdec($hex) : null;
            if (!is_int($size)) {
                throw new HttpFailure('a malformed chunked answer', false);
            }
            if ($size === 0) {
                return $out;
            }
            if (strlen($data) < $eol + 2 + $size + 2) {
                return null;
            }
            $out .= substr($data, $eol + 2, $size);
            $offset = $eol + 2 + $size + 2;
        }
    }
}
