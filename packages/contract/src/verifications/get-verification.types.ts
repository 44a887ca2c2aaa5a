import { z } from "zod";
import { CONDITIONAL_200_HEADERS, NOT_MODIFIED, ZConditionalReadHeaders } from "../conditional-read.types.ts";
import type { Meta } from "../meta.ts";
import { VERIFICATION_EXAMPLES, ZVerification } from "./verification.types.ts";

export const ZGetVerificationRequest = z.strictObject({
  verification_id: z.string().meta({
    description: "The `id` returned when the verification was started.",
    example: "vrf_01m81b5h80a4k2x9wq7zt3nd6e",
  }),
});

export const ZGetVerificationResponse = ZVerification;

export const getVerificationMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/v1/verifications/{verification_id}",
    operationId: "getVerification",
    tags: ["Verifications"],
    summary: "Read a verification",
    description:
      "An extension of the contract: the verification's current state (a pending one past `expires_at` reads as `expired`). Only the authenticated project's verifications are readable.",
    protect: true,
    requestHeaders: ZConditionalReadHeaders,
  },
  responses: {
    200: {
      description: "The verification, current state.",
      headers: CONDITIONAL_200_HEADERS,
      examples: {
        pending: VERIFICATION_EXAMPLES.pending,
        approved: VERIFICATION_EXAMPLES.approved,
        expired: VERIFICATION_EXAMPLES.expired,
        canceled: VERIFICATION_EXAMPLES.canceled,
        max_attempts_reached: VERIFICATION_EXAMPLES.max_attempts_reached,
        send_failed: VERIFICATION_EXAMPLES.send_failed,
      },
    },
    304: NOT_MODIFIED,
    400: { description: "An unexpected query parameter.", codes: ["invalid_request"] },
    404: {
      description: "No such verification in this project (absent and another project's look the same).",
      codes: ["verification_not_found"],
    },
  },
  readTurn: true,
  conditional: { idParam: "verification_id" },
};
