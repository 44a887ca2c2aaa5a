// dashboard.messages.sendTest ("Send a test message" on the project page): the
// form's fields as the procedure takes them, and its answer.
import { z } from "zod";
import { ZIdempotencyKey } from "../idempotency-key.ts";
import { ZProjectId, ZRefusal } from "./records.types.ts";

export const ZSendTestRequest = z.strictObject({
  project_id: ZProjectId,
  // The API's own rule (spec 4.2): 1–200 characters, counted as characters, not UTF-16 units.
  idempotency_key: ZIdempotencyKey,
  to: z.string().max(40),
  template: z.string().max(64),
  locale: z.string().max(8),
  variables: z.record(z.string().max(32), z.string().max(200)),
});
export const ZSendTestResponse = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    message_id: z.string(),
    status: z.string(),
    replayed: z.boolean(),
    /**
     * A new send's per-number allowance as a live key would have it (issue 53, item 3): the limits and
     * what is left this minute and today. Null on a replay.
     */
    live_recipient: z
      .object({
        limit: z.object({ minute: z.number().int(), day: z.number().int() }),
        remaining: z.object({ minute: z.number().int(), day: z.number().int() }),
      })
      .nullable(),
  }),
  ZRefusal,
]);
