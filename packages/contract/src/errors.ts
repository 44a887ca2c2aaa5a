// The API's error vocabulary: every stable error code and its HTTP status.
// The error a procedure throws to be answered in the envelope is apps/api's
// (src/contract/api-error.ts).
/**
 * Every stable error code the API can answer with, and its HTTP status:
 * spec section 7 first, then the transport-level codes (unknown route, wrong
 * method, a body too slow, too large or not JSON, a connection over the cap),
 * and the verifications extension's two (issue 22, docs/verifications.md).
 */
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
  origin_not_allowed: 403,
  message_not_found: 404,
  verification_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_key_reused: 409,
  verification_not_pending: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  daily_limit_reached: 429,
  internal_error: 500,
  provider_unavailable: 503,
  too_many_connections: 503,
} as const;

export type ApiErrorCode = keyof typeof ERROR_STATUS;
export const API_ERROR_CODES = Object.keys(ERROR_STATUS) as [ApiErrorCode, ...ApiErrorCode[]];
