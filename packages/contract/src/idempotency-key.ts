// The Idempotency-Key rule (spec 4.2, 8), declared once for every road: the
// REST header check, MCP's idempotency_key argument, the dashboard's
// send-test form and procedure, and the TypeScript client. The Python and PHP
// clients cannot import it; test/docs/retry-advice.test.ts holds their
// statements of it to this constant.
import { z } from "zod";

/** The longest Idempotency-Key, in characters (spec 4.2, 8). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

/** What is wrong with an Idempotency-Key value, or null when it is fine. */
export function idempotencyKeyProblem(key: string | null): "missing" | "too_long" | null {
  if (key === null || key === "") return "missing";
  // Characters, not UTF-16 code units: an astral character counts once.
  let length = 0;
  for (const _ of key) if (++length > IDEMPOTENCY_KEY_MAX_LENGTH) return "too_long";
  return null;
}

/**
 * The rule as a zod string, for procedure and tool inputs: 1–200 characters,
 * counted as characters (idempotencyKeyProblem). The UTF-16 bound is twice
 * that (an astral character is two units); a JSON Schema made from it states
 * `maxLength: 200`, which JSON Schema counts in characters.
 */
export const ZIdempotencyKey = z
  .string()
  .min(1)
  .max(2 * IDEMPOTENCY_KEY_MAX_LENGTH)
  .refine((key) => idempotencyKeyProblem(key) === null, {
    message: `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
  })
  .meta({ maxLength: IDEMPOTENCY_KEY_MAX_LENGTH });
