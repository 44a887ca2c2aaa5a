import { z } from "zod";
import type { Meta } from "../meta.ts";
import { CHECK_OUTCOME_STATUSES } from "../vocabulary.ts";
import { VERIFICATION_EXAMPLES, ZVerification } from "./verification.types.ts";

const CODE_RULE =
  "must be a string of 1 to 16 characters once surrounding whitespace is removed: the code the user typed";

/**
 * What the user typed, with surrounding whitespace removed (a pasted or autofilled code often carries a
 * space or a line break; docs/verifications.md#the-code-the-user-typed): " 482913 " is checked as
 * "482913". Whitespace inside the code is kept, so "482 913" is a wrong code.
 */
const ZCode = z
  .string({ error: CODE_RULE })
  .trim()
  .min(1, { error: CODE_RULE })
  .max(16, { error: CODE_RULE })
  .meta({
    description:
      "What the user typed. Surrounding whitespace (spaces, tabs, line breaks) is removed first; whitespace inside is kept. Compared in constant time; never stored, logged or returned.",
    example: "482913",
  });

/** The path's verification id and the body's code, as the procedure receives them. */
export const ZCheckVerificationRequest = z.strictObject({
  verification_id: z.string().meta({
    description: "The `id` returned when the verification was started.",
    example: "vrf_01m81b5h80a4k2x9wq7zt3nd6e",
  }),
  code: ZCode,
});

/** The body alone, as the OpenAPI document states it (the id is in the path). */
const ZCheckVerificationBody = z
  .strictObject({ code: ZCode })
  .meta({ id: "CheckVerificationRequest", example: { code: "482913" } });

/** A check's 200: the verification it changed, only ever approved, pending (a wrong code) or out of attempts. */
export const ZCheckVerificationResponse = ZVerification.extend({
  status: z.enum(CHECK_OUTCOME_STATUSES).meta({
    description:
      "What this check did: `approved` (the right code: let the user in), `pending` (a wrong code, one attempt fewer) " +
      "or `max_attempts_reached` (the last wrong code). Any other status is a `409 verification_not_pending`.",
  }),
}).meta({
  id: "CheckedVerification",
  description:
    "The verification after a check that changed it; the same eleven fields as a Verification, the code never.",
});

export const checkVerificationMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/verifications/{verification_id}/check",
    operationId: "checkVerification",
    tags: ["Verifications"],
    summary: "Check a code",
    description:
      'An extension of the contract. Let the user in only on `200` with `status: "approved"`. A wrong code is an ' +
      "expected outcome, not an error: `200`, still `pending`, one attempt fewer; the fifth wrong code ends the " +
      "verification as `max_attempts_reached`. Once approved (or expired, canceled, out of attempts), every check " +
      "answers `409 verification_not_pending` whatever the code, and nothing approves it again: a check retried after " +
      "a lost answer reads the verification (`GET`) to learn whether the first check approved it. A check never " +
      "costs credits.",
    protect: true,
  },
  documentBody: ZCheckVerificationBody,
  responses: {
    200: {
      description:
        "The check's outcome: `approved` (let the user in), `pending` with one attempt fewer (a wrong code), or `max_attempts_reached`.",
      examples: {
        approved: VERIFICATION_EXAMPLES.approved,
        pending: VERIFICATION_EXAMPLES.wrong_code,
        max_attempts_reached: VERIFICATION_EXAMPLES.max_attempts_reached,
      },
    },
    400: { description: "`code` is missing or not a string of 1–16 characters.", codes: ["invalid_request"] },
    404: {
      description: "No such verification in this project (absent and another project's look the same).",
      codes: ["verification_not_found"],
    },
    409: {
      description:
        "The verification is no longer pending (approved, expired, canceled, out of attempts, its SMS failed); the answer is the same whatever the code, and the message names its status. Do not let the user in on this answer.",
      codes: ["verification_not_pending"],
    },
    415: { description: "The body is not JSON.", codes: ["unsupported_media_type"] },
    429: {
      description:
        "Too many checks this minute, of the project (`VERIFICATION_CHECKS_PER_MINUTE`, 300) or from the caller's address (`VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE`, 300): nothing checked or counted. `Retry-After` ≤ 60.",
      codes: ["rate_limited"],
      headers: ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
    },
  },
};
