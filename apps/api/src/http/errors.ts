// The edge's error answers: the domain's message and test-key refusals as
// the caller hears them, the answer while the database does not answer, the
// error envelope, and the mapping from anything else a procedure can throw to
// a stable code. The codes, statuses and sentences are the contract room's
// (@sms/contract errors.ts, contract/wording.ts).

import type { ApiErrorCode, Meta } from "@sms/contract";
import { isDatabaseUnavailable } from "@sms/db";
import {
  type CheckVerificationResult,
  type CreateTestKeyResult,
  formatTimestamp,
  type SendMessageResult,
  type StartVerificationResult,
} from "@sms/domain";
import { TRPCError } from "@trpc/server";
import {
  ApiError,
  DATABASE_RETRY_AFTER_SECONDS,
  PROVIDER_RETRY_AFTER_SECONDS,
} from "../contract/api-error.ts";
import { retryHeaders } from "../contract/rate-limit-headers.ts";
import {
  INTERNAL_ERROR_MESSAGE,
  REFUSAL_MESSAGES,
  verificationNotPendingMessage,
} from "../contract/wording.ts";

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
      if (result.subject === "credit_cap")
        return new ApiError(
          "daily_limit_reached",
          `This project's daily credit cap of ${result.limit.limit} credits is reached; nothing was sent. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC), or raise the cap in the dashboard.`,
          retryHeaders(result.limit, now),
        );
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

/** POST /v1/verifications: the recipient's start limits, or the message path's refusal. */
export function startVerificationRefusal(
  result: Extract<StartVerificationResult, { ok: false }>,
  now: Date,
): ApiError {
  if (!("subject" in result) || result.subject !== "verification_recipient") return sendRefusal(result, now);
  const headers = retryHeaders(result.limit, now);
  if (result.code === "rate_limited")
    return new ApiError("rate_limited", REFUSAL_MESSAGES.verification_recipient_rate_limited, headers);
  return new ApiError(
    "daily_limit_reached",
    `The ${result.limit.limit} live verifications a day for this number are used up; nothing was sent. Do not retry before ${formatTimestamp(result.limit.resetAt)} (midnight UTC).`,
    headers,
  );
}

/** POST /v1/verifications/{id}/check and GET /v1/verifications/{id}: a refusal as the caller hears it. */
export function verificationRefusal(
  result: Extract<CheckVerificationResult, { ok: false }> | { ok: false; code: "verification_not_found" },
  now: Date,
): ApiError {
  if ("subject" in result)
    return new ApiError(
      "rate_limited",
      REFUSAL_MESSAGES.verification_checks_rate_limited,
      retryHeaders(result.limit, now),
    );
  if (result.code === "verification_not_found")
    return new ApiError("verification_not_found", REFUSAL_MESSAGES.verification_not_found);
  return new ApiError("verification_not_pending", verificationNotPendingMessage(result.status));
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
