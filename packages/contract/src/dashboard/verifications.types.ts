// dashboard.verifications.*: a project's verifications log and its conversion
// (issue 22). Never a code or its hash.
import { z } from "zod";
import { KEY_MODES, VERIFICATION_STATUSES } from "../vocabulary.ts";
import { ZCursor } from "./cursor.types.ts";
import { ZProjectId } from "./records.types.ts";

const ZTimestamp = z.string().meta({ description: "ISO 8601 UTC." });

export const ZVerificationRow = z.object({
  id: z.string(),
  mode: z.enum(KEY_MODES),
  to: z.string(),
  status: z.enum(VERIFICATION_STATUSES),
  attempts_used: z.number(),
  message_id: z.string(),
  created_at: ZTimestamp,
  approved_at: ZTimestamp.nullable(),
});

export const ZListVerificationsRequest = z.strictObject({ project_id: ZProjectId, cursor: ZCursor });
export const ZListVerificationsResponse = z.object({
  verifications: z.array(ZVerificationRow),
  next: z.string().nullable(),
});

export const ZConversionRequest = z.strictObject({ project_id: ZProjectId });
export const ZConversionResponse = z.object({
  /** The last 30 UTC days, oldest first. */
  days: z.array(
    z.object({ day: z.string(), started: z.number(), approved: z.number(), rate: z.number().nullable() }),
  ),
  started: z.number(),
  approved: z.number(),
  /** approved ÷ started over the 30 days; null when none started. */
  conversion_rate: z.number().nullable(),
  median_seconds_to_approve: z.number().nullable(),
});
