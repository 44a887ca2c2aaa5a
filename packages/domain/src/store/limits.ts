// rate_limit_counters: one row per (bucket, window start), shared by every
// instance. A counter only moves while the new total stays within its limit,
// in one atomic statement, so a concurrent burst can never overshoot.
import type { Sql } from "@sms/db";

/**
 * The counter's one atomic step, as SQL: adds `cost` to the (bucket, window
 * start) row only while the total stays within `limit`, RETURNING the new
 * count (no row: refused). The arguments are the statement's placeholders;
 * `from` names a CTE whose rows the step depends on (none: no step), for a
 * statement that counts only what it also claimed (idempotency.claimCounted).
 */
export function consumeStepSql(
  at: { bucket: string; start: string; cost: string; end: string; limit: string },
  from?: string,
): string {
  return `
  INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
  SELECT CAST(${at.bucket} AS text), CAST(${at.start} AS timestamptz), CAST(${at.cost} AS integer),
         CAST(${at.end} AS timestamptz)${from ? ` FROM ${from}` : ""}
  WHERE CAST(${at.cost} AS integer) <= CAST(${at.limit} AS integer)
  ON CONFLICT (bucket, window_start)
  DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
  WHERE rate_limit_counters.count + EXCLUDED.count <= CAST(${at.limit} AS integer)
  RETURNING count`;
}

const CONSUME_SQL = consumeStepSql({ bucket: "$1", start: "$2", cost: "$3", end: "$4", limit: "$5" });

// consume for several counters in one statement, in the order given (the
// order their rows are locked). Each moves only within its own limit; the
// rows RETURNED are the ones that moved. The arrays (bucket, window start,
// cost, end and limit) are the parameters named in `at`; the buckets are
// distinct. With `when`, nothing moves unless that condition holds.
export function consumeManySql(
  at: { buckets: string; starts: string; costs: string; ends: string; limits: string },
  when?: string,
): string {
  return `
  INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
  SELECT c.bucket, c.window_start, c.cost, c.expires_at
  FROM unnest(CAST(${at.buckets} AS text[]), CAST(${at.starts} AS timestamptz[]), CAST(${at.costs} AS integer[]),
              CAST(${at.ends} AS timestamptz[]), CAST(${at.limits} AS integer[]))
       WITH ORDINALITY AS c(bucket, window_start, cost, expires_at, lim, ord)
  WHERE c.cost <= c.lim${when ? ` AND ${when}` : ""}
  ORDER BY c.ord
  ON CONFLICT (bucket, window_start)
  DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
  WHERE rate_limit_counters.count + EXCLUDED.count
        <= (SELECT l.lim FROM unnest(CAST(${at.buckets} AS text[]), CAST(${at.limits} AS integer[])) AS l(bucket, lim)
            WHERE l.bucket = EXCLUDED.bucket)
  RETURNING bucket, count`;
}

const CONSUME_MANY_SQL = consumeManySql({
  buckets: "$1",
  starts: "$2",
  costs: "$3",
  ends: "$4",
  limits: "$5",
});

/** consumeMany's arrays, in consumeManySql's order; throws unless every bucket is distinct. */
export function consumeManyParams(windows: Array<CounterWindow & { cost: number; limit: number }>) {
  if (new Set(windows.map((window) => window.bucket)).size !== windows.length) {
    throw new TypeError("consumeMany: every window needs a bucket of its own");
  }
  return [
    windows.map((window) => window.bucket),
    windows.map((window) => window.start.toISOString()),
    windows.map((window) => window.cost),
    windows.map((window) => window.end.toISOString()),
    windows.map((window) => window.limit),
  ];
}

/** Each window's new count from the rows consumeManySql returned, in the order given; null: not moved. */
export function consumedOf(
  windows: Array<Pick<CounterWindow, "bucket">>,
  rows: Array<{ bucket: string; count: number }>,
): Array<number | null> {
  const moved = new Map(rows.map((row) => [row.bucket, Number(row.count)]));
  return windows.map((window) => moved.get(window.bucket) ?? null);
}

const READ_SQL = `SELECT count FROM rate_limit_counters WHERE bucket = $1 AND window_start = CAST($2 AS timestamptz)`;

const READ_MANY_SQL = `
  SELECT bucket, window_start, count FROM rate_limit_counters
  WHERE bucket = ANY(CAST($1 AS text[])) AND window_start = ANY(CAST($2 AS timestamptz[]))`;

const RELEASE_SQL = `
  UPDATE rate_limit_counters SET count = GREATEST(count - CAST($1 AS integer), 0)
  WHERE bucket = $2 AND window_start = CAST($3 AS timestamptz)`;

const PURGE_EXPIRED_SQL = `
  WITH gone AS (
    DELETE FROM rate_limit_counters
    WHERE (bucket, window_start) IN (
      SELECT bucket, window_start FROM rate_limit_counters
      WHERE expires_at <= CAST($1 AS timestamptz)
      ORDER BY expires_at
      LIMIT CAST($2 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING bucket
  )
  SELECT count(*)::int AS purged FROM gone`;

export type CounterWindow = { bucket: string; start: Date; end: Date };

export function limitStore(sql: Sql) {
  return {
    /**
     * Adds `cost` to the window's counter if the total stays within `limit`.
     * Returns the new total, or null when it would not (nothing changes).
     */
    async consume(window: CounterWindow, cost: number, limit: number): Promise<number | null> {
      const [row] = await sql.query<{ count: number }>(CONSUME_SQL, [
        window.bucket,
        window.start,
        cost,
        window.end,
        limit,
      ]);
      return row ? Number(row.count) : null;
    },

    /**
     * `consume` for several windows in one statement (one round trip), in
     * the order given: each window's new total, or null where it would pass
     * its limit. Unlike one `consume` after another, every other window moves
     * even when one is refused: the caller rolls back its transaction on any
     * null. The buckets must be distinct.
     */
    async consumeMany(
      windows: Array<CounterWindow & { cost: number; limit: number }>,
    ): Promise<Array<number | null>> {
      const rows = await sql.query<{ bucket: string; count: number }>(
        CONSUME_MANY_SQL,
        consumeManyParams(windows),
      );
      return consumedOf(windows, rows);
    },

    /** The window's counter as committed (0 when it has none). */
    async read(bucket: string, windowStart: Date): Promise<number> {
      const [row] = await sql.query<{ count: number }>(READ_SQL, [bucket, windowStart]);
      return Number(row?.count ?? 0);
    },

    /** Several windows' counters in one lock-free read, in the order given (0 when absent). */
    async readMany(windows: Array<Pick<CounterWindow, "bucket" | "start">>): Promise<number[]> {
      const rows = await sql.query<{ bucket: string; window_start: Date; count: number }>(READ_MANY_SQL, [
        windows.map((window) => window.bucket),
        windows.map((window) => window.start.toISOString()),
      ]);
      return windows.map((window) => {
        const row = rows.find(
          (candidate) =>
            candidate.bucket === window.bucket &&
            new Date(candidate.window_start).getTime() === window.start.getTime(),
        );
        return Number(row?.count ?? 0);
      });
    },

    /** Gives `amount` back to a window's counter (never below 0). */
    async release(bucket: string, windowStart: Date, amount: number): Promise<void> {
      await sql.query(RELEASE_SQL, [amount, bucket, windowStart]);
    },

    /** Deletes one batch of counters whose window is over; returns how many. */
    async purgeExpired(now: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_EXPIRED_SQL, [now, batchSize]);
      return Number(row?.purged ?? 0);
    },
  };
}

export type LimitStore = ReturnType<typeof limitStore>;
