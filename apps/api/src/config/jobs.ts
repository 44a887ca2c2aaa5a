// The periodic jobs: the status check of submitted messages, the deadline
// that ends it, and the recovery of sends a crashed process left queued.
// (The purge rounds' settings are privacy.ts's.)
import { z } from "zod";
import { bool, fail, HOUR_MS, int, SECOND_MS } from "./shared.ts";
import type { TUbillEnv } from "./ubill.ts";

export const ZJobsEnv = z.object({
  STATUS_CHECK_INTERVAL_SECONDS: int(20, 1, 3600),
  STATUS_CHECK_BATCH_SIZE: int(200, 1, 10_000),
  /** Provider calls in flight at once during a status-check round (per process). */
  STATUS_CHECK_CONCURRENCY: int(16, 1, 1_000),
  SUBMITTED_DEADLINE_HOURS: int(72, 1, 24 * 365),
  QUEUED_RECOVERY_SECONDS: int(60, 5, 86_400),
  JOBS_ENABLED: bool(true),
});
export type TJobsEnv = z.output<typeof ZJobsEnv>;

export function jobsConfig(
  env: TJobsEnv & Pick<TUbillEnv, "UBILL_SUBMIT_TIMEOUT_MS" | "UBILL_STATUS_TIMEOUT_MS">,
) {
  // The recovery sweep must never take a send still waiting on uBill for a crashed one.
  if (env.QUEUED_RECOVERY_SECONDS * SECOND_MS <= env.UBILL_SUBMIT_TIMEOUT_MS) {
    fail("QUEUED_RECOVERY_SECONDS must be longer than UBILL_SUBMIT_TIMEOUT_MS");
  }
  return {
    statusCheck: {
      intervalMs: env.STATUS_CHECK_INTERVAL_SECONDS * SECOND_MS,
      batchSize: env.STATUS_CHECK_BATCH_SIZE,
      concurrency: env.STATUS_CHECK_CONCURRENCY,
      submittedDeadlineMs: env.SUBMITTED_DEADLINE_HOURS * HOUR_MS,
      /** The provider's status call timeout: how long one call of a batch may take. */
      callTimeoutMs: env.UBILL_STATUS_TIMEOUT_MS,
    },
    queuedRecoveryMs: env.QUEUED_RECOVERY_SECONDS * SECOND_MS,
    jobsEnabled: env.JOBS_ENABLED,
  };
}
