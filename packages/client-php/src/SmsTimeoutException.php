<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * No whole answer within the request timeout on the last attempt (code
 * `timeout`, status null); also waitForFinalStatus() past its `maxWaitMs`.
 */
final class SmsTimeoutException extends SmsException
{
}
