import { z } from "zod";
import { ZProjectId, ZRefusal } from "./records.types.ts";

export const ZSpending = z.object({
  /** The project's name (every project page's header); null: not named. */
  project_name: z.string().nullable(),
  credit_balance: z.number(),
  daily_credit_cap: z.number().nullable(),
  used_today: z.number().meta({ description: "Credits reserved today (UTC), less refunds." }),
  low_balance_threshold: z.number().nullable(),
  low_balance: z.boolean(),
  daily_rate: z.number().meta({ description: "Credits used a day over the last 7 days." }),
  days_left: z.number().nullable(),
});

export const ZSpendingRequest = z.strictObject({ project_id: ZProjectId });
export const ZSpendingResponse = ZSpending;

export const ZSetSpendingRequest = z.strictObject({
  project_id: ZProjectId,
  daily_credit_cap: z.number().int().nullable(),
  low_balance_threshold: z.number().int().nullable(),
});
export const ZSetSpendingResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), spending: ZSpending }),
  ZRefusal,
]);

export const ZOnboardingResponse = z.object({
  done: z.boolean(),
  test_sent: z.boolean(),
  delivered: z.boolean(),
  live_key: z.boolean(),
  live_sent: z.boolean(),
});
