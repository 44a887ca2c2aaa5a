// The edge's one error module: every stable error code and its HTTP status,
// the ApiError procedures throw, the wording of every refusal the domain
// returns as a code and data, the error envelope, and the mapping from
// anything else a procedure can throw to a stable code.
import {
  type CreateTestKeyResult,
  formatTimestamp,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  type SendMessageResult,
} from "@sms/domain";
import { isDatabaseUnavailable } from "@sms/db";
import { TRPCError } from "@trpc/server";
import type { Meta } from "../trpc/trpc.ts";
import { retryHeaders } from "./rate-limit-headers.ts";

/**
 * Every stable error code the API can answer with, and its HTTP status:
 * spec section 7 first, then the transport-level codes (unknown route, wrong
 * method, oversized or non-JSON body).
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

/** An error the caller is meant to see: thrown by procedures and the gateway only. */
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

/** What a caller is told for each refusal; a sentence that says what to change. */
export const REFUSAL_MESSAGES = {
  unauthorized: "Missing API key: send 'Authorization: Bearer <API_KEY>'.",
  invalid_api_key: "The API key is invalid. Check it, or get a new one.",
  project_suspended: "This project is suspended and cannot send or read messages. Contact support.",
  idempotency_key_required: `Send an 'Idempotency-Key' header (1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters, unique per logical send).`,
  idempotency_key_too_long: `The 'Idempotency-Key' header must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
  message_not_found: "No message with this id exists in this project.",
  idempotency_key_reused:
    "This Idempotency-Key was already used with a different request. Use a new key for a new message.",
  first_request_unresolved:
    "The first request with this Idempotency-Key has not finished; it may have been interrupted, and its SMS may or may not have been sent. Retry after the time in Retry-After with the same Idempotency-Key; never send it again under a new key.",
  insufficient_credits:
    "This project has too few credits for this message; nothing was sent. Add credits on the dashboard.",
  provider_unavailable:
    "The SMS provider could not be reached; nothing was sent. Retry with the same Idempotency-Key.",
  messages_rate_limited:
    "Too many messages this minute; nothing was sent. Retry shortly with the same Idempotency-Key.",
  recipient_rate_limited:
    "Too many messages to this recipient; nothing was sent. Retry after the time in Retry-After with the same Idempotency-Key.",
  database_unavailable:
    "The service cannot reach its database right now; retry after the time in Retry-After. On POST /v1/messages reuse the same Idempotency-Key.",
  test_keys_rate_limited:
    "Too many test keys requested from this address this minute. Wait a minute and retry.",
} as const;

/** POST /v1/messages: the domain's refusal as the caller hears it. */
export function sendRefusal(result: Extract<SendMessageResult, { ok: false }>, now: Date): ApiError {
  switch (result.code) {
    case "invalid_template":
    case "invalid_variables":
      return new ApiError(result.code, result.detail);
    case "idempotency_key_reused":
      return new ApiError("idempotency_key_reused", REFUSAL_MESSAGES.idempotency_key_reused);
    case "first_request_unresolved":
      // Rare: the first request crashed, or could not record its answer. A
      // 5xx, so clients retry (with the same key); never 409, which means
      // "a different request" and may make a client send under a new key.
      return new ApiError("internal_error", REFUSAL_MESSAGES.first_request_unresolved, {
        "Retry-After": String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))),
      });
    case "rate_limited":
      return new ApiError(
        "rate_limited",
        result.subject === "recipient"
          ? REFUSAL_MESSAGES.recipient_rate_limited
          : REFUSAL_MESSAGES.messages_rate_limited,
        retryHeaders(result.limit, now),
      );
    case "daily_limit_reached":
      return new ApiError(
        "daily_limit_reached",
        `The free tier's ${result.limit.limit} live segments for today are used up; nothing was sent. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC), or add paid credits.`,
        retryHeaders(result.limit, now),
      );
    case "insufficient_credits":
      return new ApiError("insufficient_credits", REFUSAL_MESSAGES.insufficient_credits);
    case "provider_unavailable":
      return new ApiError("provider_unavailable", REFUSAL_MESSAGES.provider_unavailable);
  }
}

/** POST /v1/test-keys: a limit's refusal as the caller hears it. */
export function testKeyRefusal(result: Extract<CreateTestKeyResult, { ok: false }>, now: Date): ApiError {
  const headers = retryHeaders(result.limit, now);
  if (result.code === "rate_limited") {
    return new ApiError("rate_limited", REFUSAL_MESSAGES.test_keys_rate_limited, headers);
  }
  return new ApiError(
    "daily_limit_reached",
    `The daily allowance of instant test keys is used up. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC). Existing keys keep working.`,
    headers,
  );
}

/** Seconds a caller is asked to wait while the database does not answer (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer while the database does not answer (down, frozen, or not yet
 * reached since start-up): `500 internal_error` with `Retry-After`. See
 * docs/api-behaviour.md for why 500 and not 503 (which callers read as
 * "the SMS provider was not reached, nothing was sent").
 */
export function databaseUnavailableError(): ApiError {
  return new ApiError("internal_error", REFUSAL_MESSAGES.database_unavailable, {
    "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS),
  });
}

export const INTERNAL_ERROR_MESSAGE =
  "An unexpected error occurred. Retry cautiously; on POST /v1/messages reuse the same Idempotency-Key.";

export function errorResponse(error: ApiError, requestId: string): Response {
  const body = { error: { code: error.code, message: error.message, request_id: requestId } };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { ...error.headers, "Content-Type": "application/json", "X-Request-Id": requestId },
  });
}

/** What the gateway noticed about a JSON body it could not hand on as an object. */
export type BodyError = "malformed_json" | "empty" | "not_object";

type Issue = { code: string; path: PropertyKey[]; message: string; keys?: string[] };

function describeIssue(issue: Issue): string {
  const field = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys" && issue.keys) {
    const where = field ? ` in ${field}` : "";
    return `Unexpected field${issue.keys.length > 1 ? "s" : ""}${where}: ${issue.keys.join(", ")}. Remove ${issue.keys.length > 1 ? "them" : "it"}.`;
  }
  if (!field) return "The request body must be a JSON object.";
  return `${field}: ${issue.message}.`;
}

/** Maps a zod input failure to one stable code, honouring the route's precedence. */
function fromValidation(issues: Issue[], meta: Meta | undefined, bodyError: BodyError | undefined): ApiError {
  if (bodyError === "malformed_json")
    return new ApiError("invalid_request", "The request body is not valid JSON.");
  if (bodyError === "empty")
    return new ApiError("invalid_request", "The request body is required: send a JSON object.");
  if (bodyError === "not_object")
    return new ApiError("invalid_request", "The request body must be a JSON object.");
  const precedence = meta?.inputErrors ?? [];
  const fieldOf = (issue: Issue) => (issue.path.length > 0 ? String(issue.path[0]) : "");
  const codeOf = (issue: Issue): ApiErrorCode =>
    issue.code === "unrecognized_keys"
      ? "invalid_request"
      : (precedence.find(([field]) => field === fieldOf(issue))?.[1] ?? "invalid_request");
  const rank = (issue: Issue) => {
    const code = codeOf(issue);
    if (code === "invalid_request") return -1;
    return precedence.findIndex(([field]) => field === fieldOf(issue));
  };
  const first = [...issues].sort((a, b) => rank(a) - rank(b))[0];
  if (!first) return new ApiError("invalid_request", "The request is invalid.");
  return new ApiError(codeOf(first), describeIssue(first));
}

/**
 * Turns whatever a procedure failed with into an ApiError. Unexpected errors
 * become a 500 whose message reveals nothing.
 */
export function toApiError(
  error: unknown,
  meta: Meta | undefined,
  bodyError?: BodyError,
  bodyProblem?: ApiError,
): ApiError {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof ApiError) return cause;
  if (isDatabaseUnavailable(cause)) return databaseUnavailableError();
  if (error instanceof TRPCError) {
    if (error.code === "BAD_REQUEST" && cause && (cause as Error).name === "ZodError") {
      // The body was never read (wrong content type, too large): say so.
      if (bodyProblem) return bodyProblem;
      return fromValidation((cause as unknown as { issues: Issue[] }).issues, meta, bodyError);
    }
    if (error.code === "PARSE_ERROR")
      return new ApiError("invalid_request", "The request body is not valid JSON.");
    if (error.code === "PAYLOAD_TOO_LARGE")
      return new ApiError("payload_too_large", "The request body is too large.");
  }
  return new ApiError("internal_error", INTERNAL_ERROR_MESSAGE);
}

export function isUnexpected(error: unknown): boolean {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof ApiError) return cause.code === "internal_error";
  if (error instanceof TRPCError)
    return !["BAD_REQUEST", "PARSE_ERROR", "PAYLOAD_TOO_LARGE"].includes(error.code);
  return true;
}
