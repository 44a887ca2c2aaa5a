import { z } from "zod";
import { ZCursor } from "./cursor.types.ts";
import { ZCredits, ZFreeTier, ZLedgerEntry, ZProjectId } from "./records.types.ts";

export const ZCreditsRequest = z.strictObject({ project_id: ZProjectId, cursor: ZCursor });
export const ZCreditsResponse = z.object({
  credits: ZCredits,
  free_tier: ZFreeTier,
  ledger: z.array(ZLedgerEntry),
  next: z.string().nullable(),
});
