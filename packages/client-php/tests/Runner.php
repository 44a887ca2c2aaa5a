<?php

// A tiny test runner (no PHPUnit offline): test() registers, run() runs them
// in order and prints TAP-like lines; the process exits 1 when a test failed
// or none ran, so a wrapper (apps/api/test/clients/client-php.e2e.test.ts) fails too.

declare(strict_types=1);

namespace SmsApi\Tests;

final class AssertionFailed extends \Exception
{
}

final class Runner
{
    /** @var list<array{string, \Closure}> */
    private static array $tests = [];

    public static function test(string $name, \Closure $body): void
    {
        self::$tests[] = [$name, $body];
    }

    /** Runs every test (or those whose name contains $filter) and returns the exit code. */
    public static function run(?string $filter = null): int
    {
        $passed = 0;
        $failed = 0;
        foreach (self::$tests as [$name, $body]) {
            if ($filter !== null && $filter !== '' && !str_contains($name, $filter)) {
                continue;
            }
            try {
                $body();
                $passed++;
                echo "ok - {$name}\n";
            } catch (\Throwable $error) {
                $failed++;
                echo "not ok - {$name}\n";
                echo '  # ' . get_class($error) . ': ' . str_replace("\n", "\n  # ", $error->getMessage()) . "\n";
                echo '  # at ' . self::where($error) . "\n";
            }
        }
        echo "# {$passed} passed, {$failed} failed\n";
        return $failed === 0 && $passed > 0 ? 0 : 1;
    }

    private static function where(\Throwable $error): string
    {
        foreach ($error->getTrace() as $frame) {
            if (isset($frame['file']) && !str_ends_with($frame['file'], 'Runner.php')) {
                return $frame['file'] . ':' . ($frame['line'] ?? 0);
            }
        }
        return $error->getFile() . ':' . $error->getLine();
    }
}

function fail(string $message): never
{
    throw new AssertionFailed($message);
}

function assertSame(mixed $expected, mixed $actual, string $what = ''): void
{
    if ($expected !== $actual) {
        fail(($what !== '' ? "{$what}: " : '') . 'expected ' . var_export($expected, true) . ', got ' . var_export($actual, true));
    }
}

function assertTrue(bool $condition, string $what): void
{
    if (!$condition) {
        fail("expected true: {$what}");
    }
}

function assertMatches(string $pattern, ?string $actual, string $what = ''): void
{
    if ($actual === null || preg_match($pattern, $actual) !== 1) {
        fail(($what !== '' ? "{$what}: " : '') . var_export($actual, true) . " does not match {$pattern}");
    }
}

/**
 * Runs $body, which must throw a $class; returns it.
 *
 * @template T of \Throwable
 * @param class-string<T> $class
 * @return T
 */
function assertThrows(string $class, \Closure $body): \Throwable
{
    try {
        $body();
    } catch (\Throwable $error) {
        if ($error instanceof $class) {
            return $error;
        }
        fail("expected {$class}, got " . get_class($error) . ': ' . $error->getMessage());
    }
    fail("expected {$class}, nothing was thrown");
}
