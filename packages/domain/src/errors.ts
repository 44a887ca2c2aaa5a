// The one error table: every stable error code the API can answer with, and
// its HTTP status. Spec section 7 codes first, then the transport-level codes
// the gateway needs (unknown route, wrong method, oversized or non-JSON body).

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_recipient: 400,
  invalid_template: 400,
  invalid_variables: 400,
  idempotency_key_required: 400,
  unauthorized: 401,
  invalid_api_key: 401,
  insufficient_credits: 402,
  project_suspended: 403,
  message_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  idempotency_key_reused: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  daily_limit_reached: 429,
  internal_error: 500,
  provider_unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof ERROR_STATUS;
export const API_ERROR_CODES = Object.keys(ERROR_STATUS) as [ApiErrorCode, ...ApiErrorCode[]];

/** Codes that may appear in a message's `error` field (spec 2.2). */
export const MESSAGE_ERROR_CODES = [
  "provider_rejected",
  "sender_not_allowed",
  "invalid_message",
  "invalid_recipient",
  "internal_error",
  "provider_unavailable",
] as const;
export type MessageErrorCode = (typeof MESSAGE_ERROR_CODES)[number];

/**
 * An error the caller is meant to see. Thrown only at the edge (procedures and
 * the gateway); domain functions return failures as values.
 */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ApiErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }
}
