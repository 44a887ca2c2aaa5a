// Resource changes: how a caller holding `GET /v1/messages/{id}` with
// `Prefer: wait` (apps/api, http/conditional-read.ts) learns that the message
// or verification it waits on may have changed, whichever process changed it.
//
// The writer: every statement that changes what a caller can read of a
// message or a verification (its status, its attempts) also runs
// `notifyChanged(id)` (pg_notify), in the same statement, so the notification
// is sent when, and only if, its transaction commits. The statements:
// messages.ts recordOutcomeSql, message-sweeps.ts SETTLE_MANY_SQL and
// RECOVER_SQL, verifications.ts RECORD_CHECK_SQL and SETTLE_SQL.
//
// The reader: one LISTEN session per process (@sms/db listen), whose
// notifications wake the watchers of that id; a notification is a hint to
// read again, never the state itself. On PGlite (one process, no second
// session) there is nothing to listen to: `listening()` is false and the
// watchers poll, as they also do on PostgreSQL while the session is down.
import { type Database, type DatabaseLogger, listen } from "@sms/db";

/** The channel: a notification's payload is the id (`msg_…`, `vrf_…`) that changed. */
export const CHANGES_CHANNEL = "sms_resource_changes";

/** The SQL expression that notifies a change of the row whose id is `idExpr` (void: keep it out of the rows read). */
export const notifyChanged = (idExpr: string) => `pg_notify('${CHANGES_CHANNEL}', ${idExpr})`;

export type ResourceChanges = {
  /** True while notifications arrive (PostgreSQL, its session up); false: watchers must poll. */
  listening(): boolean;
  /**
   * Calls `wake` whenever `id` may have changed (and when notifications may
   * have been missed: a reconnected session); returns the way to stop.
   */
  watch(id: string, wake: () => void): () => void;
  /** Watchers right now (metrics, tests). */
  watching(): number;
  close(): Promise<void>;
};

/** The process's one listener on CHANGES_CHANNEL (none on PGlite). */
export function resourceChanges(db: Database, logger?: DatabaseLogger): ResourceChanges {
  const watchers = new Map<string, Set<() => void>>();
  let count = 0;
  const wakeAll = () => {
    for (const set of watchers.values()) for (const wake of set) wake();
  };
  const listener = listen(db, {
    channel: CHANGES_CHANNEL,
    onNotify(id) {
      const set = watchers.get(id);
      if (set) for (const wake of set) wake();
    },
    onReconnect: wakeAll,
    ...(logger ? { logger } : {}),
  });
  return {
    listening: () => listener?.listening() === true,
    watch(id, wake) {
      let set = watchers.get(id);
      if (!set) {
        set = new Set();
        watchers.set(id, set);
      }
      set.add(wake);
      count += 1;
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        count -= 1;
        set.delete(wake);
        if (set.size === 0 && watchers.get(id) === set) watchers.delete(id);
      };
    },
    watching: () => count,
    close: async () => {
      await listener?.close();
    },
  };
}
