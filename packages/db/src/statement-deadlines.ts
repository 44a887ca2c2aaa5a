// Client-side deadlines of a PostgreSQL pool's statements (CreateDatabaseOptions.queryTimeoutMs).
//
// pg's own `query_timeout` arms a timer for every statement, and pg-pool's idle
// timeout another for every release: under Deno both are Node-compat timers, a
// tenth of what a read allocated and a few percent of its CPU
// (bench/log/2026-11-27.md#what-a-request-costs-the-service-and-what-the-measurement-cost-2026-11-27).
// Here one interval timer watches every statement in flight, and runs only while there are any. A statement past its
// deadline has its connection destroyed: pg fails the statement (and anything
// queued on that connection), the statement reports DatabaseUnavailableError
// `timeout`, and the connection is never reused. The deadline is checked every
// `tickMs` (a tenth of the timeout, 10-250 ms), so a statement fails at most
// that much after it.
import type pg from "pg";
import { DatabaseUnavailableError } from "./unavailable.ts";

type InFlight = { deadline: number; client: pg.PoolClient; timedOut: boolean };

export type StatementDeadlines = {
  /** Runs `statement` on `client`; past the deadline the client is destroyed and this throws `timeout`. */
  run<T>(client: pg.PoolClient, statement: () => Promise<T>): Promise<T>;
  /** Statements being watched (tests). */
  inFlight(): number;
};

/** Ends a connection from this side, as pg's query_timeout would have given up on it. */
function destroyConnection(client: pg.PoolClient): void {
  (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
}

export function statementDeadlines(timeoutMs: number): StatementDeadlines {
  const inFlight = new Set<InFlight>();
  const tickMs = Math.min(250, Math.max(10, Math.floor(timeoutMs / 10)));
  let timer: ReturnType<typeof setInterval> | undefined;

  function sweep(): void {
    const now = performance.now();
    for (const entry of inFlight) {
      if (entry.deadline > now) continue;
      entry.timedOut = true;
      inFlight.delete(entry);
      destroyConnection(entry.client);
    }
    if (inFlight.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return {
    async run(client, statement) {
      const entry: InFlight = { deadline: performance.now() + timeoutMs, client, timedOut: false };
      inFlight.add(entry);
      if (timer === undefined) {
        timer = setInterval(sweep, tickMs);
        // The statements' own sockets keep the process alive, not this timer (Node; Deno's interval is a number).
        (timer as { unref?: () => void }).unref?.();
      }
      try {
        return await statement();
      } catch (error) {
        if (entry.timedOut) throw new DatabaseUnavailableError("timeout", error);
        throw error;
      } finally {
        inFlight.delete(entry);
      }
    },
    inFlight: () => inFlight.size,
  };
}
