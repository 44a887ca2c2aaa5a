<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * @internal Reads one field of a decoded JSON object for the value classes;
 * a missing or mistyped field is an \UnexpectedValueException (the client
 * turns it into an `unexpected_response` SmsApiException).
 */
final class Fields
{
    /** @param array<mixed> $object */
    public static function string(array $object, string $name): string
    {
        $value = $object[$name] ?? null;
        if (!is_string($value)) {
            throw new \UnexpectedValueException("field {$name}: expected a string");
        }
        return $value;
    }

    /** @param array<mixed> $object */
    public static function int(array $object, string $name): int
    {
        $value = $object[$name] ?? null;
        if (!is_int($value)) {
            throw new \UnexpectedValueException("field {$name}: expected an integer");
        }
        return $value;
    }

    /** @param array<mixed> $object */
    public static function nullableInt(array $object, string $name): ?int
    {
        if (!array_key_exists($name, $object)) {
            throw new \UnexpectedValueException("field {$name}: missing");
        }
        $value = $object[$name];
        if ($value !== null && !is_int($value)) {
            throw new \UnexpectedValueException("field {$name}: expected an integer or null");
        }
        return $value;
    }

    /**
     * @param array<mixed> $object
     * @return array<mixed>|null
     */
    public static function nullableObject(array $object, string $name): ?array
    {
        if (!array_key_exists($name, $object)) {
            throw new \UnexpectedValueException("field {$name}: missing");
        }
        $value = $object[$name];
        if ($value !== null && !is_array($value)) {
            throw new \UnexpectedValueException("field {$name}: expected an object or null");
        }
        return $value;
    }
}
