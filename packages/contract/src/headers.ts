// Every response header the API documents, with its description and
// example: the OpenAPI document's header components, and the names a route's
// metadata may declare. A leaf: imports nothing of the app.

const integerHeader = (description: string, example: number) => ({
  description,
  schema: { type: "integer", minimum: 0 },
  example,
});

/** Every response header the API documents; `required` ones are always sent where declared. */
export const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description:
      "Identifier of this request (the same as `error.request_id`); quote it when asking for help.",
    required: true,
    schema: { type: "string" },
    example: "req_01m81b5h80dyb9cpnywpdjqhd4",
  },
  "Retry-After": integerHeader("Seconds to wait before retrying.", 42),
  "RateLimit-Limit": integerHeader(
    "Requests allowed in the current window of the limit nearest to exhaustion.",
    100,
  ),
  "RateLimit-Remaining": integerHeader("Requests left in that window.", 99),
  "RateLimit-Reset": integerHeader("Seconds until that window resets.", 42),
  "Live-Recipient-Limit": {
    description:
      "An extension of the contract, on test keys only: the per-number limits a live key meets (messages and " +
      "verification codes together), as `minute=N, day=M`. Test sends are never refused by them.",
    schema: { type: "string" },
    example: "minute=2, day=10",
  },
  "Live-Recipient-Remaining": {
    description:
      "An extension of the contract, on test keys only: what a live key would have left for this number after " +
      "this send (this project's test sends to it this minute and this UTC day counted), never below 0.",
    schema: { type: "string" },
    example: "minute=1, day=9",
  },
  "Idempotent-Replayed": {
    description: "`true`: this is the stored answer to an earlier request with the same `Idempotency-Key`.",
    required: true,
    schema: { type: "string", enum: ["true"] },
  },
  Allow: {
    description: "The methods this path does serve.",
    required: true,
    schema: { type: "string" },
    example: "POST",
  },
  ETag: {
    description:
      "An extension of the contract: a strong tag of this state of the resource (the body's bytes). Send it back in " +
      "`If-None-Match`.",
    required: true,
    schema: { type: "string" },
    example: '"3f1b0c9ad2e84b7f90a1c2d3e4f50617"',
  },
  "Preference-Applied": {
    description: "`wait=N`: the request's `Prefer: wait` was honoured, with N seconds (at most 30).",
    schema: { type: "string" },
    example: "wait=25",
  },
  "WWW-Authenticate": {
    description: "`Bearer` (absent on `project_suspended`).",
    schema: { type: "string" },
    example: "Bearer",
  },
} as const;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/**
 * The internal listener's protocol (http/internal.ts, internal-client.ts): tRPC
 * under this path, a project's API key in X-Api-Key (Authorization holds the
 * listener's token), and the operator an internal tool acts for in X-Operator
 * (the audit rows' actor; without it the operator's procedures are refused).
 */
export const TRPC_ENDPOINT = "/trpc";
export const INTERNAL_API_KEY_HEADER = "X-Api-Key";
export const INTERNAL_OPERATOR_HEADER = "X-Operator";
