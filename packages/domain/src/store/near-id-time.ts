// Reads of one message by id that touch one month, not every month kept (and,
// at the end, statements on one message whose creation time is known:
// statementInMonth).
// `messages` and `message_events` are partitioned by month on the message's
// creation time, and their primary keys begin with the id, so a lookup by id
// alone probes every month's index: one probe more for every month of history
// (docs/scaling.md). The id begins with its creation time (@sms/crypto newId)
// and `created_at` is set at the same moment, so the read is first made
// bounded to the month of the id's time (two months within a day of a month's
// end or start), and PostgreSQL plans it over that month's partition alone.
//
// The bound is in the statement's text, as constants, not parameters: with
// parameters PostgreSQL can only prune when each execution starts, its generic
// plan costs every month, and it went on planning every read instead (a read
// cost PostgreSQL 0.078 ms instead of 0.044 on a database of five months;
// bench/log/2026-11-27.md#a-read-by-id-reads-one-month-2026-11-27-afternoon). Each month is one more distinct statement, prepared once per
// connection, so only ids of the last two years (and none from the future) get
// a bound: an older id is read over every month, as before. The constants come
// from a Date, never from the caller's text.
//
// A read that finds nothing is made again without the bound, so a row whose
// creation time is far from its id's (a clock set wrong, a test's injected
// clock) is still found; only a lookup of an id that does not exist (or has no
// row) pays for both.
import { idTimestamp } from "@sms/crypto";
import type { Sql } from "@sms/db";
import { createCache } from "../cache.ts";

/** How far a row's creation time may be from its id's and still be found by the bounded read. */
const ID_TIME_MARGIN_MS = 86_400_000;

/**
 * How old an id's time may be and still get a bound: two years. Every distinct month is one more statement,
 * prepared on every connection that runs it, so the bounded reads are kept to the months an integrator reads
 * (and a made-up id cannot make a statement for each of the thousands of months an id's time can say). An older
 * id is read without the bound, over every month, as all reads were before.
 */
const BOUNDED_PAST_MS = 2 * 366 * 86_400_000;

/** The first instant of the month `time` is in, or of the month after it (`after`), UTC. */
function monthStart(time: number, after = false): Date {
  const at = new Date(time);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + (after ? 1 : 0), 1));
}

/**
 * `[from, to)`: the whole months that hold every instant within the margin of the time in `id`; null for an id
 * without a time, or with one more than the margin after `now` (no row has one: ids are minted at their row's
 * creation) or more than BOUNDED_PAST_MS before it.
 */
function monthsNear(id: string, now: number): { from: Date; to: Date } | null {
  const time = idTimestamp(id);
  if (time === null || time > now + ID_TIME_MARGIN_MS || time < now - BOUNDED_PAST_MS) return null;
  return { from: monthStart(time - ID_TIME_MARGIN_MS), to: monthStart(time + ID_TIME_MARGIN_MS, true) };
}

/** `column` (a partition key) within `[from, to)`, as constants. */
function within(column: string, months: { from: Date; to: Date }): string {
  return `${column} >= TIMESTAMPTZ '${months.from.toISOString()}' AND ${column} < TIMESTAMPTZ '${months.to.toISOString()}'`;
}

/** Bounded statements kept per reader: at most two a month of BOUNDED_PAST_MS, and those of the month ahead. */
const MAX_BOUNDED_STATEMENTS = 64;

/**
 * The text of a statement bounded to `months`, made by `build` (given `column` within them, as constants) once
 * and kept: at most MAX_BOUNDED_STATEMENTS, the oldest made dropped first.
 */
function boundedTexts<T>(build: (bound: string) => T, column: string) {
  const texts = createCache<number, T>({
    namespace: "bounded_statements",
    maxEntries: MAX_BOUNDED_STATEMENTS,
  });
  return (months: { from: Date; to: Date }): T => {
    // Two months at most, so the first month and the count name the window.
    const key = months.from.getTime() * 4 + ((months.to.getUTCMonth() - months.from.getUTCMonth() + 12) % 12);
    let text = texts.get(key, 0);
    if (text === undefined) {
      text = build(within(column, months));
      texts.set(key, text, 0);
    }
    return text;
  };
}

/**
 * A read by id: `statement` (a SELECT … WHERE whose parameters are `params`, the id among them), run first with
 * `column` bounded to the months near the id's time, and as it is when that returns no row or the id carries no
 * time; `orderBy`, when given, ends both. Each bounded statement's text is made once and kept (the database
 * layer names statements by their text).
 */
export function readerNearIdTime(statement: string, options: { column?: string; orderBy?: string } = {}) {
  const order = options.orderBy === undefined ? "" : ` ORDER BY ${options.orderBy}`;
  const unbounded = `${statement}${order}`;
  const boundedText = boundedTexts(
    (bound) => `${statement} AND ${bound}${order}`,
    options.column ?? "created_at",
  );
  return async <Row>(sql: Sql, id: string, params: readonly unknown[]): Promise<Row[]> => {
    const months = monthsNear(id, Date.now());
    if (months !== null) {
      const rows = await sql.query<Row>(boundedText(months), params);
      if (rows.length > 0) return rows;
    }
    return sql.query<Row>(unbounded, params);
  };
}

/**
 * Reads by id of many rows at once: `statement` (a SELECT … WHERE whose parameter $1 is the ids, `= ANY($1)`),
 * run once for each window of months the ids' times fall in (one, nearly always), bounded as readerNearIdTime
 * bounds one id, and once unbounded for the ids without a bounded window. An id a bounded read did not find is
 * not looked for again here: the caller reads it alone (readerNearIdTime), as a row far from its id's time is.
 */
export function readerManyNearIdTime(statement: string, options: { column?: string } = {}) {
  const boundedText = boundedTexts((bound) => `${statement} AND ${bound}`, options.column ?? "created_at");
  return async <Row>(sql: Sql, ids: readonly string[]): Promise<{ rows: Row[]; bounded: Set<string> }> => {
    const now = Date.now();
    const windows = new Map<string, { months: { from: Date; to: Date } | null; ids: string[] }>();
    for (const id of new Set(ids)) {
      const months = monthsNear(id, now);
      const key = months === null ? "" : `${months.from.getTime()}:${months.to.getTime()}`;
      const window = windows.get(key) ?? { months, ids: [] };
      window.ids.push(id);
      windows.set(key, window);
    }
    const rows: Row[] = [];
    const bounded = new Set<string>();
    for (const { months, ids: windowIds } of windows.values()) {
      const text = months === null ? statement : boundedText(months);
      rows.push(...(await sql.query<Row>(text, [windowIds])));
      if (months !== null) for (const id of windowIds) bounded.add(id);
    }
    return { rows, bounded };
  };
}

/**
 * A statement on one message whose creation time the caller knows exactly (a live send's record and release):
 * `build` is given `column` bounded to that time's month, as constants, and the text is kept per month. With
 * the creation time as a parameter alone, PostgreSQL prunes the other months only as each execution starts, so
 * its generic plan costs every month and it planned every execution instead (bench/log/2026-11-27.md#a-live-sends-record-by-its-key-2026-11-27).
 */
export function statementInMonth<T>(build: (bound: string) => T, column = "created_at") {
  const boundedText = boundedTexts(build, column);
  return (createdAt: Date): T =>
    boundedText({ from: monthStart(createdAt.getTime()), to: monthStart(createdAt.getTime(), true) });
}
