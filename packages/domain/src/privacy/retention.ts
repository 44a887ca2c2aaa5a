// Retention (privacy issue, point 2): what is purged, when, and how. Every
// purge works in batches of at most `batchSize` rows, each batch one statement
// over rows claimed with FOR UPDATE SKIP LOCKED, so any number of instances can
// run the same purge at once without waiting on or double-counting each other.
// The functions return counts only; they never read message content.
import type { PrismaClient } from "@sms/db";

export const DEFAULT_PURGE_BATCH_SIZE = 500;

export type PurgeMessageTextCounts = { purged: number };

/**
 * Forgets the text and the full number of messages older than the retention
 * period: both ciphertext columns become NULL and `text_purged_at` is set.
 * What the API returns (masked recipient, status, segments, error, timestamps)
 * stays, and `updated_at` does not change (the resource did not change).
 *
 * A message that is still `queued` or `submitted` is kept until it is final,
 * because the live status check asks uBill per number and needs it. That hold
 * is bounded: once a message is older than `retentionMs + pendingHoldMs` it is
 * purged whatever its status (by then the status check's deadline has turned
 * it `unknown` anyway, unless no instance runs the jobs).
 */
export async function purgeMessageText(options: {
  prisma: PrismaClient;
  now: Date;
  retentionMs: number;
  /** How much longer a message that is not final yet may keep its number. */
  pendingHoldMs: number;
  batchSize?: number;
}): Promise<PurgeMessageTextCounts> {
  const { prisma, now } = options;
  const batchSize = positive(options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  const cutoff = new Date(now.getTime() - nonNegative(options.retentionMs, "retentionMs"));
  const hardCutoff = new Date(cutoff.getTime() - nonNegative(options.pendingHoldMs, "pendingHoldMs"));
  const purged = await inBatches(
    batchSize,
    () => prisma.$executeRaw`
      UPDATE messages SET recipient_ciphertext = NULL, text_ciphertext = NULL, text_purged_at = ${now}
      WHERE id IN (
        SELECT id FROM messages
        WHERE text_purged_at IS NULL AND created_at < ${cutoff}
          AND (status NOT IN ('queued', 'submitted') OR created_at < ${hardCutoff})
        ORDER BY created_at
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      )`,
  );
  return { purged };
}

/** Deletes idempotency records whose 24 hours are over (`expires_at <= now`). */
export async function purgeIdempotencyRecords(options: {
  prisma: PrismaClient;
  now: Date;
  batchSize?: number;
}): Promise<{ purged: number }> {
  const { prisma, now } = options;
  const batchSize = positive(options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  const purged = await inBatches(
    batchSize,
    () => prisma.$executeRaw`
      DELETE FROM idempotency_records
      WHERE id IN (
        SELECT id FROM idempotency_records
        WHERE expires_at <= ${now}
        ORDER BY expires_at
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      )`,
  );
  return { purged };
}

/** Deletes rate-limit counters whose window is over (`expires_at <= now`). */
export async function purgeRateLimitCounters(options: {
  prisma: PrismaClient;
  now: Date;
  batchSize?: number;
}): Promise<{ purged: number }> {
  const { prisma, now } = options;
  const batchSize = positive(options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  const purged = await inBatches(
    batchSize,
    () => prisma.$executeRaw`
      DELETE FROM rate_limit_counters
      WHERE (bucket, window_start) IN (
        SELECT bucket, window_start FROM rate_limit_counters
        WHERE expires_at <= ${now}
        ORDER BY expires_at
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      )`,
  );
  return { purged };
}

/** Runs one batch after another until a batch comes back short; the total of rows touched. */
async function inBatches(batchSize: number, runBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await runBatch();
    total += count;
    if (count < batchSize) return total;
  }
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number`);
  return value;
}
