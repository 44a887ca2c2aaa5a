// Idempotency (spec 4.2, 8): the scope of a key, how long its answer is kept,
// and what makes two requests "the same".
import type { KeyMode } from "./keys.ts";

/** How long an Idempotency-Key's first answer is kept (spec 8). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

// The Idempotency-Key rule (1–200 characters) is declared once, in @sms/contract.
export { IDEMPOTENCY_KEY_MAX_LENGTH, idempotencyKeyProblem } from "@sms/contract";

/** A key is unique per project and key mode (spec 4.2 rule 1). */
export type IdempotencyScope = { projectId: string; mode: KeyMode; key: string };

/**
 * The identity of a send request for idempotency: `to`, `template`,
 * `variables` (in any key order) and `locale` (omitted = the default). It is
 * only ever stored as a keyed HMAC.
 */
export function canonicalRequest(
  request: { to: string; template: string; variables: unknown },
  locale: string,
): string {
  const variables =
    request.variables && typeof request.variables === "object"
      ? Object.entries(request.variables as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        )
      : request.variables;
  return JSON.stringify([request.to, request.template, variables, locale]);
}
