// An idle pooled connection handed out in the turn of the event loop that asks
// for it.
//
// pg-pool's connect() hands out an idle connection from process.nextTick, and
// Deno runs its next-tick queue once per turn of the event loop, after every
// callback that turn had ready. Under load almost every checkout waited for the
// end of a turn: reads at 32 connections, 85 % of checkouts, about 1 ms each, on
// a read of 5–6 ms (bench/log/2026-11-28.md#an-idle-connection-at-once-2026-11-28). Each such
// checkout also armed and cleared a connectionTimeoutMillis timer.
//
// takeIdle() runs the same pg-pool code without the deferral: when a connection
// is idle and nobody is queued, it queues the caller and pulses pg-pool's queue
// at once, which hands that caller the idle connection exactly as the deferred
// pulse would (the release hook, the `acquire` event, the idle error listener
// removed). Otherwise (nothing idle, someone queued first, the pool ending, or a
// pg-pool whose internals are not the ones this was written against) it returns
// null and the caller uses pool.connect(): its queue, its connect deadline, its
// new connections. database.integration.test.ts pins that the installed pg-pool
// takes this path.
import type pg from "pg";

/** The parts of pg-pool 3.x that its connect() uses for an idle connection. */
type PoolInternals = {
  ending: boolean;
  _idle: unknown[];
  _pendingQueue: Array<{ callback: (error: Error | undefined, client?: pg.PoolClient) => void }>;
  _pulseQueue(): void;
};

function internalsOf(pool: pg.Pool): PoolInternals | null {
  const candidate = pool as unknown as Partial<PoolInternals>;
  return Array.isArray(candidate._idle) &&
    Array.isArray(candidate._pendingQueue) &&
    typeof candidate._pulseQueue === "function"
    ? (candidate as PoolInternals)
    : null;
}

/** An idle connection of `pool` without waiting for the next tick, or null: use pool.connect(). */
export function takeIdle(pool: pg.Pool): Promise<pg.PoolClient> | null {
  const internals = internalsOf(pool);
  if (!internals || internals.ending || internals._idle.length === 0 || internals._pendingQueue.length > 0) {
    return null;
  }
  return new Promise<pg.PoolClient>((resolve, reject) => {
    internals._pendingQueue.push({
      callback: (error, client) =>
        error || !client ? reject(error ?? new Error("no client")) : resolve(client),
    });
    internals._pulseQueue();
  });
}
