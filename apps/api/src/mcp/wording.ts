// What an agent is told in a tool error: the API's sentences, in the words of
// the tools. The REST wording names HTTP headers and routes an agent never
// sees ("Send an 'Idempotency-Key' header", "Retry-After", "POST
// /v1/messages"); a tool takes `idempotency_key` as an argument and carries a
// wait in `_meta.retry_after_seconds`. The codes stay the API's.
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "@sms/contract";
import { REFUSAL_MESSAGES } from "../contract/wording.ts";

/** unauthorized over MCP: the session has no key of its own and the connection sends none. */
export const MCP_UNAUTHORIZED =
  "No API key in this MCP session: call create_test_key (its key then serves this session), " +
  "or configure 'Authorization: Bearer <API_KEY>' on this MCP server.";

/** Whole sentences said differently. */
const SENTENCES: ReadonlyMap<string, string> = new Map([
  [REFUSAL_MESSAGES.unauthorized, MCP_UNAUTHORIZED],
  [
    REFUSAL_MESSAGES.idempotency_key_required,
    `Pass idempotency_key (1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters): a new UUID for each logical send, ` +
      "the same one on every retry of that send.",
  ],
  [
    REFUSAL_MESSAGES.idempotency_key_too_long,
    `idempotency_key must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
  ],
]);

/** Phrases of the other sentences, in order. */
const PHRASES: ReadonlyArray<readonly [RegExp, string]> = [
  [/the time in Retry-After/g, "_meta.retry_after_seconds"],
  [/Retry-After/g, "_meta.retry_after_seconds"],
  [/([Oo])n POST \/v1\/messages reuse/g, "$1n send_message and start_verification reuse"],
  [/[`']?Idempotency-Key[`']?(?: header)?/g, "idempotency_key"],
];

/** The sentence a tool error carries for the API's `message`. */
export function toolErrorMessage(message: string): string {
  const sentence = SENTENCES.get(message);
  if (sentence !== undefined) return sentence;
  let worded = message;
  for (const [phrase, replacement] of PHRASES) worded = worded.replace(phrase, replacement);
  return worded;
}
