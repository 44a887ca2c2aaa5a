// Tool errors name the tools' arguments and _meta, never the REST headers or routes.
import { describe, expect, it } from "vitest";
import {
  INTERNAL_ERROR_MESSAGE,
  REFUSAL_MESSAGES,
  verificationNotPendingMessage,
} from "../contract/wording.ts";
import { MCP_UNAUTHORIZED, toolErrorMessage } from "./wording.ts";

const REST_SENTENCES = [
  ...Object.values(REFUSAL_MESSAGES),
  INTERNAL_ERROR_MESSAGE,
  ...["approved", "expired", "canceled", "max_attempts_reached"].map(verificationNotPendingMessage),
];

describe("tool error wording", () => {
  it("no sentence an agent reads names Idempotency-Key, Retry-After or a REST route", () => {
    const worded = REST_SENTENCES.map(toolErrorMessage);
    // Not an empty check: the REST sentences do name them.
    expect(REST_SENTENCES.filter((s) => /Idempotency-Key|Retry-After|\/v1\//.test(s)).length).toBeGreaterThan(
      8,
    );
    for (const sentence of worded) expect(sentence).not.toMatch(/Idempotency-Key|Retry-After|\/v1\//);
  });

  it("says idempotency_key and _meta.retry_after_seconds instead", () => {
    expect(toolErrorMessage(REFUSAL_MESSAGES.idempotency_key_required)).toMatch(
      /^Pass idempotency_key \(1–200/,
    );
    expect(toolErrorMessage(REFUSAL_MESSAGES.idempotency_key_reused)).toBe(
      "This idempotency_key was already used with a different request. Use a new key for a new message.",
    );
    expect(toolErrorMessage(REFUSAL_MESSAGES.recipient_rate_limited)).toBe(
      "Too many messages to this recipient this minute; nothing was sent. Retry after _meta.retry_after_seconds with the same idempotency_key.",
    );
    expect(toolErrorMessage(INTERNAL_ERROR_MESSAGE)).toBe(
      "An unexpected error occurred. Retry cautiously; on send_message and start_verification reuse the same idempotency_key.",
    );
    expect(toolErrorMessage(REFUSAL_MESSAGES.unauthorized)).toBe(MCP_UNAUTHORIZED);
  });

  it("leaves a sentence without them as it is", () => {
    expect(toolErrorMessage(REFUSAL_MESSAGES.message_not_found)).toBe(REFUSAL_MESSAGES.message_not_found);
  });
});
