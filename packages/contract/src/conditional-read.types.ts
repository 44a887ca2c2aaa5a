// The conditional reads' request headers and their responses' documentation
// (apps/api http/conditional-read.ts), shared by GET /v1/messages/{message_id} and
// GET /v1/verifications/{verification_id}: an extension of the contract.
import { z } from "zod";
import type { DocumentedResponse } from "./meta.ts";

/** The longest `Prefer: wait=N` honoured, in seconds (apps/api http/conditional-read.ts clamps to it). */
export const MAX_WAIT_SECONDS = 30;

export const ZConditionalReadHeaders = z.object({
  "If-None-Match": z
    .string()
    .optional()
    .meta({
      description:
        "The `ETag` of the state you last read: `304` with no body while it is still the current one. " +
        "An extension of the contract; without it the route answers as the contract says.",
      example: '"3f1b0c9ad2e84b7f90a1c2d3e4f50617"',
    }),
  Prefer: z
    .string()
    .optional()
    .meta({
      description:
        `\`wait=N\` (RFC 7240) with \`If-None-Match\`: the request is held until the state changes (\`200\`) or N seconds ` +
        `pass (\`304\`); N above ${MAX_WAIT_SECONDS} is taken as ${MAX_WAIT_SECONDS}. Honoured when the answer says ` +
        "`Preference-Applied`; otherwise (the instance holds as many requests as it takes) it was answered at once: " +
        "poll on the usual schedule.",
      example: "wait=25",
    }),
});

/** The 200's headers and the 304, as the two routes document them. */
export const CONDITIONAL_200_HEADERS = ["ETag", "Preference-Applied"] as const;
export const NOT_MODIFIED: DocumentedResponse = {
  description:
    "An extension of the contract: `If-None-Match` named the current `ETag` (after the hold, with `Prefer: wait`). No body.",
  headers: ["ETag", "Preference-Applied"],
  noBody: true,
};
