// Sending messages: the per-project and per-number limits, the free tier, the
// default sender, the simulator's delay, and how long a send waits on others.
import { DEFAULT_DELIVERY_DELAY_MS } from "@sms/provider-sim";
import { z } from "zod";
import type { TDatabaseEnv } from "./database.ts";
import { int, SECOND_MS } from "./shared.ts";
import type { TUbillEnv } from "./ubill.ts";

export const ZMessagesEnv = z.object({
  MESSAGES_PER_MINUTE: int(100, 1),
  /** Live messages of a project to one number per minute (over it: 429 rate_limited, Retry-After ≤ 60). */
  RECIPIENT_MESSAGES_PER_MINUTE: int(2, 1),
  /** … and per UTC day (over it: 429 daily_limit_reached until midnight UTC). */
  RECIPIENT_MESSAGES_PER_DAY: int(10, 1),
  /** How long a send keeps trying to record the provider's answer while the database is unavailable. */
  SEND_RECORD_RETRY_SECONDS: int(30, 0, 600),
  FREE_TIER_DAILY_SEGMENTS: int(20, 0),
  SMS_DEFAULT_SENDER: z.string().min(1).max(11).default("SMSGE"),
  SIMULATOR_DELIVERY_DELAY_MS: int(DEFAULT_DELIVERY_DELAY_MS, 0, 600_000),
});
export type TMessagesEnv = z.output<typeof ZMessagesEnv>;

export function messagesConfig(
  env: TMessagesEnv &
    Pick<TUbillEnv, "UBILL_SUBMIT_TIMEOUT_MS"> &
    Pick<TDatabaseEnv, "DATABASE_STATEMENT_TIMEOUT_MS">,
) {
  return {
    messages: {
      perMinute: env.MESSAGES_PER_MINUTE,
      /** Live messages of a project to one number (anti-pumping). */
      recipientPerMinute: env.RECIPIENT_MESSAGES_PER_MINUTE,
      recipientPerDay: env.RECIPIENT_MESSAGES_PER_DAY,
      recordRetryMs: env.SEND_RECORD_RETRY_SECONDS * SECOND_MS,
      /**
       * How long a duplicate waits for the first request with its key: as long
       * as that one can be busy with the provider, plus one statement to
       * record its answer (UBILL_SUBMIT_TIMEOUT_MS + DATABASE_STATEMENT_TIMEOUT_MS).
       */
      inFlightWaitMs: env.UBILL_SUBMIT_TIMEOUT_MS + env.DATABASE_STATEMENT_TIMEOUT_MS,
      freeTierDailySegments: env.FREE_TIER_DAILY_SEGMENTS,
      defaultSender: env.SMS_DEFAULT_SENDER,
      simulatorDelayMs: env.SIMULATOR_DELIVERY_DELAY_MS,
    },
  };
}
