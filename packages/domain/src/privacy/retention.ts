// Retention (docs/privacy.md): what is purged, when, and how. Every purge
// works in batches of at most `batchSize` rows, each batch one statement over
// rows claimed with FOR UPDATE SKIP LOCKED, so any number of instances can run
// the same purge at once without waiting on or double-counting each other.
// The functions return counts only; they never read message content.

import { inBatches } from "../in-batches.ts";
import type { Store } from "../store/index.ts";

export const DEFAULT_PURGE_BATCH_SIZE = 500;

type PurgeDeps = {
  store: Pick<Store, "messages" | "idempotency" | "limits" | "verifications" | "requestLog">;
};

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
 *
 * Verifications' code hashes go at the same cutoff, whatever their message's
 * status (a code is long expired by then): never later than the text.
 */
export async function purgeMessageText(
  deps: PurgeDeps,
  input: {
    now: Date;
    retentionMs: number;
    /** How much longer a message that is not final yet may keep its number. */
    pendingHoldMs: number;
    batchSize?: number;
  },
): Promise<{ purged: number }> {
  const { now } = input;
  const batchSize = positive(input.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  const cutoff = new Date(now.getTime() - nonNegative(input.retentionMs, "retentionMs"));
  const hardCutoff = new Date(cutoff.getTime() - nonNegative(input.pendingHoldMs, "pendingHoldMs"));
  const purged = await inBatches(batchSize, () =>
    deps.store.messages.purgeText({ now, cutoff, hardCutoff, batchSize }),
  );
  await inBatches(batchSize, () => deps.store.verifications.purgeCodes(cutoff, batchSize));
  return { purged };
}

/** Deletes idempotency records whose 24 hours are over (`expires_at <= now`). */
export async function purgeIdempotencyRecords(
  deps: PurgeDeps,
  input: { now: Date; batchSize?: number },
): Promise<{ purged: number }> {
  const batchSize = positive(input.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  return {
    purged: await inBatches(batchSize, () => deps.store.idempotency.purgeExpired(input.now, batchSize)),
  };
}

/** Deletes rate-limit counters whose window is over (`expires_at <= now`). */
export async function purgeRateLimitCounters(
  deps: PurgeDeps,
  input: { now: Date; batchSize?: number },
): Promise<{ purged: number }> {
  const batchSize = positive(input.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  return { purged: await inBatches(batchSize, () => deps.store.limits.purgeExpired(input.now, batchSize)) };
}

/** Deletes request-log records older than the retention period (REQUEST_LOG_RETENTION_DAYS). */
export async function purgeRequestLog(
  deps: PurgeDeps,
  input: { now: Date; retentionMs: number; batchSize?: number },
): Promise<{ purged: number }> {
  const batchSize = positive(input.batchSize ?? DEFAULT_PURGE_BATCH_SIZE, "batchSize");
  const cutoff = new Date(input.now.getTime() - nonNegative(input.retentionMs, "retentionMs"));
  return {
    purged: await inBatches(batchSize, () => deps.store.requestLog.purgeOlderThan(cutoff, batchSize)),
  };
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a non-negative number`);
  return value;
}
