// Reads from a replica (DATABASE_READ_URL; docs/scaling.md). The replica's
// handle (@sms/db openReadReplica) already runs a read on the primary when the
// replica fails; what it cannot know is the rows a standby has not replayed
// yet. Read-your-writes is decided here, from the id: ids begin with their
// creation time (@sms/crypto newId), so a by-id read that the replica does not
// find is run again on the primary while the id is younger than the window.
// An older id the replica lacks gets the replica's answer (not found): its row
// either never existed or the replica is further behind than the window.
import { idTimestamp } from "@sms/crypto";
import type { Sql } from "@sms/db";

export type ReplicaReads = {
  /** The replica's handle (openReadReplica: it falls back to the primary by itself when the replica fails). */
  replica: Sql;
  /** A by-id read the replica does not find is retried on the primary while the id is younger than this. */
  recentWindowMs: number;
  /** Now, in ms since the epoch: the clock the ids are minted with. */
  now(): number;
  /** One read retried on the primary. */
  onFallback(reason: "not_found_recent"): void;
};

/** Whether `id` was minted less than the window ago (or after now: another instance's clock runs ahead). */
function isRecent(reads: ReplicaReads, id: string): boolean {
  const created = idTimestamp(id);
  return created !== null && reads.now() - created < reads.recentWindowMs;
}

/**
 * Runs `onReplica`; when it finds nothing (null, or an empty list) for a
 * recent `id`, runs `onPrimary` instead.
 */
export function readYourWrites(reads: ReplicaReads) {
  return async <T>(id: string, onReplica: () => Promise<T>, onPrimary: () => Promise<T>): Promise<T> => {
    const found = await onReplica();
    const missing = found === null || (Array.isArray(found) && found.length === 0);
    if (!missing || !isRecent(reads, id)) return found;
    reads.onFallback("not_found_recent");
    return onPrimary();
  };
}
