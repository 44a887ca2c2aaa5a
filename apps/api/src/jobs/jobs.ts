// The periodic jobs every instance runs (API or --role=worker), each on its
// own interval through the scheduler. Every job is safe with any number of
// instances: rows are claimed with FOR UPDATE SKIP LOCKED.
import {
  checkMessageStatuses,
  purgeIdempotencyRecords,
  purgeMessageText,
  purgeRateLimitCounters,
  purgeUnclaimedMessages,
  recoverQueuedMessages,
} from "@sms/domain";
import type { AppDeps } from "../deps.ts";
import type { Job } from "./scheduler.ts";

export function periodicJobs(deps: AppDeps): Job[] {
  const { env, prisma, keyring, clock, logger } = deps;
  return [
    {
      name: "status-check",
      intervalMs: env.STATUS_CHECK_INTERVAL_SECONDS * 1000,
      run: () =>
        checkMessageStatuses({
          prisma,
          keyring,
          clock,
          logger,
          providers: deps.providers,
          intervalMs: env.STATUS_CHECK_INTERVAL_SECONDS * 1000,
          batchSize: env.STATUS_CHECK_BATCH_SIZE,
          deadlineMs: env.SUBMITTED_DEADLINE_HOURS * 3_600_000,
        }),
    },
    {
      name: "queued-recovery",
      intervalMs: Math.min(env.QUEUED_RECOVERY_SECONDS, 60) * 1000,
      run: () =>
        recoverQueuedMessages({
          prisma,
          clock,
          olderThanMs: env.QUEUED_RECOVERY_SECONDS * 1000,
          batchSize: env.STATUS_CHECK_BATCH_SIZE,
        }),
    },
    {
      // Spec 4.1: messages of unclaimed projects are deleted 30 days after sending.
      name: "unclaimed-messages-purge",
      intervalMs: env.UNCLAIMED_PURGE_INTERVAL_SECONDS * 1000,
      run: () => purgeUnclaimedMessages({ prisma, clock, batchSize: env.PURGE_BATCH_SIZE }),
    },
    // Retention (README, Privacy): text and full numbers after
    // MESSAGE_TEXT_RETENTION_DAYS (a message not final yet keeps them until it
    // is, at most SUBMITTED_DEADLINE_HOURS longer), idempotency records after
    // their 24 hours, rate-limit counters after their window.
    {
      name: "message-text-purge",
      intervalMs: env.PURGE_INTERVAL_SECONDS * 1000,
      run: () =>
        purgeMessageText({
          prisma,
          now: clock.now(),
          retentionMs: env.MESSAGE_TEXT_RETENTION_DAYS * 86_400_000,
          pendingHoldMs: env.SUBMITTED_DEADLINE_HOURS * 3_600_000 + env.STATUS_CHECK_INTERVAL_SECONDS * 1000,
          batchSize: env.PURGE_BATCH_SIZE,
        }),
    },
    {
      name: "idempotency-purge",
      intervalMs: env.PURGE_INTERVAL_SECONDS * 1000,
      run: () =>
        purgeIdempotencyRecords({ prisma, now: clock.now(), batchSize: env.PURGE_BATCH_SIZE }),
    },
    {
      name: "rate-limit-purge",
      intervalMs: env.PURGE_INTERVAL_SECONDS * 1000,
      run: () =>
        purgeRateLimitCounters({ prisma, now: clock.now(), batchSize: env.PURGE_BATCH_SIZE }),
    },
  ];
}
