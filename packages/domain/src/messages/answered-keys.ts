// Answers already given, kept in process so that a replay (spec 4.2: the same
// Idempotency-Key and body within 24 hours) is answered without the database.
//
// Only answered records are kept, and an answered record never changes while
// it exists. But it can stop existing before its 24 hours are over: purged on
// an instance whose clock runs ahead, or lost in a restore or a failover to a
// replica that had not received it. So an entry is trusted only:
//   - until its record's own `expires_at`, as written to the database (the
//     record the send wrote, or the one it read), and
//   - for `revalidateAfterMs` (default 15 s, on this process's monotonic
//     clock, which no wall-clock skew moves) after it was remembered.
// Past that age the database is asked again, and the entry is remembered again
// only if the record is still there (answered): one read of the key's record,
// shared by every replay of the key that arrives while it runs, not a herd of
// them through the whole send path. The guarantee: an
// instance answers from memory a record the database no longer holds for at
// most `revalidateAfterMs`; after that every instance sees the same record.
// Entries also leave when newer answers push them out (`maxEntries`, oldest
// first). docs/messages.md ("Replays from memory") states it for operators.
import { createCache } from "../cache.ts";
import type { IdempotencyScope } from "../model/idempotency.ts";
import { systemTimer, type Timer } from "../ports.ts";
import type { PriorRecord } from "../store/index.ts";

/** An answered record: the request's fingerprint, its answer and its expiry. */
export type AnsweredRecord = Pick<PriorRecord, "fingerprint" | "expiresAt"> & {
  responseBody: NonNullable<PriorRecord["responseBody"]>;
};

export type AnsweredKeys = {
  /**
   * The key's answered record, unless unknown here or expired at `now`. An entry past the revalidation age
   * is answered by `reread` (the key's record in the database) instead: remembered again when it is
   * answered there, forgotten (null) when it is gone, not answered yet, or the read failed (the send's own
   * path then meets the database as any request does). Replays of the key that ask while a reread runs
   * share it. Without `reread`, such an entry is forgotten at once.
   */
  get(
    scope: IdempotencyScope,
    now: Date,
    reread?: () => Promise<PriorRecord | null>,
  ): AnsweredRecord | null | Promise<AnsweredRecord | null>;
  remember(scope: IdempotencyScope, record: AnsweredRecord): void;
};

/** Enough for the replays that follow a timeout within seconds; a few MB at most. */
export const DEFAULT_ANSWERED_KEYS = 4_096;
/** How long an entry is answered from memory before the database is asked again. */
export const DEFAULT_REVALIDATE_AFTER_MS = 15_000;

const keyOf = (scope: IdempotencyScope) => `${scope.projectId}\u0000${scope.mode}\u0000${scope.key}`;

export function createAnsweredKeys(
  options: { maxEntries?: number; revalidateAfterMs?: number; timer?: Pick<Timer, "monotonicMs"> } = {},
): AnsweredKeys {
  const revalidateAfterMs = options.revalidateAfterMs ?? DEFAULT_REVALIDATE_AFTER_MS;
  const timer = options.timer ?? systemTimer;
  /** Answered records by key, fresh for revalidateAfterMs on the monotonic timer; rereads single-flight. */
  const cache = createCache<string, AnsweredRecord | null>({
    namespace: "answered_keys",
    maxEntries: revalidateAfterMs > 0 ? (options.maxEntries ?? DEFAULT_ANSWERED_KEYS) : 0,
    ttlMs: revalidateAfterMs,
  });
  const answeredOf = (prior: PriorRecord | null): AnsweredRecord | null =>
    prior?.responseBody != null
      ? { fingerprint: prior.fingerprint, expiresAt: prior.expiresAt, responseBody: prior.responseBody }
      : null;
  return {
    get(scope, now, reread) {
      const key = keyOf(scope);
      // Every replay of the key while a reread runs waits for the same one.
      const running = cache.loading(key);
      if (running !== undefined) return running;
      const entry = cache.entry(key, timer.monotonicMs());
      if (entry?.value == null) return null;
      if (entry.value.expiresAt.getTime() <= now.getTime()) {
        cache.delete(key);
        return null;
      }
      if (entry.fresh) return entry.value;
      if (reread === undefined) return null;
      return cache.load(
        key,
        () => timer.monotonicMs(),
        () => reread().then(answeredOf, () => null),
        (record) => record !== null,
      );
    },
    remember(scope, record) {
      cache.set(keyOf(scope), record, timer.monotonicMs());
    },
  };
}
