// The one place that renders the error envelope, and the mapping from
// anything a procedure can throw to a stable error code.
import { TRPCError } from "@trpc/server";
import { ApiError, type ApiErrorCode } from "@sms/domain";
import type { Meta } from "../trpc/trpc.ts";

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
