// Answers already given, kept in process so that a replay (spec 4.2: the same
// Idempotency-Key and body within 24 hours) is answered without the database.
//
// Only answered records are kept, and an answered record never changes until
// it expires: the cache can be stale only by not knowing a key, never by
// answering differently from the database. An entry ends when its record
// expires (the caller's clock), or when newer answers push it out
// (`maxEntries`, oldest first). A replay that reaches another instance, or
// one whose entry is gone, is answered from the database as before.
import { setNewest } from "../bounded-map.ts";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { PriorRecord } from "../store/index.ts";

/** An answered record: the request's fingerprint, its answer and its expiry. */
export type AnsweredRecord = Pick<PriorRecord, "fingerprint" | "expiresAt"> & {
  responseBody: NonNullable<PriorRecord["responseBody"]>;
};

export type AnsweredKeys = {
  /** The key's answered record, unless unknown here or expired at `now`. */
  get(scope: IdempotencyScope, now: Date): AnsweredRecord | null;
  remember(scope: IdempotencyScope, record: AnsweredRecord): void;
};

/** Enough for the replays that follow a timeout within seconds; a few MB at most. */
export const DEFAULT_ANSWERED_KEYS = 4_096;

const keyOf = (scope: IdempotencyScope) => `${scope.projectId}\u0000${scope.mode}\u0000${scope.key}`;

export function createAnsweredKeys(maxEntries = DEFAULT_ANSWERED_KEYS): AnsweredKeys {
  const entries = new Map<string, AnsweredRecord>();
  return {
    get(scope, now) {
      const key = keyOf(scope);
      const record = entries.get(key);
      if (record === undefined) return null;
      if (record.expiresAt.getTime() <= now.getTime()) {
        entries.delete(key);
        return null;
      }
      return record;
    },
    remember(scope, record) {
      if (maxEntries > 0) setNewest(entries, keyOf(scope), record, maxEntries);
    },
  };
}
