// The edge's one error module: every stable error code and its HTTP status,
// the ApiError procedures throw, the wording of every refusal the domain
// returns as a code and data, the error envelope, and the mapping from
// anything else a procedure can throw to a stable code.
import {
  type CreateTestKeyResult,
  MAX_CREDIT_GRANT,
  MAX_REASON_LENGTH,
  type OperatorRefusal,
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
 * method, a body too slow, too large or not JSON, a connection over the cap).
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
  request_timeout: 408,
  idempotency_key_reused: 409,
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
    "Too many messages to this recipient this minute; nothing was sent. Retry after the time in Retry-After with the same Idempotency-Key.",
  database_unavailable:
    "The service cannot reach its database right now; retry after the time in Retry-After. On POST /v1/messages reuse the same Idempotency-Key.",
  test_keys_rate_limited:
    "Too many test keys requested from this address this minute. Wait a minute and retry.",
  too_many_connections: "The service has too many open connections. Retry shortly.",
  request_timeout: "The request body did not arrive in time. Send it in one go and retry.",
} as const;

export const INTERNAL_ERROR_MESSAGE =
  "An unexpected error occurred. Retry cautiously; on POST /v1/messages reuse the same Idempotency-Key.";

/**
 * For the reference's error guide and the OpenAPI document: when each code is
 * answered, what the caller does about it, and a message it really carries
 * (the validation codes' messages name the field or variable; these are real
 * instances). Typed by ERROR_STATUS, so a new code needs its entry here.
 */
export const ERROR_GUIDE: {
  readonly [C in ApiErrorCode]: { when: string; action: string; example: string };
} = {
  invalid_request: {
    when: "The body is not JSON, not an object, has a field other than `to`, `template`, `variables`, `locale`, or `locale` is not `ka`/`en`; an unexpected query parameter; an `Idempotency-Key` over 200 characters.",
    action: "Fix the request as the message says; do not retry it unchanged.",
    example: "Unexpected field: text. Remove it.",
  },
  invalid_recipient: {
    when: "`to` is missing or not exactly `+9955` followed by eight digits.",
    action: "Send the number as `+9955XXXXXXXX`: no spaces, no other country. Numbers are never normalised.",
    example:
      "to: must be a string: +9955 followed by exactly eight digits (e.g. +995555123456), no spaces; numbers are never normalised.",
  },
  invalid_template: {
    when: "`template` is missing or not one of the built-in template ids.",
    action: "Use `verification_code`, `login_code` or `password_reset_code`.",
    example: "template: must be one of: verification_code, login_code, password_reset_code.",
  },
  invalid_variables: {
    when: "A variable is missing, unexpected, not a string, of the wrong shape, or looks like a link or a phone number.",
    action: "Send exactly the template's variables as strings; the message names the variable.",
    example:
      'Variable `minutes` is missing: template `password_reset_code` takes exactly code, minutes, e.g. {"code":"482913","minutes":"15"}.',
  },
  idempotency_key_required: {
    when: "`POST /v1/messages` without an `Idempotency-Key` header (or an empty one).",
    action: "Send a new unique key per logical message (a UUID), and reuse it only to retry that message.",
    example: REFUSAL_MESSAGES.idempotency_key_required,
  },
  unauthorized: {
    when: "No `Authorization` header, or `Bearer` with no key.",
    action: "Send `Authorization: Bearer sk_test_…` (or `sk_live_…`).",
    example: REFUSAL_MESSAGES.unauthorized,
  },
  invalid_api_key: {
    when: "The key is malformed, unknown or revoked (or the scheme is not `Bearer`).",
    action: "Check the key; get a new test key from `POST /v1/test-keys`, or a live key from the dashboard.",
    example: REFUSAL_MESSAGES.invalid_api_key,
  },
  insufficient_credits: {
    when: "A live key's project has fewer credits than the message's segments. Nothing was sent.",
    action: "Add credits on the dashboard, then retry with the same `Idempotency-Key`.",
    example: REFUSAL_MESSAGES.insufficient_credits,
  },
  project_suspended: {
    when: "The key is valid but its project is suspended.",
    action: "Contact support; retrying does not help.",
    example: REFUSAL_MESSAGES.project_suspended,
  },
  message_not_found: {
    when: "No message with this id in the key's project (absent and another project's look the same).",
    action: "Check the id, and that you read with a key of the project that sent it.",
    example: REFUSAL_MESSAGES.message_not_found,
  },
  route_not_found: {
    when: "Nothing is served at this path.",
    action: "Check the base URL and the path (`/v1/messages`, not `/messages`).",
    example: "No route GET /v1/message. See /docs for the API reference.",
  },
  method_not_allowed: {
    when: "The path exists but not with this method; `Allow` lists the methods that do.",
    action: "Use a method from the `Allow` header.",
    example: "DELETE is not allowed here. Allowed: POST.",
  },
  idempotency_key_reused: {
    when: "The `Idempotency-Key` was used in the last 24 hours with a different body, or its first request is still in progress.",
    action:
      "For a new message use a new key. If the message says “in progress”, retry shortly with the same key.",
    example: REFUSAL_MESSAGES.idempotency_key_reused,
  },
  payload_too_large: {
    when: "The body is larger than the service's limit (16 KiB by default).",
    action: "Send only the documented fields.",
    example: "The request body is larger than 16384 bytes.",
  },
  request_timeout: {
    when: "The request body did not arrive within `HTTP_BODY_TIMEOUT_SECONDS` (30 s by default); the connection is then closed.",
    action:
      "Send the whole body at once, on a new connection; on `POST /v1/messages` retry with the same Idempotency-Key.",
    example: REFUSAL_MESSAGES.request_timeout,
  },
  unsupported_media_type: {
    when: "`POST /v1/messages` with a `Content-Type` that is not JSON.",
    action: "Send `Content-Type: application/json`.",
    example: "Send the request body as JSON with 'Content-Type: application/json'.",
  },
  rate_limited: {
    when: "Too many requests this minute (messages per project, test keys per address). Nothing was sent.",
    action: "Wait `Retry-After` seconds, then retry with the same `Idempotency-Key`.",
    example: REFUSAL_MESSAGES.messages_rate_limited,
  },
  daily_limit_reached: {
    when: "The free tier's live segments for today, or today's instant test keys, are used up. Nothing was sent.",
    action:
      "Do not retry before the reset time in the message (midnight UTC); add paid credits to lift the free-tier limit.",
    example:
      "The free tier's 20 live segments for today are used up; nothing was sent. Do not retry before 2026-11-23T00:00:00Z (midnight UTC), or add paid credits.",
  },
  internal_error: {
    when: "An unexpected error in the service.",
    action:
      "Retry cautiously with backoff; on `POST /v1/messages` reuse the same `Idempotency-Key`, so a retry never sends twice. Quote `request_id` when asking for help.",
    example: INTERNAL_ERROR_MESSAGE,
  },
  provider_unavailable: {
    when: "The SMS provider could not be reached. Nothing was sent (test mode: `+995500000002`).",
    action: "Retry with the same `Idempotency-Key`; it is safe.",
    example: REFUSAL_MESSAGES.provider_unavailable,
  },
  too_many_connections: {
    when: "The instance already holds `MAX_CONNECTIONS` open connections; answered on the new connection, which is then closed.",
    action:
      "Retry after `Retry-After` (1 s), and reuse keep-alive connections instead of opening one per request.",
    example: REFUSAL_MESSAGES.too_many_connections,
  },
};

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
        result.subject === "recipient"
          ? `This project's ${result.limit.limit} live messages to this recipient for today are used up; nothing was sent. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC).`
          : `The free tier's ${result.limit.limit} live segments for today are used up; nothing was sent. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC), or add paid credits.`,
        retryHeaders(result.limit, now),
      );
    case "insufficient_credits":
      return new ApiError("insufficient_credits", REFUSAL_MESSAGES.insufficient_credits);
    case "provider_unavailable":
      return new ApiError("provider_unavailable", REFUSAL_MESSAGES.provider_unavailable, {
        "Retry-After": String(PROVIDER_RETRY_AFTER_SECONDS),
      });
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

/** An operator action's refusal as one sentence, for the command-line tool (the dashboard's wording: routers/refusals.ts). */
export function operatorRefusalText(refusal: OperatorRefusal): string {
  switch (refusal.code) {
    case "invalid_input":
      return OPERATOR_INPUT_RULES[refusal.field];
    case "whole_key_given":
      return "That is a whole API key: never paste one into a command. Use its prefix, the first 12 characters.";
    case "project_not_found":
      return `No project ${refusal.projectId}.`;
    case "project_not_claimed":
      return `Project ${refusal.projectId} has not been claimed: live keys and paid credits are only for projects a human has claimed in the browser.`;
    case "project_suspended":
      return `Project ${refusal.projectId} is suspended: reinstate it first.`;
    case "key_not_found":
      return "No such API key.";
    case "key_ambiguous":
      return `Several keys have that prefix (${refusal.keyIds.join(", ")}): revoke by key id instead.`;
    case "reference_conflict":
      return `Reference ${refusal.reference} was already used for a grant of ${refusal.earlierAmount} credits to this project; nothing changed.`;
    case "brand_not_found":
      if (refusal.approvedIds.length > 1)
        return `Several approved brands are named "${refusal.name}" (ids ${refusal.approvedIds.join(", ")}): pass --brand-id.`;
      if (refusal.brandId !== null && refusal.providerName !== null)
        return `Brand ${refusal.brandId} is named "${refusal.providerName}" at the provider, not "${refusal.name}".`;
      if (refusal.brandId !== null) return `The provider has no brand with id ${refusal.brandId}.`;
      return `The provider has no brand named "${refusal.name}".`;
    case "brand_not_approved":
      return `Brand "${refusal.providerName}" (id ${refusal.brandId}) is not approved at the provider yet.`;
    case "brand_check_failed":
      return `The provider's brand list could not be read (${refusal.reason}); nothing changed.`;
  }
}

/** What each operator input must be. */
export const OPERATOR_INPUT_RULES: Record<
  Extract<OperatorRefusal, { code: "invalid_input" }>["field"],
  string
> = {
  actor: "The actor must be 1–128 characters: letters, digits and . _ @ + : -.",
  project_id: "The project id must look like prj_ followed by 26 characters.",
  key: "Name the key by exactly one of: its id (key_…) or its prefix (sk_live_XXXX).",
  key_id: "The key id must look like key_ followed by 26 characters.",
  key_prefix: "The key prefix must be sk_test_ or sk_live_ followed by 4 characters.",
  reason: `The reason must be 1–${MAX_REASON_LENGTH} characters.`,
  amount: `The amount must be a whole number from 1 to ${MAX_CREDIT_GRANT}.`,
  reference: "The reference must be 1–200 printable ASCII characters, not starting or ending with a space.",
  sender_name:
    "The sender name must be 1–11 characters (letters, digits, space . & _ -), start with a letter or digit and contain a letter.",
  brand_id:
    "The brand id must be a positive whole number (and is needed when no live provider credentials are configured, since the brand cannot be looked up).",
  batch_size: "--batch-size must be 1 to 10000.",
  query: "Search by a project id (prj_…), a key prefix (sk_live_XXXX) or an e-mail address.",
};

/** Seconds a caller is asked to wait while the database does not answer (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** 503 provider_unavailable: nothing was sent; a retry with the same key is safe after this many seconds. */
export const PROVIDER_RETRY_AFTER_SECONDS = 5;

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
