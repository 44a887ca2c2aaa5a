// Whether the read replica is too far behind to read from (read-replica.ts).
//
// Read-your-writes (the domain's store/reads.ts) retries on the primary a by-id
// read the standby does not find while the id is younger than the window; past
// it, the standby's "not found" stands. So a standby that lacks writes older
// than the window would answer 404 for rows that exist. This watch tells when
// that can happen: the standby lacks WAL the primary wrote more than the window
// ago. Reads then go to the primary until it has caught up.
//
// Measured by replicationLagSeconds (server-status.ts): 0 when the standby has
// replayed everything the primary had written when asked (a standby whose
// replay is paused but which lacks nothing is not behind, however old its last
// replayed transaction is); else the age of the last transaction it replayed,
// which bounds from above the age of the oldest write it lacks. The bound is
// tightened by the last measurement that found it caught up: what it lacks was
// written after that. Between measurements, a standby found behind is taken to
// fall further behind at the clock's pace (nothing says it replays meanwhile),
// so a read never waits for a measurement to see it cross the window.
//
// One measurement at most per `checkEveryMs`, by the read that finds the last
// one stale (the others wait for the same one): an idle instance asks nothing.
// A measurement that fails (the standby is unreachable: the breaker's business)
// leaves the last answer standing.

export type ReplicaLagState =
  /** The standby lacks nothing the window could hide, or the lag is unknown. */
  | { behind: false }
  /** It lacks WAL older than the window: reads go to the primary. */
  | { behind: true; lagMs: number };

export type ReplicaLagWatch = {
  /** Measures when the last measurement is stale, then says whether the standby is behind now. */
  check(): Promise<ReplicaLagState>;
  /** The answer of the last measurement, carried forward to now, without measuring. */
  current(): ReplicaLagState;
};

export type ReplicaLagWatchOptions = {
  /** Seconds of replay lag (replicationLagSeconds): 0 caught up, null not a standby. May throw. */
  measure(): Promise<number | null>;
  /** The read-your-writes window: behind is lacking WAL older than this. */
  windowMs: number;
  /** The longest a measurement is relied on before the next read measures again (less than the window). */
  checkEveryMs: number;
  /** A monotonic clock in ms. */
  monotonicMs(): number;
  /** Once when the standby falls behind, once when it has caught up again (not per read). */
  onChange?(state: ReplicaLagState): void;
};

/** How often a read replica's lag is measured by default: well inside any window worth having. */
export function lagCheckInterval(windowMs: number): number {
  return Math.max(1, Math.min(1_000, Math.floor(windowMs / 4)));
}

export function watchReplicaLag(options: ReplicaLagWatchOptions): ReplicaLagWatch {
  const { measure, windowMs, checkEveryMs, monotonicMs: now, onChange = () => {} } = options;
  let measuredAt = Number.NEGATIVE_INFINITY;
  /** When the latest measurement that found the standby caught up started (it lacked nothing older). */
  let caughtUpAt = Number.NEGATIVE_INFINITY;
  /** Since when the standby lacks WAL (null: it lacked nothing at the last measurement). */
  let missingSince: number | null = null;
  let measuring: Promise<void> | null = null;
  let reported = false;

  const refresh = async () => {
    const started = now();
    try {
      const lagSeconds = await measure();
      if (lagSeconds === null || lagSeconds <= 0) {
        missingSince = null;
        if (lagSeconds !== null) caughtUpAt = started;
      } else {
        missingSince = Math.max(started - lagSeconds * 1000, caughtUpAt);
      }
    } catch {
      // Unknown: the last answer stands.
    } finally {
      measuredAt = started;
    }
  };

  const current = (): ReplicaLagState => {
    const state: ReplicaLagState =
      missingSince !== null && now() - missingSince > windowMs
        ? { behind: true, lagMs: now() - missingSince }
        : { behind: false };
    if (state.behind !== reported) {
      reported = state.behind;
      onChange(state);
    }
    return state;
  };

  return {
    async check() {
      if (now() - measuredAt >= checkEveryMs) {
        measuring ??= refresh().finally(() => {
          measuring = null;
        });
        await measuring;
      }
      return current();
    },
    current,
  };
}
