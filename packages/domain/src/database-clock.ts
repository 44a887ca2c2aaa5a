// The service's clock is the database's (issue 27, finding 3). Several
// instances compare timestamps that others wrote: a queued message's age (the
// recovery sweep), a limit's window, a key's 24 hours. On each instance's own
// clock, one instance 120 s ahead swept the others' sends in flight and
// admitted a second minute's worth. So every instance reads the database's
// `now()` when it reaches the database and every CLOCK_SYNC_INTERVAL_MS after,
// keeps the difference to its own clock, and answers now() as its own clock
// plus that difference. Every timestamp it writes and every comparison it
// makes are then on the database's time, to within half a round trip of the
// last reading plus what its own clock drifted since (milliseconds; a step of
// the local clock is corrected at the next reading). Until the first reading
// succeeds, and while readings fail, the last difference (at first none)
// stands.
import type { Clock, Logger } from "./ports.ts";
import { systemClock } from "./ports.ts";
import type { DatabaseTimeStore } from "./store/database-time.ts";

/** How often an instance reads the database's time again. */
export const CLOCK_SYNC_INTERVAL_MS = 10_000;
/** A difference larger than this is logged (once per change of more than this). */
const NOTABLE_SKEW_MS = 1_000;

export type DatabaseClock = Clock & {
  /** Reads the database's time once; false (and the last difference kept) when it could not. */
  sync(): Promise<boolean>;
  /** Reads it again every `intervalMs` until stop(). */
  start(intervalMs?: number): void;
  stop(): void;
  /** The database's time minus this instance's, as last read (null: not read yet). */
  offsetMs(): number | null;
};

export function createDatabaseClock(deps: {
  store: { time: Pick<DatabaseTimeStore, "now"> };
  /** This instance's own wall clock (default: the system's). */
  local?: Clock;
  logger?: Pick<Logger, "warn">;
}): DatabaseClock {
  const local = deps.local ?? systemClock;
  let offset: number | null = null;
  let logged = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const sync = async (): Promise<boolean> => {
    try {
      const before = local.now().getTime();
      const database = (await deps.store.time.now()).getTime();
      const after = local.now().getTime();
      offset = database - (before + after) / 2;
      if (Math.abs(offset) > NOTABLE_SKEW_MS && Math.abs(offset - logged) > NOTABLE_SKEW_MS) {
        logged = offset;
        deps.logger?.warn(
          { clock_offset_ms: Math.round(offset) },
          "this instance's clock differs from the database's; deciding on the database's time",
        );
      }
      return true;
    } catch {
      return false;
    }
  };
  return {
    now: () => new Date(local.now().getTime() + (offset ?? 0)),
    sync,
    start(intervalMs = CLOCK_SYNC_INTERVAL_MS) {
      if (timer !== undefined) return;
      timer = setInterval(() => void sync(), intervalMs);
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
    offsetMs: () => offset,
  };
}
