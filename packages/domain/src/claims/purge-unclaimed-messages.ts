// The purge of unclaimed projects' messages (spec 4.1, 8): a message of a
// project nobody has claimed is deleted 30 days after it was sent, with its
// idempotency records and verifications. Claimed projects keep theirs. A
// record is found by the expiry it was given (its message's creation plus
// IDEMPOTENCY_TTL_MS), through its expires_at index.
//
// Batches go project by project in id order, each one from the project the
// last one ended in, so a run reads each unclaimed project's index once and
// never a claimed project's messages (LOCK_UNCLAIMED_SQL).
//
// Batches are taken with FOR UPDATE SKIP LOCKED, so any number of instances
// can run the job at once without waiting for or double-counting each other.
// The project rows are share-locked in the same statement: a claim being
// confirmed at that moment holds its project row, so the purge either waits
// for it and then sees the project claimed, or has already deleted the batch
// before the claim began.
import { IDEMPOTENCY_TTL_MS } from "../model/idempotency.ts";
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
  /** Where the next batch starts: the last batch's last project (it may have more), in id order. */
  let fromProjectId = "";
  for (;;) {
    const cutoff = new Date(deps.clock.now().getTime() - olderThanMs);
    const batch = await deps.store.transaction(async (tx) => {
      const locked = await tx.messages.lockUnclaimedBefore(cutoff, batchSize, fromProjectId);
      if (locked.length === 0) return { selected: 0, messages: 0, idempotency: 0, lastProjectId: "" };
      const ids = locked.map((message) => message.id);
      const idempotency = await tx.idempotency.deleteForMessages(
        locked.map((message) => ({
          messageId: message.id,
          expiresAt: new Date(message.createdAt.getTime() + IDEMPOTENCY_TTL_MS),
        })),
      );
      await tx.verifications.deleteForMessages(ids);
      const messages = await tx.messages.delete(ids);
      return { selected: ids.length, messages, idempotency, lastProjectId: locked.at(-1)?.projectId ?? "" };
    });
    counts.messages += batch.messages;
    counts.idempotency_records += batch.idempotency;
    if (batch.selected < batchSize) return counts;
    fromProjectId = batch.lastProjectId;
  }
}
