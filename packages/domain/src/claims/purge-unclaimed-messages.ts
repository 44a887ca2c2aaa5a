// The purge of unclaimed projects' messages (spec 4.1, 8): a message of a
// project nobody has claimed is deleted 30 days after it was sent, with its
// idempotency records and verifications. Claimed projects keep theirs.
//
// Batches are taken with FOR UPDATE SKIP LOCKED, so any number of instances
// can run the job at once without waiting for or double-counting each other.
// The project rows are share-locked in the same statement: a claim being
// confirmed at that moment holds its project row, so the purge either waits
// for it and then sees the project claimed, or has already deleted the batch
// before the claim began.
import { DAY_MS } from "../model/time.ts";
import type { Clock } from "../ports.ts";
import type { Store } from "../store/index.ts";

/** Spec 4.1: an unclaimed project's messages are deleted 30 days after sending. */
export const UNCLAIMED_MESSAGE_RETENTION_MS = 30 * DAY_MS;

export type PurgeUnclaimedCounts = { messages: number; idempotency_records: number };

export async function purgeUnclaimedMessages(deps: {
  store: Pick<Store, "transaction">;
  clock: Clock;
  config: {
    batchSize: number;
    /** Default: 30 days. */
    olderThanMs?: number;
  };
}): Promise<PurgeUnclaimedCounts> {
  const { batchSize } = deps.config;
  const olderThanMs = deps.config.olderThanMs ?? UNCLAIMED_MESSAGE_RETENTION_MS;
  const counts: PurgeUnclaimedCounts = { messages: 0, idempotency_records: 0 };
  for (;;) {
    const cutoff = new Date(deps.clock.now().getTime() - olderThanMs);
    const batch = await deps.store.transaction(async (tx) => {
      const ids = await tx.messages.lockUnclaimedBefore(cutoff, batchSize);
      if (ids.length === 0) return { selected: 0, messages: 0, idempotency: 0 };
      const idempotency = await tx.idempotency.deleteForMessages(ids);
      await tx.verifications.deleteForMessages(ids);
      const messages = await tx.messages.delete(ids);
      return { selected: ids.length, messages, idempotency };
    });
    counts.messages += batch.messages;
    counts.idempotency_records += batch.idempotency;
    if (batch.selected < batchSize) return counts;
  }
}
