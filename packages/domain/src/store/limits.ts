// rate_limit_counters: one row per (bucket, window start), shared by every
// instance. A counter only moves while the new total stays within its limit,
// in one atomic statement, so a concurrent burst can never overshoot.
import { type AnyStatement, type Param, params, type Sql, sql } from "@sms/db";

/**
 * The named values of a statement's counters: its one counter (`bucket`,
 * `windowStart`, `windowEnd`, `limit`, and `cost` where the statement does not
 * fix it), and several counters as arrays (`buckets` … `limits`, in the order
 * given: consumeManyValues).
 */
export type CounterValues = {
  bucket: string;
  windowStart: Date | string;
  windowEnd: Date | string;
  limit: number;
  cost: number;
  buckets: string[];
  starts: string[];
  costs: number[];
  ends: string[];
  limits: number[];
};
const c = params<CounterValues>();

/**
 * The one "over the limit" rule: a counter moves only while `total` (its
 * count with the step, or the step alone on a new row) stays within `limit`.
 */
const withinLimit = <T extends AnyStatement, L extends AnyStatement>(total: T, limit: L) =>
  sql`${total} <= ${limit}`;

/**
 * The counter claim, written once: each row of `steps` (bucket, window_start,
 * cost, expires_at, lim, ord) adds its cost to its (bucket, window start)
 * counter, in `ord` order (the order the rows are locked), only within the
 * limit (withinLimit; `limitOf` is the limit of EXCLUDED.bucket). It RETURNs
 * the rows that moved, with their new count: a step without a row was refused.
 */
function counterClaim<S extends AnyStatement, L extends AnyStatement>(steps: S, limitOf: L) {
  return sql`
  INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
  SELECT s.bucket, s.window_start, s.cost, s.expires_at FROM (${steps}) AS s
  WHERE ${withinLimit(sql`s.cost`, sql`s.lim`)}
  ORDER BY s.ord
  ON CONFLICT (bucket, window_start)
  DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
  WHERE ${withinLimit(sql`rate_limit_counters.count + EXCLUDED.count`, limitOf)}
  RETURNING bucket, count`;
}

const NOTHING = sql``;

/**
 * The statement's one counter (`bucket`, `windowStart`, `windowEnd`, `limit`)
 * claimed by `cost` (an integer, or an expression over `from`'s row), once
 * for each row of `from` (none: no step), or once without `from`: for a
 * statement that counts only what it also claimed.
 */
export function oneCounterClaim<
  C extends number | AnyStatement | Param,
  F extends AnyStatement = typeof NOTHING,
>(cost: C, from?: F) {
  return counterClaim(
    sql`SELECT CAST(${c.bucket} AS text) AS bucket, CAST(${c.windowStart} AS timestamptz) AS window_start,
           CAST(${cost} AS integer) AS cost, CAST(${c.windowEnd} AS timestamptz) AS expires_at,
           CAST(${c.limit} AS integer) AS lim, 1 AS ord${from ? sql` FROM ${from}` : NOTHING}`,
    sql`CAST(${c.limit} AS integer)`,
  );
}

/**
 * Several counters (the arrays `buckets`, `starts`, `costs`, `ends`,
 * `limits`; distinct buckets) claimed in one statement, in the order given.
 * Each moves only within its own limit. With `when`, nothing moves unless
 * that condition holds.
 */
export function manyCounterClaim<W extends AnyStatement = typeof NOTHING>(when?: W) {
  return counterClaim(
    sql`SELECT u.bucket, u.window_start, u.cost, u.expires_at, u.lim, u.ord
    FROM unnest(CAST(${c.buckets} AS text[]), CAST(${c.starts} AS timestamptz[]), CAST(${c.costs} AS integer[]),
                CAST(${c.ends} AS timestamptz[]), CAST(${c.limits} AS integer[]))
         WITH ORDINALITY AS u(bucket, window_start, cost, expires_at, lim, ord)${when ? sql` WHERE ${when}` : NOTHING}`,
    sql`(SELECT l.lim FROM unnest(CAST(${c.buckets} AS text[]), CAST(${c.limits} AS integer[])) AS l(bucket, lim)
            WHERE l.bucket = EXCLUDED.bucket)`,
  );
}

/**
 * A test send's recipient counters (issue 53, item 3): its minute and UTC
 * day, counted on buckets of their own (BUCKETS.testRecipientMinute/Day) so
 * that test sends never use up a live key's allowance, and never refusing.
 * `minute`/`day` name the buckets and `limits` are the live limits they are
 * reported against; the minute is the statement's counter window
 * (`windowStart`, `windowEnd`), the day is `dayStart`…`dayEnd`.
 */
export type RecipientTally = {
  minute: string;
  day: string;
  dayStart: Date;
  dayEnd: Date;
  limits: { minute: number; day: number };
};

/** recipientTallyCtes' values: a bucket pair per `input` row (null: none), the day and the limits. */
export type TallyValues = {
  tallyMinuteBuckets: Array<string | null>;
  tallyDayBuckets: Array<string | null>;
  tallyDayStart: Date;
  tallyDayEnd: Date;
  tallyMinuteLimit: number;
  tallyDayLimit: number;
};
const t = params<TallyValues>();

/**
 * The recipient tally, written once for the two test-send statements
 * (CLAIM_COUNTED_MANY_SQL, CLAIM_ANSWERED_SQL): `tallied` holds the rows of
 * `input` whose key `idem` claimed, only `when` the statement counted them
 * (its `counted` CTE moved: a refused or replayed send counts nothing), and
 * `tally` adds each recipient's sends to its minute and day counters, with no
 * limit, except that a counter already at its live limit (as the statement's
 * snapshot sees it) is not written again: nothing is left there, whatever
 * comes, so a number a test suite sends to all day costs two index probes, not
 * two row updates (bench/log/2026-12-03.md). It reads `counted`, so the
 * project's minute row is always locked before any recipient row, and those
 * in bucket order: no two statements lock them the other way round. Its
 * columns: TALLY_COLUMNS over TALLY_JOIN.
 */
export function recipientTallyCtes<W extends AnyStatement>(when: W) {
  return sql`tallied AS (
    SELECT u.n, u.minute_bucket, u.day_bucket
    FROM unnest(CAST(${t.tallyMinuteBuckets} AS text[]), CAST(${t.tallyDayBuckets} AS text[]))
         WITH ORDINALITY AS u(minute_bucket, day_bucket, n)
    JOIN input i ON i.n = u.n
    JOIN idem ON idem.id = i.idempotency_id
    WHERE u.minute_bucket IS NOT NULL AND ${when}
  ), tally_steps AS (
    SELECT minute_bucket AS bucket, CAST(${c.windowStart} AS timestamptz) AS window_start,
           CAST(${c.windowEnd} AS timestamptz) AS expires_at, CAST(${t.tallyMinuteLimit} AS integer) AS lim
    FROM tallied
    UNION ALL
    SELECT day_bucket, CAST(${t.tallyDayStart} AS timestamptz), CAST(${t.tallyDayEnd} AS timestamptz),
           CAST(${t.tallyDayLimit} AS integer)
    FROM tallied
  ), tally AS (
    INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
    SELECT s.bucket, s.window_start, count(*)::int, s.expires_at FROM tally_steps AS s
    WHERE NOT EXISTS (
      SELECT 1 FROM rate_limit_counters r
      WHERE r.bucket = s.bucket AND r.window_start = s.window_start AND r.count >= s.lim
    )
    GROUP BY s.bucket, s.window_start, s.expires_at
    ORDER BY s.bucket
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
    RETURNING bucket, count
  )`;
}

/** The join of `input i` to its tally (recipientTallyCtes), for TALLY_COLUMNS. */
export const TALLY_JOIN = sql`LEFT JOIN tallied tl ON tl.n = i.n`;

/**
 * Each row's recipient counters after the statement: null, not tallied; -1,
 * the counter was already at its limit (not written); else its new count.
 */
export const TALLY_COLUMNS = sql`CASE WHEN tl.n IS NOT NULL
      THEN COALESCE((SELECT y.count FROM tally y WHERE y.bucket = tl.minute_bucket), -1) END AS recipient_minute,
    CASE WHEN tl.n IS NOT NULL
      THEN COALESCE((SELECT y.count FROM tally y WHERE y.bucket = tl.day_bucket), -1) END AS recipient_day`;

export type TallyColumns = { recipient_minute: number | null; recipient_day: number | null };

/**
 * A recipient's test sends with this one, this minute and this UTC day; a
 * window already at its live limit before it says the limit (nothing is left
 * there either way).
 */
export type RecipientCount = { minute: number; day: number };

/** recipientTallyCtes' values for claims of one counter window, in the order of `input`. */
export function tallyValues(
  tallies: ReadonlyArray<RecipientTally | undefined>,
  counter: { start: Date; end: Date },
): TallyValues {
  const first = tallies.find((tally) => tally !== undefined);
  return {
    tallyMinuteBuckets: tallies.map((tally) => tally?.minute ?? null),
    tallyDayBuckets: tallies.map((tally) => tally?.day ?? null),
    tallyDayStart: first?.dayStart ?? counter.start,
    tallyDayEnd: first?.dayEnd ?? counter.end,
    tallyMinuteLimit: first?.limits.minute ?? 0,
    tallyDayLimit: first?.limits.day ?? 0,
  };
}

/**
 * Each claimed row's recipient counts, from the counters' new values: a
 * recipient claimed k times in one statement took its counter's last k
 * values, in the order of the rows (as the project's minute does); a counter
 * that was at its limit gives the limit.
 */
export function talliesOf(
  rows: ReadonlyArray<TallyColumns & { claimed: boolean }>,
  tallies: ReadonlyArray<RecipientTally | undefined>,
): Array<RecipientCount | undefined> {
  const times = new Map<string, number>();
  const tallied = (i: number) => {
    const row = rows[i];
    const tally = tallies[i];
    return row?.claimed && tally && row.recipient_minute !== null && row.recipient_day !== null
      ? { tally, minute: Number(row.recipient_minute), day: Number(row.recipient_day) }
      : undefined;
  };
  for (const i of rows.keys()) {
    const bucket = tallied(i)?.tally.minute;
    if (bucket !== undefined) times.set(bucket, (times.get(bucket) ?? 0) + 1);
  }
  const seen = new Map<string, number>();
  return rows.map((_, i) => {
    const found = tallied(i);
    if (!found) return undefined;
    const { tally } = found;
    const rank = (seen.get(tally.minute) ?? 0) + 1;
    seen.set(tally.minute, rank);
    // This row's value of a counter moved by `times` in the statement: its rank among them.
    const back = (times.get(tally.minute) ?? rank) - rank;
    const at = (count: number, limit: number) => (count < 0 ? limit : count - back);
    return { minute: at(found.minute, tally.limits.minute), day: at(found.day, tally.limits.day) };
  });
}

const CONSUME_SQL = oneCounterClaim(c.cost);

const CONSUME_MANY_SQL = manyCounterClaim();

/** consumeMany's arrays (manyCounterClaim's values); throws unless every bucket is distinct. */
export function consumeManyValues(
  windows: Array<CounterWindow & { cost: number; limit: number }>,
): Pick<CounterValues, "buckets" | "starts" | "costs" | "ends" | "limits"> {
  if (new Set(windows.map((window) => window.bucket)).size !== windows.length) {
    throw new TypeError("consumeMany: every window needs a bucket of its own");
  }
  return {
    buckets: windows.map((window) => window.bucket),
    starts: windows.map((window) => window.start.toISOString()),
    costs: windows.map((window) => window.cost),
    ends: windows.map((window) => window.end.toISOString()),
    limits: windows.map((window) => window.limit),
  };
}

/** The one counter's values (oneCounterClaim's), for a window and its limit. */
export function oneCounterValues(window: CounterWindow & { limit: number }) {
  return { bucket: window.bucket, windowStart: window.start, windowEnd: window.end, limit: window.limit };
}

/** Each window's new count from the rows manyCounterClaim returned, in the order given; null: not moved. */
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
      const [row] = await sql.query<{ count: number }>(
        CONSUME_SQL.text,
        CONSUME_SQL.bind({ ...oneCounterValues({ ...window, limit }), cost }),
      );
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
        CONSUME_MANY_SQL.text,
        CONSUME_MANY_SQL.bind(consumeManyValues(windows)),
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
