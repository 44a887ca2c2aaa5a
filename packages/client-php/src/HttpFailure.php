<?php

declare(strict_types=1);

namespace SmsApi;

/** @internal No whole answer: the deadline passed ($timedOut), or the connection failed. */
final class HttpFailure extends \RuntimeException
{
    public function __construct(string $message, public readonly bool $timedOut)
    {
        parent::__construct($message);
    }
}
