<?php

declare(strict_types=1);

namespace SmsApi;

/**
 * An error answer of the API (`{"error":{"code","message","request_id"}}`),
 * or an answer that is not the API's (`unexpected_response`, e.g. a proxy's
 * HTML page). `$status` is always set.
 */
final class SmsApiException extends SmsException
{
}
