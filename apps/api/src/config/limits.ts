// Limits on who may ask: test keys handed out, failed API-key authentications.
import { z } from "zod";
import { int } from "./shared.ts";

export const ZLimitsEnv = z.object({
  TEST_KEYS_PER_MINUTE: int(5, 1),
  TEST_KEYS_PER_DAY: int(20, 1),
  TEST_KEYS_PER_DAY_TOTAL: int(1000, 1),
  /** Failed API-key authentications one address may make per minute before 429 (http/auth-throttle.ts). */
  AUTH_FAILURES_PER_MINUTE: int(20, 1, 100_000),
});
export type TLimitsEnv = z.output<typeof ZLimitsEnv>;

export function limitsConfig(env: TLimitsEnv) {
  return {
    testKeys: {
      perMinute: env.TEST_KEYS_PER_MINUTE,
      perDay: env.TEST_KEYS_PER_DAY,
      perDayTotal: env.TEST_KEYS_PER_DAY_TOTAL,
    },
    /** Failed API-key authentications per address and minute, per instance, before 429 rate_limited. */
    authFailuresPerMinute: env.AUTH_FAILURES_PER_MINUTE,
  };
}
