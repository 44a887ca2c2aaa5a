// What a caller of the REST API is told: the sentence for each refusal, the
// message of an unexpected error, and the guide entry of every code (the
// reference's error guide and the OpenAPI document). A leaf: imports nothing
// of the app but the rest of the contract room.
import type { ApiErrorCode } from "@sms/contract";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "@sms/contract";

/** What a caller is told for each refusal; a sentence that says what to change. */
export const REFUSAL_MESSAGES = {
  unauthorized: "Missing API key: send 'Authorization: Bearer <API_KEY>'.",
  invalid_api_key: "The API key is invalid. Check it, or get a new one.",
  project_suspended: "This project is suspended and cannot send or read messages. Contact support.",
  idempotency_key_required: `Send an 'Idempotency-Key' header (1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters, unique per logical send).`,
  idempotency_key_too_long: `The 'Idempotency-Key' header must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
  message_not_found: "No message with this id exists in this project.",
  verification_not_found: "No verification with this id exists in this project.",
  verification_recipient_rate_limited:
    "Too many verifications started for this number this minute; nothing was sent. Retry after the time in Retry-After with the same Idempotency-Key.",
  verification_checks_rate_limited:
    "Too many verification checks this minute from this project or this address; nothing was checked or counted. Retry after the time in Retry-After.",
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
  authentication_rate_limited:
    "This API key was refused: too many failed authentications came from this address this minute, and until it ends only keys already seen working here are accepted. Check the key (it may be wrong or revoked) before retrying after the time in Retry-After.",
  request_timeout: "The request body did not arrive in time. Send it in one go and retry.",
  host_missing: "The request has no 'Host' header; HTTP/1.1 requires one (RFC 9112 section 3.2).",
  malformed_chunked_body: "The request body's chunked framing is malformed (RFC 9112 section 7.1).",
} as const;

/** 409 verification_not_pending: the sentence names the verification's status. */
export function verificationNotPendingMessage(status: string): string {
  if (status === "approved")
    return "This verification is already approved, so it can no longer be checked, whatever the code; nothing was counted. Do not let the user in on this check: read its status with GET, or start a new verification.";
  return `This verification is ${status}, so it can no longer be checked. Start a new verification.`;
}

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
  origin_not_allowed: {
    when: "`/mcp` only (an extension): the request came from a browser page of another origin, or named a `Host` that is not the service's (DNS rebinding). Programs that send no `Origin` are not affected.",
    action:
      "Call `/mcp` from your agent or server, not from a web page; an operator can allow an origin with `MCP_ALLOWED_ORIGINS`.",
    example: "This origin may not call /mcp. Call it from your agent or server, not from a web page.",
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
  verification_not_found: {
    when: "No verification with this id in the key's project (absent and another project's look the same).",
    action: "Check the id, and that you check with a key of the project that started it.",
    example: REFUSAL_MESSAGES.verification_not_found,
  },
  verification_not_pending: {
    when: "A check of a verification that is no longer pending: expired, canceled (a newer one to the same number replaced it), out of attempts, its SMS failed, or approved and checked with a wrong code. The message names the status.",
    action:
      "Do not let the user in. Start a new verification (a new `Idempotency-Key`) if they still need a code.",
    example: verificationNotPendingMessage("expired"),
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
    when: "The `Idempotency-Key` was used in the last 24 hours with a different body (a request with the same body gets the first answer, waiting for it if it is still running).",
    action:
      "Do not retry: the same request gets the same answer. For a new message use a new key; to retry the first one, send its own body.",
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
    when: "Too many requests this minute (messages per project, test keys per address, failed authentications per address, live verifications per number). Nothing was sent.",
    action: "Wait `Retry-After` seconds, then retry with the same `Idempotency-Key`.",
    example: REFUSAL_MESSAGES.messages_rate_limited,
  },
  daily_limit_reached: {
    when: "The free tier's live segments for today, today's instant test keys, or today's live verifications for one number are used up. Nothing was sent.",
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
    when: "The instance holds `MAX_CONNECTIONS` open connections (or `MAX_CONNECTIONS_PER_PEER` from this address) and none is idle to make room; answered on the new connection, which is then closed.",
    action:
      "Retry after `Retry-After` (1 s), and reuse keep-alive connections instead of opening one per request.",
    example: REFUSAL_MESSAGES.too_many_connections,
  },
};
