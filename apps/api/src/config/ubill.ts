// The live provider, uBill: off (live sends answer 503) until its URL, key
// and brand are set together; its deadlines and the places a process holds there.
import { DEFAULT_STATUS_TIMEOUT_MS, DEFAULT_SUBMIT_TIMEOUT_MS } from "@sms/provider-ubill";
import { z } from "zod";
import { fail, int, optionalString, optionalUrl } from "./shared.ts";

export const ZUbillEnv = z.object({
  UBILL_BASE_URL: optionalUrl,
  UBILL_API_KEY: optionalString,
  UBILL_DEFAULT_BRAND_ID: z.coerce.number().int().positive().optional(),
  UBILL_SUBMIT_TIMEOUT_MS: int(DEFAULT_SUBMIT_TIMEOUT_MS, 100, 120_000),
  UBILL_STATUS_TIMEOUT_MS: int(DEFAULT_STATUS_TIMEOUT_MS, 100, 120_000),
  /** Live sends this process has at uBill at once, from write-ahead to answer; the rest wait in memory. */
  UBILL_MAX_IN_FLIGHT: int(32, 1, 10_000),
  /**
   * How long a live send waits for one of those places before `503 provider_unavailable` (nothing written):
   * by default as long as uBill itself is given (UBILL_SUBMIT_TIMEOUT_MS's default).
   */
  UBILL_QUEUE_TIMEOUT_MS: int(DEFAULT_SUBMIT_TIMEOUT_MS, 0, 120_000),
});
export type TUbillEnv = z.output<typeof ZUbillEnv>;

export function ubillConfig(env: TUbillEnv) {
  const { UBILL_BASE_URL: baseUrl, UBILL_API_KEY: apiKey, UBILL_DEFAULT_BRAND_ID: defaultBrandId } = env;
  const set = [baseUrl, apiKey, defaultBrandId].filter((value) => value !== undefined).length;
  if (set !== 0 && set !== 3) {
    fail("UBILL_BASE_URL, UBILL_API_KEY and UBILL_DEFAULT_BRAND_ID must be set together");
  }
  return {
    /** The live provider; null when not configured (live sends answer 503). */
    ubill:
      baseUrl && apiKey && defaultBrandId
        ? {
            baseUrl,
            apiKey,
            defaultBrandId,
            submitTimeoutMs: env.UBILL_SUBMIT_TIMEOUT_MS,
            statusTimeoutMs: env.UBILL_STATUS_TIMEOUT_MS,
            /** Live sends at uBill at once in this process (UBILL_MAX_IN_FLIGHT). */
            maxInFlight: env.UBILL_MAX_IN_FLIGHT,
            /** A live send's longest wait for one of those places (UBILL_QUEUE_TIMEOUT_MS). */
            queueTimeoutMs: env.UBILL_QUEUE_TIMEOUT_MS,
          }
        : null,
  };
}
