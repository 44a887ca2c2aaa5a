<?php

// The scripted stub server: PHP's built-in web server on a free loopback port
// with tests/stub/router.php. script() sets the answers, in order, for the
// next requests; requests() returns what it received.

declare(strict_types=1);

namespace SmsApi\Tests;

final class StubServer
{
    /** @var resource */
    private $process;
    private string $dir;
    public readonly string $url;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/sms-php-stub-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $port = freePort();
        $this->url = "http://127.0.0.1:{$port}";
        $env = getenv() + [];
        $env['SMS_STUB_DIR'] = $this->dir;
        $process = proc_open(
            [PHP_BINARY, '-n', '-S', "127.0.0.1:{$port}", __DIR__ . '/stub/router.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', "{$this->dir}/server.log", 'a'], 2 => ['file', "{$this->dir}/server.log", 'a']],
            $pipes,
            null,
            $env,
        );
        if ($process === false) {
            throw new \RuntimeException('cannot start php -S');
        }
        $this->process = $process;
        $this->script([]);
        // Ready once it accepts a connection (bounded: 200 tries).
        for ($try = 0; $try < 200; $try++) {
            $socket = @stream_socket_client("tcp://127.0.0.1:{$port}", $errno, $errstr, 1.0);
            if ($socket !== false) {
                fclose($socket);
                return;
            }
            usleep(25_000);
        }
        $this->stop();
        throw new \RuntimeException('php -S did not start: ' . @file_get_contents("{$this->dir}/server.log"));
    }

    /**
     * The answers to the next requests, in order: ['status' => 201, 'headers' => [...], 'body' => array|string].
     *
     * @param list<array<string, mixed>> $answers
     */
    public function script(array $answers): void
    {
        file_put_contents("{$this->dir}/script.json", json_encode($answers, JSON_UNESCAPED_SLASHES));
        file_put_contents("{$this->dir}/index", '0');
        file_put_contents("{$this->dir}/requests.jsonl", '');
    }

    /** @return list<array{method: string, path: string, headers: array<string, string>, body: string}> */
    public function requests(): array
    {
        $lines = array_filter(explode("\n", (string) file_get_contents("{$this->dir}/requests.jsonl")));
        return array_values(array_map(static fn (string $line): array => json_decode($line, true), $lines));
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob("{$this->dir}/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }
}

/** A loopback port nothing listens on (the kernel's pick, released). */
function freePort(): int
{
    $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
    if ($server === false) {
        throw new \RuntimeException("no free port: {$errstr}");
    }
    $name = (string) stream_socket_get_name($server, false);
    fclose($server);
    return (int) substr($name, strrpos($name, ':') + 1);
}
