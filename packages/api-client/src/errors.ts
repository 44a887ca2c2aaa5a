// The client's errors: one base class with what every failure can tell
// (code, HTTP status, request id, Retry-After, RateLimit-*, attempts made),
// and one subclass per kind of failure, so that callers can branch on the
// class or on `code`.
import type { components } from "./generated/openapi.ts";

/** Every stable error code the API answers with. */
export type ApiErrorCode = components["schemas"]["Error"]["error"]["code"];

/** The `RateLimit-*` headers of an answer: the limit nearest to exhaustion. */
export type RateLimit = {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
};

/** The codes of failures that are not the API's answers. */
export type ClientErrorCode = "unexpected_response" | "timeout" | "network_error";

type ErrorFields = {
  code: ApiErrorCode | ClientErrorCode;
  message: string;
  status: number | null;
  requestId: string | null;
  retryAfter: number | null;
  rateLimit: RateLimit | null;
  attempts: number;
  cause?: unknown;
};

/** Any failure of a call: an error answer of the API, a timeout, or a network failure. */
export class SmsError extends Error {
  override name = "SmsError";
  /** The API's stable code (`invalid_recipient`, …), or `unexpected_response`, `timeout`, `network_error`. */
  readonly code: ApiErrorCode | ClientErrorCode;
  /** The HTTP status of the last answer; null when none came (timeout, network). */
  readonly status: number | null;
  /** The `X-Request-Id` of the last answer: quote it when asking for help. */
  readonly requestId: string | null;
  /** `Retry-After` of the last answer, in seconds (429, 503, some 500s). */
  readonly retryAfter: number | null;
  /** The `RateLimit-*` headers of the last answer, when it had them. */
  readonly rateLimit: RateLimit | null;
  /** How many requests the call made before it gave up (1 when it was not retried). */
  readonly attempts: number;

  constructor(fields: ErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
    this.rateLimit = fields.rateLimit;
    this.attempts = fields.attempts;
  }
}

/** An error answer of the API (`{"error":{"code","message","request_id"}}`), or an answer that is not the API's. */
export class SmsApiError extends SmsError {
  override name = "SmsApiError";
  declare readonly code: ApiErrorCode | "unexpected_response";
  declare readonly status: number;
  /** `Retry-After` in seconds: the same as `retryAfter`. */
  readonly retryAfterSeconds: number | null;

  constructor(fields: ErrorFields & { code: ApiErrorCode | "unexpected_response"; status: number }) {
    super(fields);
    this.retryAfterSeconds = fields.retryAfter;
  }
}

/** No answer within the request timeout (`timeoutMs`), on the last attempt. */
export class SmsTimeoutError extends SmsError {
  override name = "SmsTimeoutError";
  declare readonly code: "timeout";
  declare readonly status: null;
}

/** The request could not be made or its answer not read (DNS, refused, reset). `cause` is fetch's error. */
export class SmsNetworkError extends SmsError {
  override name = "SmsNetworkError";
  declare readonly code: "network_error";
  declare readonly status: null;
}

export function isSmsApiError(error: unknown): error is SmsApiError {
  return error instanceof SmsApiError;
}
