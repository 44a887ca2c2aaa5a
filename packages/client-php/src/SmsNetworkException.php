<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * The request could not be made or its answer not read (refused, reset, a
 * name that does not resolve, a broken answer): code `network_error`, status null.
 */
final class SmsNetworkException extends SmsException
{
}
